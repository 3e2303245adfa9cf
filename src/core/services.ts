// What a kind's operations of the service table run on: the store's three services, named apart from the
// kind contract (kind.ts) so that the document store, which reads that contract, is not in a circle with it.
import type { DocumentStore } from './documents/store.js';
import type { EventLog } from './events/log.js';
import type { ServiceOperation } from './kind.js';
import type { WorkQueue } from './work/queue.js';

/**
 * What an operation a kind declares runs on: the store's three services (an open `Instance` is one). The
 * kinds name this, not the instance, so they stay below the layers that open instances.
 */
export interface StoreServices {
  readonly work: WorkQueue;
  readonly events: EventLog;
  readonly docs: DocumentStore;
}

/** Identity helper that keeps a kind's operation's input type for `run` (the service's `operation`). */
export function serviceOperation<I, O>(
  op: ServiceOperation<StoreServices, I, O>,
): ServiceOperation<StoreServices, I, O> {
  return op;
}
