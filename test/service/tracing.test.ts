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

  it('records nothing when no SDK is registered (the API is a no-op)', async () => {
    const inst = await backends[0]!.open();
    try {
      trace.disable();
      await runOperation(inst, 'enqueue', { title: 'quiet', kind: 'k' });
      expect(spans()).toEqual([]);
    } finally {
      trace.setGlobalTracerProvider(provider);
      await inst.close();
    }
  });
});
