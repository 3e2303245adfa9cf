// The worker runtime's spans, read with the OpenTelemetry SDK's in-memory exporter: each claim is a receive
// span, each item's handler a process span that is the child of the receive span it came in, the handler's
// own spans children of its process span, a failing handler's span ERROR with the error's type; nothing is
// recorded without an SDK.
import { context, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorker, FailNow, RetryAfter } from '../../src/worker/worker.js';
import { backendsForThisFile } from '../helpers/backends.js';

const backends = await backendsForThisFile();
const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const LONG = 3_600_000;

beforeAll(() => {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  trace.setGlobalTracerProvider(provider);
});
afterAll(async () => {
  trace.disable();
  context.disable();
  await provider.shutdown();
});

describe.each(backends)('worker spans on $name', (b) => {
  it('receive per claim, process per item as its child, the handler inside', async () => {
    exporter.reset();
    const inst = await b.open();
    try {
      for (let k = 0; k < 3; k++) await inst.work.enqueue({ title: `m${k}`, kind: 'mail', payload: { k } });
      const w = createWorker({
        instance: inst,
        handlers: {
          mail: async (item) => {
            const k = (item.payload as { k: number }).k;
            await trace.getTracer('app').startActiveSpan('send email', async (s) => s.end());
            if (k === 2) throw new FailNow('bounced');
            return { sent: k };
          },
        },
        concurrency: 2,
        leaseMs: LONG,
        pollIntervalMs: 5,
      });
      await w.drain();
      const spans = exporter.getFinishedSpans();
      const receive = spans.filter(
        (s) => s.name === 'receive mail' && s.attributes['messaging.batch.message_count'] !== 0,
      );
      const process = spans.filter((s) => s.name === 'process mail');
      expect(process).toHaveLength(3);
      expect(receive.length).toBeGreaterThanOrEqual(1);
      for (const r of receive) {
        expect(r.kind).toBe(SpanKind.CONSUMER);
        expect(r.attributes).toMatchObject({
          'messaging.operation.type': 'receive',
          'messaging.destination.name': 'mail',
        });
      }
      const receiveIds = new Set(receive.map((r) => r.spanContext().spanId));
      for (const p of process) {
        expect(p.kind).toBe(SpanKind.CONSUMER);
        expect(p.attributes).toMatchObject({
          'messaging.system': 'agentstate',
          'messaging.operation.type': 'process',
          'messaging.destination.name': 'mail',
        });
        // The child of the receive span the item came in, in its trace.
        expect(receiveIds.has(p.parentSpanContext!.spanId)).toBe(true);
        const inner = spans.find(
          (s) => s.name === 'send email' && s.parentSpanContext?.spanId === p.spanContext().spanId,
        );
        expect(inner, `the handler's span inside ${p.attributes['messaging.message.id']}`).toBeDefined();
        expect(inner!.spanContext().traceId).toBe(p.spanContext().traceId);
      }
      const bounced = process.find((p) => p.status.code === SpanStatusCode.ERROR)!;
      expect(bounced.attributes['error.type']).toBe('FailNow');
      expect(process.filter((p) => p.status.code === SpanStatusCode.ERROR)).toHaveLength(1);
      expect(new Set(process.map((p) => p.attributes['messaging.message.id'])).size).toBe(3);
    } finally {
      await inst.close();
    }
  });
});

