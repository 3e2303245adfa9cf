// Spans of a Workflow SDK World's storage, read with the SDK's in-memory exporter on both backends: every
// events.create is one span `workflow_event <eventType>`, a child of the caller's span, naming the run, the
// event type, the step (its correlation id) and the event id it recorded; a refused event is an error span.
import { context, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { TRACER_NAME } from '../../src/core/tracing.js';
import type { Instance } from '../../src/instance/instance.js';
import { createWorldStorage } from '../../src/workflow-world/storage.js';
import { backendsForThisFile } from '../helpers/backends.js';

const backends = await backendsForThisFile();
const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const contexts = new AsyncLocalStorageContextManager();
const open: Instance[] = [];

beforeAll(() => {
  context.setGlobalContextManager(contexts.enable());
  trace.setGlobalTracerProvider(provider);
});
afterAll(async () => {
  await Promise.all(open.map((i) => i.close()));
  trace.disable();
  context.disable();
  await provider.shutdown();
});
beforeEach(() => exporter.reset());

describe.each(backends)('World storage spans on $name', (b) => {
  it('one span per events.create: the run, the step and the event id; a refusal is an error span', async () => {
    const inst = await b.open();
    open.push(inst);
    const s = createWorldStorage(inst);
    const step = 'step|ü+1 φ';
    const outer = await trace.getTracer('app').startActiveSpan('workflow handler', async (span) => {
      const created = await s.events.create(null, {
        eventType: 'run_created',
        eventData: { deploymentId: 'd', workflowName: 'w', input: new Uint8Array([0]) },
      });
      const runId = created.run!.runId;
      await s.events.create(runId, { eventType: 'run_started' });
      await s.events.create(runId, {
        eventType: 'step_created',
        correlationId: step,
        eventData: { stepName: 'add', input: new Uint8Array([0]) },
      });
      await s.events.create(runId, { eventType: 'step_started', correlationId: step });
      await s.events.create(runId, {
        eventType: 'step_completed',
        correlationId: step,
        eventData: { result: new Uint8Array([1]) },
      });
      // A step the run never created: refused by the rules.
      await expect(
        s.events.create(runId, { eventType: 'step_started', correlationId: 'never' }),
      ).rejects.toThrow();
      span.end();
      return { span, runId };
    });
    const spans = exporter.getFinishedSpans().filter((x) => x.instrumentationScope.name === TRACER_NAME);
    expect(spans.map((x) => x.name)).toEqual([
      'workflow_event run_created',
      'workflow_event run_started',
      'workflow_event step_created',
      'workflow_event step_started',
      'workflow_event step_completed',
      'workflow_event step_started',
    ]);
    for (const x of spans) {
      expect(x.parentSpanContext?.spanId, x.name).toBe(outer.span.spanContext().spanId);
      expect(x.kind).toBe(SpanKind.INTERNAL);
      expect(x.attributes['agentstate.workflow.run_id'], x.name).toBe(outer.runId);
    }
    const completed = spans[4]!;
    expect(completed.attributes).toMatchObject({
      'agentstate.workflow.event_type': 'step_completed',
      'agentstate.workflow.correlation_id': step,
      'agentstate.workflow.event_id': 'evnt_00000000000000000000000005',
    });
    expect(completed.status.code).not.toBe(SpanStatusCode.ERROR);
    const refused = spans[5]!;
    expect(refused.status.code).toBe(SpanStatusCode.ERROR);
    expect(refused.attributes['agentstate.workflow.correlation_id']).toBe('never');
    expect(refused.attributes['agentstate.workflow.event_id']).toBeUndefined();
    expect(refused.attributes['error.type']).toEqual(expect.any(String));
    expect(refused.events.map((e) => e.name)).toEqual(['exception']);
  });
});
