// OpenTelemetry spans of the operation table: every run of an operation (whichever edge: CLI, HTTP, MCP,
// workflow, library runOperation) is one span, through @opentelemetry/api only, so without an SDK registered
// it is the API's no-op. Named and attributed by the semantic conventions: the queue's operations as
// messaging (enqueue publishes, claim receives, resolve and release settle; the destination is the item's
// kind), the document operations as GenAI memory operations (update_memory, search_memory, delete_memory;
// gen_ai.conversation.id from the provenance's run id), any other by its name. A span is active while the
// operation runs, so a caller's span is its parent.
import type { Attributes, Span, SpanKind } from '@opentelemetry/api';
import {
  messagingAttributes,
  otelApi,
  producerLinks,
  SPAN_KIND,
  SPAN_STATUS_ERROR,
  TRACER_NAME,
} from '../core/tracing.js';
import { isAgentStateError } from '../errors.js';

export { TRACER_NAME };

const MESSAGING: Record<string, { name: string; type: string; kind: SpanKind }> = {
  enqueue: { name: 'publish', type: 'send', kind: SPAN_KIND.PRODUCER },
  claim: { name: 'receive', type: 'receive', kind: SPAN_KIND.CONSUMER },
  claim_many: { name: 'receive', type: 'receive', kind: SPAN_KIND.CONSUMER },
  resolve: { name: 'settle', type: 'settle', kind: SPAN_KIND.CLIENT },
  release: { name: 'settle', type: 'settle', kind: SPAN_KIND.CLIENT },
};

const MEMORY: Record<string, string> = {
  commit: 'update_memory',
  apply: 'update_memory',
  fork: 'update_memory',
  get_document: 'search_memory',
  list_documents: 'search_memory',
  history: 'search_memory',
  diff: 'search_memory',
  prune: 'delete_memory',
};

const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/** The span's name, kind and attributes for operation `name` with input `input` (before it runs). */
export function spanOf(
  name: string,
  input: unknown,
): { name: string; kind: SpanKind; attributes: Attributes } {
  const i = (input !== null && typeof input === 'object' ? input : {}) as Record<string, unknown>;
  const attributes: Attributes = { 'agentstate.operation': name };
  const m = MESSAGING[name];
  if (m) {
    const destination = str(i.kind);
    Object.assign(attributes, messagingAttributes(m.name as 'publish', destination, str(i.id)));
    return { name: destination ? `${m.name} ${destination}` : m.name, kind: m.kind, attributes };
  }
  const memory = MEMORY[name];
  if (memory) {
    const kind = str(i.kind);
    attributes['gen_ai.operation.name'] = memory;
    if (kind) attributes['agentstate.document.kind'] = kind;
    const id = str(i.id);
    if (id) attributes['agentstate.document.id'] = id;
    const provenance = i.provenance as Record<string, unknown> | undefined;
    const run = str(provenance?.run_id);
    if (run) attributes['gen_ai.conversation.id'] = run;
    return { name: kind ? `${memory} ${kind}` : memory, kind: SPAN_KIND.CLIENT, attributes };
  }
  return { name, kind: SPAN_KIND.INTERNAL, attributes };
}

/** What the result adds: the item a claim received or a publish made, the version a commit wrote. */
function onResult(span: Span, name: string, result: unknown, named: boolean): void {
  if (result === null || typeof result !== 'object') return;
  if (Array.isArray(result)) {
    if (MESSAGING[name]) span.setAttribute('messaging.batch.message_count', result.length);
    if (MESSAGING[name]?.kind === SPAN_KIND.CONSUMER)
      span.addLinks(producerLinks(result as Array<{ traceparent?: string }>));
    return;
  }
  const r = result as Record<string, unknown>;
  const m = MESSAGING[name];
  if (m) {
    const id = str(r.id);
    if (id) span.setAttribute('messaging.message.id', id);
    // A receive links to the span that enqueued the item it took (the producer's trace).
    if (m.kind === SPAN_KIND.CONSUMER) span.addLinks(producerLinks([r as { traceparent?: string }]));
    const kind = str(r.kind);
    // A resolve names only the item: its destination (kind) is known once the item is.
    if (kind && !named) {
      span.setAttribute('messaging.destination.name', kind);
      span.updateName(`${m.name} ${kind}`);
    }
  } else if (MEMORY[name] && typeof r.version === 'number') {
    span.setAttribute('agentstate.document.version', r.version);
  }
}

/** Runs `fn` inside operation `name`'s span (active for its duration), ending it with the outcome. */
export function traced<T>(name: string, input: unknown, fn: () => Promise<T>): Promise<T> {
  const otel = otelApi();
  // Nothing registered with OpenTelemetry: the span would be its no-op, so there is none.
  if (otel === undefined) return fn();
  const s = spanOf(name, input);
  return otel.trace
    .getTracer(TRACER_NAME)
    .startActiveSpan(s.name, { kind: s.kind, attributes: s.attributes }, async (span) => {
      try {
        const result = await fn();
        if (span.isRecording())
          onResult(span, name, result, s.attributes['messaging.destination.name'] !== undefined);
        return result;
      } catch (err) {
        if (span.isRecording()) {
          const code = isAgentStateError(err) ? err.code : 'INTERNAL';
          span.setAttribute('error.type', code);
          span.recordException(err as Error);
          span.setStatus({ code: SPAN_STATUS_ERROR, message: (err as Error).message });
        }
        throw err;
      } finally {
        span.end();
      }
    });
}
