// What the work queue's modules share: what a WorkQueue needs of its instance (WorkQueueContext), where a call
// came from (CallProvenance), and the parts a WorkQueue hands the functions that do its calls (QueueParts).
import type { Claimer, LeaseQuery, ResolveQuery, StoreBackend } from '../backend.js';
import type { CoalesceOptions, Coalescer } from '../coalesce.js';
import type { Runs } from '../runs/runs.js';
import type { Clock } from '../time.js';
import type { DecisionAnswer, JsonObject, Provenance, WorkItem } from '../types.js';
import type { WorkQueue } from './queue.js';

/** What a WorkQueue needs of its instance. */
export interface WorkQueueContext {
  clock: Clock;
  /** Lease owner and event actor when a call names none (the instance's agent name). */
  defaultWorker: string;
  /**
   * Answers a human decision a document asked for (the document records the answer in the same
   * transaction as the item's resolution); the instance wires it to `DocumentStore.answerDecision`.
   */
  answer?: (item: WorkItem, a: DecisionAnswer) => Promise<WorkItem>;
  /**
   * Overlapping claim(), resolve() and heartbeat() calls on this handle are served by one batched
   * statement each (see CoalesceOptions); false: every call is its own transaction. @default {}
   */
  coalesce?: CoalesceOptions | false;
}

/**
 * Where a call came from, as the edge that took it knows it: never part of an input schema, so no caller names
 * it (the MCP edge records a person's answer given through the host's form, `via: 'elicitation'`). Kept in the
 * event of a cancel or unpark and, for a human's answer to a decision, in that event and as the provenance of
 * the document version the answer commits.
 */
export interface CallProvenance {
  provenance?: Provenance | undefined;
}

/** The data of a cancel's or unpark's event that records where the call came from, if anyone said. */
export const provenanceData = (o: CallProvenance): JsonObject | undefined =>
  o.provenance === undefined ? undefined : { provenance: o.provenance as JsonObject };

/** A claim() call waiting to be served by its kind's coalesced claim. */
export type ClaimCall = Omit<Claimer, 'limit'>;
/** A heartbeat() call as the backend takes it. */
export type HeartbeatQuery = LeaseQuery & { lease_ms: number };

/** The parts of a WorkQueue the functions that do its calls work with (the facade holds them in one object). */
export interface QueueParts {
  /** The queue itself: a call that makes another public call (`this.retry(…)` in the class) makes it here. */
  readonly queue: WorkQueue;
  /** The instance's storage backend. */
  readonly backend: StoreBackend;
  /** What the queue needs of its instance. */
  readonly ctx: WorkQueueContext;
  /** The coalescing settings, or null when every call is its own transaction. */
  readonly coalesce: Required<CoalesceOptions> | null;
  /** Coalesced claim() calls, by the kind they ask for. */
  readonly claims: Map<string | null, Coalescer<ClaimCall, WorkItem | null>>;
  /** Coalesced resolve() calls, or null without coalescing. */
  readonly resolves: Coalescer<ResolveQuery, WorkItem> | null;
  /** Coalesced heartbeat() calls, or null without coalescing. */
  readonly heartbeats: Coalescer<HeartbeatQuery, WorkItem> | null;
  /** Durable runs: the records of what handlers did inside their items' runs (src/core/runs/). */
  readonly runs: Runs;
}