describe.each(backends)('producer links on $name', (b) => {
  it('each process span (and the receive that took it) links to the span that enqueued its item', async () => {
    exporter.reset();
    const inst = await b.open();
    try {
      // Each producer in a trace of its own, as on another machine; one item enqueued with no span active.
      const producers = new Map<string, string>();
      for (let k = 0; k < 3; k++) {
        await trace.getTracer('app').startActiveSpan(`produce ${k}`, async (span) => {
          const item = await inst.work.enqueue({ title: `p${k}`, kind: 'sync', payload: { k } });
          producers.set(item.id, `${span.spanContext().traceId}/${span.spanContext().spanId}`);
          span.end();
        });
      }
      const orphan = await inst.work.enqueue({ title: 'orphan', kind: 'sync' });
      const w = createWorker({
        instance: inst,
        handlers: { sync: async () => ({ ok: true }) },
        concurrency: 2,
        leaseMs: LONG,
        pollIntervalMs: 5,
      });
      await w.drain();
      const spans = exporter.getFinishedSpans();
      const key = (l: { context: { traceId: string; spanId: string } }) =>
        `${l.context.traceId}/${l.context.spanId}`;
      const process = spans.filter((s) => s.name === 'process sync');
      expect(process).toHaveLength(4);
      for (const p of process) {
        const id = p.attributes['messaging.message.id'] as string;
        if (id === orphan.id) expect(p.links).toEqual([]);
        else {
          expect(p.links.map(key)).toEqual([producers.get(id)]);
          // A link, not a parent: the consumer's trace is its own.
          expect(p.spanContext().traceId).not.toBe(producers.get(id)!.split('/')[0]);
        }
      }
      const received = spans.filter((s) => s.name === 'receive sync').flatMap((r) => r.links.map(key));
      expect(received.sort()).toEqual([...producers.values()].sort());
    } finally {
      await inst.close();
    }
  });
});

describe('worker spans without an SDK', () => {
  it('records nothing', async () => {
    const inst = await backends[0]!.open();
    exporter.reset();
    trace.disable();
    try {
      await inst.work.enqueue({ title: 'quiet', kind: 'mail' });
      await createWorker({
        instance: inst,
        handlers: { mail: async () => 1 },
        leaseMs: LONG,
        pollIntervalMs: 5,
      }).drain();
      expect(exporter.getFinishedSpans()).toEqual([]);
      expect((await inst.work.list({ status: 'done' })).length).toBe(1);
    } finally {
      trace.setGlobalTracerProvider(provider);
      await inst.close();
    }
  });
});

describe.each(backends)('durable-run spans on $name', (b) => {
  it('each step and wait is a span under the process span; a replayed step still has its span, the fn inside it only when it ran', async () => {
    exporter.reset();
    const inst = await b.open();
    try {
      await inst.work.enqueue({ title: 'traced run', kind: 'run', max_attempts: 2 });
      const w = createWorker({
        instance: inst,
        retry: { baseMs: 0 },
        handlers: {
          run: async (_item, ctx) => {
            await ctx.step('call-model', () =>
              trace.getTracer('app').startActiveSpan('model call', (s) => {
                s.end();
                return 'answer';
              }),
            );
            if (ctx.attempt === 1) throw new Error('crash after the step');
            return 'done';
          },
        },
        leaseMs: LONG,
        pollIntervalMs: 5,
      });
      await w.drain();
      const spans = exporter.getFinishedSpans();
      const process = spans.filter((s) => s.name === 'process run');
      const steps = spans.filter((s) => s.name === 'step call-model');
      const calls = spans.filter((s) => s.name === 'model call');
      expect(process).toHaveLength(2);
      expect(steps).toHaveLength(2);
      // The fn ran once: on the first attempt, inside that attempt's step span.
      expect(calls).toHaveLength(1);
      const parentOf = (s: (typeof spans)[number]) => s.parentSpanContext?.spanId;
      expect(parentOf(calls[0]!)).toBe(steps[0]!.spanContext().spanId);
      for (const [k, step] of steps.entries()) {
        expect(parentOf(step)).toBe(process[k]!.spanContext().spanId);
        expect(step.attributes['agentstate.step.name']).toBe('call-model');
      }
    } finally {
      await inst.close();
    }
  });
});

