// What agentstate's OpenTelemetry spans share, for the operation table (src/service/trace.ts) and the worker
// runtime (src/worker/): the instrumentation scope, the messaging attributes of the queue, and the W3C
// traceparent an item carries from the span that enqueued it to the spans that claim and process it. Through
// @opentelemetry/api only: without an SDK registered every span is the API's no-op, so until something is
// registered with the API it is not even loaded (see otelApi).
import { createRequire } from 'node:module';
import type * as OtelApi from '@opentelemetry/api';
import type { Attributes, Link, SpanContext, SpanKind } from '@opentelemetry/api';

/** The key under which @opentelemetry/api 1.x keeps on globalThis what is registered with it (an SDK's tracer provider, context manager, propagator or logger). */
export const OTEL_REGISTERED = Symbol.for('opentelemetry.js.api.1');
let api: typeof OtelApi | undefined;

/**
 * @opentelemetry/api once anything is registered with it; undefined before, when every span it would make is
 * its no-op and no context is active. So a process that never registers an SDK (a CLI call, a host hook)
 * never loads the API, which is some 60 modules and 15–25 ms of its start on this 2-core box. The same copy
 * an SDK registered with, or another: what is registered is shared through globalThis either way.
 */
export function otelApi(): typeof OtelApi | undefined {
  if (api === undefined && OTEL_REGISTERED in globalThis)
    api = createRequire(import.meta.url)('@opentelemetry/api') as typeof OtelApi;
  return api;
}

/** The span kinds agentstate's spans take: @opentelemetry/api's SpanKind values, without loading it. */
export const SPAN_KIND = {
  INTERNAL: 0 as SpanKind.INTERNAL,
  CLIENT: 2 as SpanKind.CLIENT,
  PRODUCER: 3 as SpanKind.PRODUCER,
  CONSUMER: 4 as SpanKind.CONSUMER,
} as const;

/** @opentelemetry/api's SpanStatusCode.ERROR, without loading it. */
export const SPAN_STATUS_ERROR = 2;

/** The instrumentation scope of agentstate's spans. */
export const TRACER_NAME = '@agentstate/store';

/** The messaging attributes of a queue operation (`publish`, `receive`, `process`, `settle`) on `kind`. */
export function messagingAttributes(
  operation: 'publish' | 'receive' | 'process' | 'settle',
  kind?: string | null,
  id?: string,
): Attributes {
  const type = operation === 'publish' ? 'send' : operation;
  return {
    'messaging.system': 'agentstate',
    'messaging.operation.name': operation,
    'messaging.operation.type': type,
    ...(kind ? { 'messaging.destination.name': kind } : {}),
    ...(id ? { 'messaging.message.id': id } : {}),
  };
}

/** A W3C `traceparent` (version 00): `00-<trace id: 32 hex>-<parent span id: 16 hex>-<flags: 2 hex>`. */
export const TRACEPARENT_PATTERN = '^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$';
const TRACEPARENT = new RegExp(TRACEPARENT_PATTERN);

/**
 * The span context a `traceparent` names, as a remote one to link to or parent on; undefined when the text is
 * not a version-00 traceparent or its ids are all zeros (invalid by the W3C rule).
 */
export function spanContextOf(traceparent: string | null | undefined): SpanContext | undefined {
  if (typeof traceparent !== 'string' || !TRACEPARENT.test(traceparent)) return undefined;
  const sc: SpanContext = {
    traceId: traceparent.slice(3, 35),
    spanId: traceparent.slice(36, 52),
    traceFlags: Number.parseInt(traceparent.slice(53, 55), 16),
    isRemote: true,
  };
  // All zeros is the invalid id (W3C), as the API's isSpanContextValid has it.
  return /[^0]/.test(sc.traceId) && /[^0]/.test(sc.spanId) ? sc : undefined;
}

/** The `traceparent` of a span context: what an item enqueued inside it carries. */
export function traceparentOf(sc: SpanContext): string {
  return `00-${sc.traceId}-${sc.spanId}-${(sc.traceFlags & 0xff).toString(16).padStart(2, '0')}`;
}

/**
 * The `traceparent` of the span active now (an operation's publish span, or the caller's own span for a direct
 * library call); null without one, which is always the case when no OpenTelemetry SDK is registered.
 */
export function activeTraceparent(): string | null {
  const otel = otelApi();
  const sc = otel?.trace.getSpanContext(otel.context.active());
  return sc && otel?.isSpanContextValid(sc) ? traceparentOf(sc) : null;
}

/** The link from a consumer's span to the span that enqueued the item, when the item carries one. */
export function producerLinks(items: ReadonlyArray<{ traceparent?: string | null }>): Link[] {
  const links: Link[] = [];
  for (const item of items) {
    const sc = spanContextOf(item.traceparent);
    if (sc) links.push({ context: sc });
  }
  return links;
}

/**
 * Runs `fn` with the span a caller's `traceparent` header names as its remote parent (a request's operation
 * span then joins the caller's trace); as it is when the header is absent or not a valid traceparent.
 */
export function withRemoteParent<T>(traceparent: string | null | undefined, fn: () => T): T {
  const otel = otelApi();
  const sc = otel && spanContextOf(traceparent);
  return otel && sc ? otel.context.with(otel.trace.setSpanContext(otel.context.active(), sc), fn) : fn();
}
