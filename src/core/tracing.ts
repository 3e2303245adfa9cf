// What agentstate's OpenTelemetry spans share, for the operation table (src/service/trace.ts) and the worker
// runtime (src/worker/): the instrumentation scope and the messaging attributes of the queue. Through
// @opentelemetry/api only: without an SDK registered every span is the API's no-op.
import type { Attributes } from '@opentelemetry/api';

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