describe.each(backends)('durable-call span names on $name', (b) => {
  it('every durable call of the context is a span named for what it does and its name; a suspended process span says until when', async () => {
    exporter.reset();
    const now = Date.parse('2026-12-06T09:00:00.000Z');
    const inst = await b.open(undefined, { clock: () => now });
    try {
      const all = await inst.work.enqueue({ title: 'every call', kind: 'run', priority: 2 });
      const asker = await inst.work.enqueue({ title: 'asks', kind: 'run', priority: 1 });
      const napper = await inst.work.enqueue({ title: 'naps', kind: 'run' });
      // Sent before the wait: the wait takes it at once.
      await inst.work.signal({ id: all.id, name: 'go', payload: 1, actor: 'ada', actor_kind: 'human' });
      const w = createWorker({
        instance: inst,
        handlers: {
          run: async (item, ctx) => {
            if (item.id === asker.id)
              return ctx.ask('approve', { question: 'Ship it?', options: ['yes', 'no'] });
            if (item.id === napper.id) return ctx.sleepUntil('nap', new Date(now + 3_600_000));
            await ctx.step('plan', () => 1);
            await ctx.sleep('no wait', 0);
            await ctx.sleepUntil('already due', new Date(now - 1));
            await ctx.waitFor('go');
            // Children of a kind no handler takes: the join hands the run back until they end.
            await ctx.spawn('kids', [{ title: 'kid', kind: 'kid' }]);
            return ctx.join('kids');
          },
        },
        concurrency: 1,
        leaseMs: LONG,
        pollIntervalMs: 5,
      });
      await w.drain();
      const spans = exporter.getFinishedSpans();
      const process = new Map(
        spans
          .filter((s) => s.name === 'process run')
          .map((s) => [s.attributes['messaging.message.id'] as string, s]),
      );
      const callsOf = (id: string) =>
        spans
          .filter((s) => s.parentSpanContext?.spanId === process.get(id)!.spanContext().spanId)
          .map((s) => [
            s.name,
            s.attributes['agentstate.step.name'],
            s.attributes['agentstate.work_item.id'],
          ]);
      expect(callsOf(all.id)).toEqual(
        [
          ['step plan', 'plan'],
          ['sleep no wait', 'no wait'],
          ['sleep already due', 'already due'],
          ['wait go', 'go'],
          ['spawn kids', 'kids'],
          ['join kids', 'kids'],
        ].map((c) => [...c, all.id]),
      );
      expect(callsOf(asker.id)).toEqual([['ask approve', 'approve', asker.id]]);
      expect(callsOf(napper.id)).toEqual([['sleep nap', 'nap', napper.id]]);
      // Each was handed back; the process span records until when (the nap's: the time it asked for).
      expect(process.get(napper.id)!.attributes['agentstate.suspended_until']).toBe(
        '2026-12-06T10:00:00.000Z',
      );
      for (const id of [all.id, asker.id])
        expect(process.get(id)!.attributes).toHaveProperty('agentstate.suspended_until');
      for (const id of [all.id, asker.id, napper.id])
        expect(await inst.work.get(id)).toMatchObject({ status: 'pending', lease_owner: null });
    } finally {
      await inst.close();
    }
  });

  it('a failed attempt that will be tried again records the delay on its span; a final failure records none', async () => {
    exporter.reset();
    const inst = await b.open();
    try {
      const again = await inst.work.enqueue({ title: 'again', kind: 'flaky', max_attempts: 3 });
      const last = await inst.work.enqueue({ title: 'last', kind: 'flaky', max_attempts: 1 });
      await createWorker({
        instance: inst,
        handlers: {
          flaky: async () => {
            throw new RetryAfter(5_000);
          },
        },
        leaseMs: LONG,
        pollIntervalMs: 5,
      }).drain();
      const span = (id: string) =>
        exporter
          .getFinishedSpans()
          .find((s) => s.name === 'process flaky' && s.attributes['messaging.message.id'] === id)!;
      expect(span(again.id).attributes['agentstate.retry_in_ms']).toBe(5_000);
      expect(span(last.id).attributes).not.toHaveProperty('agentstate.retry_in_ms');
      expect(span(last.id).status.code).toBe(SpanStatusCode.ERROR);
      expect(await inst.work.get(again.id)).toMatchObject({ status: 'pending', attempts: 1 });
      expect(await inst.work.get(last.id)).toMatchObject({ status: 'failed' });
    } finally {
      await inst.close();
    }
  });
});
