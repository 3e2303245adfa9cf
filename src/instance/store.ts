// The one wiring of the store's three services over a backend: what an Instance holds and what the conformance
// suite tests, so the suite runs on the assembly users run.
import type { StoreBackend } from '../core/backend.js';
import type { CoalesceOptions } from '../core/coalesce.js';
import type { KindResolver } from '../core/documents/context.js';
import { DocumentStore } from '../core/documents/store.js';
import { EventLog, type EventTypeOwner } from '../core/events/log.js';
import { type Clock, wholeMs } from '../core/time.js';
import { WorkQueue } from '../core/work/queue.js';
import { eventTypeOwner } from '../kinds/event-owners.js';

/** The services of one store: the queue, the log and the documents, over one backend and one clock. */
export interface Store {
  /** Work items: enqueue, claim under a lease, heartbeat, resolve, release, cancel, retry, list. */
  readonly work: WorkQueue;
  /** The event log: append, read, tail, verify the hash chain. */
  readonly events: EventLog;
  /** Versioned documents of the registered kinds: commit (CAS), get, history, apply a kind's operation. */
  readonly docs: DocumentStore;
}

/** How `createStore` wires the services: their clock, default actor, history kept and kinds. */
export interface StoreOptions {
  /** The time source every write is stamped with. */
  clock: Clock;
  /** Lease owner and actor of calls that name none. */
  actor: string;
  /** Document history kept per document: the newest N versions, or null for all. @default null */
  keepVersions?: number | null;
  /** Overlapping claims, resolves and heartbeats batched (see OpenInstanceOptions.coalesce). @default {} */
  coalesce?: CoalesceOptions | false;
  /** The kinds documents are checked by. @default the built-in registry, loaded on first use */
  kinds?: () => Promise<KindResolver>;
  /** Which kind owns an event type (only it appends that type). @default the built-in kinds' types */
  eventTypeOwner?: EventTypeOwner;
}

/**
 * The store's services over `backend`, wired as every instance wires them: a human's answer to a decision
 * a document asked for goes through the document store; the kinds load on first use.
 * @example const { work, events, docs } = createStore(backend, { clock: Date.now, actor: 'agent' })
 */
export function createStore(backend: StoreBackend, options: StoreOptions): Store {
  const clock = wholeMs(options.clock);
  const docs = new DocumentStore(backend, {
    clock,
    actor: options.actor,
    keepVersions: options.keepVersions ?? null,
    kinds: options.kinds ?? loadKinds,
  });
  const work = new WorkQueue(backend, {
    clock,
    defaultWorker: options.actor,
    answer: (item, a) => docs.answerDecision(item, a),
    ...(options.coalesce === undefined ? {} : { coalesce: options.coalesce }),
  });
  const events = new EventLog(backend, clock, options.actor, options.eventTypeOwner ?? eventTypeOwner);
  return { work, events, docs };
}

let kindsLoaded: Promise<KindResolver> | undefined;

/** The kind registry, imported once on first use (a work-item-only process never pays for it). */
function loadKinds(): Promise<KindResolver> {
  kindsLoaded ??= import('../kinds/registry.js').then((m) => ({
    get: m.getKind,
    validateSchema: m.validateSchema,
  }));
  return kindsLoaded;
}
