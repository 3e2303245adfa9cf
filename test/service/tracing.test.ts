// OpenTelemetry spans of the operation table, read with the SDK's in-memory exporter: names, kinds and
// attributes by the semantic conventions (messaging for the queue, GenAI memory for documents), a caller's
// span as the parent, errors as span status, and nothing recorded once no SDK is registered.
import { context, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { invoke, runOperation } from '../../src/service/invoke.js';
import { TRACER_NAME } from '../../src/service/trace.js';
import { backendsForThisFile } from '../helpers/backends.js';
import { tempDir } from '../helpers/tmp.js';
import { startTestServer } from '../http/helpers.js';
import { connect, refusalOf } from '../mcp/helpers.js';

const backends = await backendsForThisFile();
const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const contexts = new AsyncLocalStorageContextManager();

beforeAll(() => {
  context.setGlobalContextManager(contexts.enable());
  trace.setGlobalTracerProvider(provider);
});
afterAll(async () => {
  trace.disable();
  context.disable();
  await provider.shutdown();
});
beforeEach(() => exporter.reset());

const spans = () => exporter.getFinishedSpans();
const named = (name: string): ReadableSpan => {
  const s = spans().find((x) => x.name === name);
  expect(
    s,
    `span ${name} in ${spans()
      .map((x) => x.name)
      .join(', ')}`,
  ).toBeDefined();
  return s!;
};

describe.each(backends)('spans of the operation table on $name', (b) => {
  it('the queue as messaging, documents as GenAI memory, children of the caller span', async () => {
    const inst = await b.open();
    try {
      const tracer = trace.getTracer('agent');
      const outer = await tracer.startActiveSpan('agent step', async (span) => {
        const item = (await runOperation(inst, 'enqueue', { title: 'compile', kind: 'build' })) as {
          id: string;
        };
        const got = (await runOperation(inst, 'claim', { kind: 'build', worker: 'w1' })) as {
          id: string;
          attempts: number;
        };
        await runOperation(inst, 'resolve', {
          id: got.id,
          worker: 'w1',
          attempt: got.attempts,
          status: 'done',
        });
        await runOperation(inst, 'commit', {
          kind: 'json',
          id: 'plan',
          expected_version: 0,
          body: { steps: 1 },
          actor_kind: 'model',
          provenance: { model_id: 'm', run_id: 'run-42', step_id: 's1', input_hash: 'sha256:00' },
        });
        await runOperation(inst, 'get_document', { kind: 'json', id: 'plan' });
        await runOperation(inst, 'count_items', {});
        span.end();
        return { span, item };
      });
      const publish = named('publish build');
      expect(publish.kind).toBe(SpanKind.PRODUCER);
      expect(publish.attributes).toMatchObject({
        'messaging.system': 'agentstate',
        'messaging.operation.name': 'publish',
        'messaging.operation.type': 'send',
        'messaging.destination.name': 'build',
        'messaging.message.id': outer.item.id,
        'agentstate.operation': 'enqueue',
      });
      const receive = named('receive build');
      expect(receive.kind).toBe(SpanKind.CONSUMER);
      expect(receive.attributes).toMatchObject({
        'messaging.operation.type': 'receive',
        'messaging.message.id': outer.item.id,
      });
      // resolve names only the item: the destination comes from the item it settled.
      const settle = named('settle build');
      expect(settle.kind).toBe(SpanKind.CLIENT);
      expect(settle.attributes).toMatchObject({
        'messaging.operation.name': 'settle',
        'messaging.message.id': outer.item.id,
      });
      const update = named('update_memory json');
      expect(update.attributes).toMatchObject({
        'gen_ai.operation.name': 'update_memory',
        'gen_ai.conversation.id': 'run-42',
        'agentstate.document.id': 'plan',
        'agentstate.document.version': 1,
      });
      expect(named('search_memory json').attributes['gen_ai.operation.name']).toBe('search_memory');
      expect(named('count_items').kind).toBe(SpanKind.INTERNAL);
      // Every operation span is a child of the caller's span, in its trace.
      const parent = outer.span.spanContext();
      for (const s of spans().filter((x) => x.instrumentationScope.name === TRACER_NAME)) {
        expect(s.spanContext().traceId, s.name).toBe(parent.traceId);
        expect(s.parentSpanContext?.spanId, s.name).toBe(parent.spanId);
        expect(s.status.code, s.name).not.toBe(SpanStatusCode.ERROR);
      }
      expect(spans().filter((x) => x.instrumentationScope.name === TRACER_NAME)).toHaveLength(6);
    } finally {
      await inst.close();
    }
  });
});

describe.each(backends)('W3C trace context on work items on $name', (b) => {
  it('an item carries its publish span; the receive in another trace links to it; verify agrees', async () => {
    const inst = await b.open();
    try {
      const tracer = trace.getTracer('agent');
      const item = (await tracer.startActiveSpan('producer step', async (span) => {
        const it = await runOperation(inst, 'enqueue', { title: 'carry | ünïcode +', kind: 'mail' });
        span.end();
        return it;
      })) as { id: string; traceparent: string | null };
      const publish = named('publish mail');
      const pc = publish.spanContext();
      expect(item.traceparent).toBe(`00-${pc.traceId}-${pc.spanId}-01`);
      exporter.reset();
      // The consumer runs in a trace of its own: the receive links to the producer, it is not its child.
      const got = (await tracer.startActiveSpan('consumer step', async (span) => {
        const r = await runOperation(inst, 'claim', { kind: 'mail', worker: 'w1' });
        span.end();
        return r;
      })) as { id: string; traceparent: string };
      expect(got.traceparent).toBe(item.traceparent);
      const receive = named('receive mail');
      expect(receive.spanContext().traceId).not.toBe(pc.traceId);
      expect(receive.links.map((l) => l.context.spanId)).toEqual([pc.spanId]);
      expect(receive.links[0]!.context.traceId).toBe(pc.traceId);
      // claim_many links to each item's producer, once per item that carries one.
      await runOperation(inst, 'enqueue', { title: 'a', kind: 'batch' });
      const given = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
      await runOperation(inst, 'enqueue', { title: 'b', kind: 'batch', traceparent: given });
      trace.disable();
      await runOperation(inst, 'enqueue', { title: 'c (no SDK)', kind: 'batch' });
      trace.setGlobalTracerProvider(provider);
      exporter.reset();
      const many = (await runOperation(inst, 'claim_many', {
        kind: 'batch',
        worker: 'w2',
        limit: 5,
      })) as Array<{
        traceparent: string | null;
      }>;
      expect(many.map((x) => x.traceparent === null)).toEqual([false, false, true]);
      expect(many[1]!.traceparent).toBe(given);
      const links = named('receive batch').links.map((l) => `${l.context.traceId}-${l.context.spanId}`);
      expect(links).toEqual([
        many[0]!.traceparent!.slice(3, 52),
        '0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331',
      ]);
      expect((await inst.events.verify()).ok).toBe(true);
    } finally {
      await inst.close();
    }
  });

  it('a direct library call carries the caller span; a bad traceparent writes nothing', async () => {
    const inst = await b.open();
    try {
      const tracer = trace.getTracer('agent');
      const { item, sc } = await tracer.startActiveSpan('library step', async (span) => {
        const it = await inst.work.enqueue({ title: 'direct' });
        span.end();
        return { item: it, sc: span.spanContext() };
      });
      expect(item.traceparent).toBe(`00-${sc.traceId}-${sc.spanId}-01`);
      for (const bad of [
        'not a traceparent',
        '00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01',
        '01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
        '00-00000000000000000000000000000000-b7ad6b7169203331-01',
        '00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01',
        '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01\n',
        42,
      ]) {
        await expect(
          runOperation(inst, 'enqueue', { title: 'bad', traceparent: bad }),
          JSON.stringify(bad),
        ).rejects.toMatchObject({ code: 'INVALID_INPUT', details: { field: 'traceparent' } });
      }
      expect(await inst.work.list({})).toHaveLength(1);
      // null: explicitly none, even inside a span.
      const none = await tracer.startActiveSpan('s', async (span) => {
        const it = await inst.work.enqueue({ title: 'untraced', traceparent: null });
        span.end();
        return it;
      });
      expect(none.traceparent).toBeNull();
    } finally {
      await inst.close();
    }
  });
});

describe('spans (SQLite)', () => {
  it('a refused operation ends its span with ERROR and the error code', async () => {
    const inst = await backends[0]!.open();
    try {
      await expect(runOperation(inst, 'claim', { lease_ms: -1 })).rejects.toMatchObject({
        code: 'INVALID_INPUT',
      });
      await expect(runOperation(inst, 'get_item', { id: 'wi_none' })).rejects.toMatchObject({
        code: 'NOT_FOUND',
      });
      const [claim, get] = [named('receive'), named('get_item')];
      expect(claim.status.code).toBe(SpanStatusCode.ERROR);
      expect(claim.attributes['error.type']).toBe('INVALID_INPUT');
      expect(claim.events.map((e) => e.name)).toEqual(['exception']);
      expect(get.attributes['error.type']).toBe('NOT_FOUND');
    } finally {
      await inst.close();
    }
  });

  it('invoke (the CLI and workflows) makes the same spans', async () => {
    const dir = `${tempDir('agentstate-trace-')}/i`;
    await invoke('enqueue', { title: 'x', kind: 'mail' }, { instance: { dir }, env: {} }).catch(async () => {
      await invoke('scaffold', {}, { instance: { dir }, env: {} });
      await invoke('enqueue', { title: 'x', kind: 'mail' }, { instance: { dir }, env: {} });
    });
    expect(spans().some((s) => s.name === 'publish mail' && s.status.code !== SpanStatusCode.ERROR)).toBe(
      true,
    );
  });

  it("over HTTP, a caller's traceparent header is the parent of the operation's span", async () => {
    const s = await startTestServer(['ops']);
    try {
      const caller = { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7' };
      const r = await s.call('POST', '/api/v1/enqueue', {
        body: { title: 'from afar', kind: 'remote' },
        query: { instance: 'h/ops' },
        headers: { traceparent: `00-${caller.traceId}-${caller.spanId}-01` },
      });
      expect(r.status).toBe(200);
      const publish = named('publish remote');
      expect(publish.spanContext().traceId).toBe(caller.traceId);
      expect(publish.parentSpanContext?.spanId).toBe(caller.spanId);
      // The item carries the publish span (in the caller's trace), not the caller's own.
      expect(r.json.traceparent).toBe(`00-${caller.traceId}-${publish.spanContext().spanId}-01`);
      // A header that is not a traceparent is ignored: a root span, the request served.
      exporter.reset();
      const bad = await s.call('POST', '/api/v1/enqueue', {
        body: { title: 'noise', kind: 'remote' },
        query: { instance: 'h/ops' },
        headers: { traceparent: '00-zz-not-hex' },
      });
      expect(bad.status).toBe(200);
      expect(named('publish remote').parentSpanContext).toBeUndefined();
    } finally {
      await s.close();
    }
  });

  it('over MCP (the official client), params._meta.traceparent is the parent; a model cannot set it', async () => {
    const inst = await backends[0]!.open();
    const c = await connect(inst);
    try {
      const caller = { traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331' };
      const r = await c.client.callTool({
        name: 'enqueue',
        arguments: { title: 'from a host', kind: 'hosted' },
        _meta: { traceparent: `00-${caller.traceId}-${caller.spanId}-01` },
      });
      expect(r.isError).not.toBe(true);
      const publish = named('publish hosted');
      expect(publish.spanContext().traceId).toBe(caller.traceId);
      expect(publish.parentSpanContext?.spanId).toBe(caller.spanId);
      const list = await c.client.listTools();
      const enqueue = list.tools.find((t) => t.name === 'enqueue')!;
      expect(Object.keys(enqueue.inputSchema.properties ?? {})).not.toContain('traceparent');
      const forged = await c.client.callTool({
        name: 'enqueue',
        arguments: { title: 'forged', traceparent: `00-${caller.traceId}-${caller.spanId}-01` },
      });
      expect(refusalOf(forged)).toMatchObject({ code: 'INVALID_INPUT', field: 'traceparent' });
      expect(await inst.work.list({})).toHaveLength(1);
    } finally {
      await c.close();
      await inst.close();
    }
  });

  it('records nothing when no SDK is registered (the API is a no-op)', async () => {
    const inst = await backends[0]!.open();
    try {
      trace.disable();
      const quiet = (await runOperation(inst, 'enqueue', { title: 'quiet', kind: 'k' })) as {
        traceparent: string | null;
      };
      expect(spans()).toEqual([]);
      expect(quiet.traceparent).toBeNull();
    } finally {
      trace.setGlobalTracerProvider(provider);
      await inst.close();
    }
  });
});
