// The event half of the storage interface (StoreBackend.events): events to append, reads of the log, and
// the raw stored form verify and dumps read.
import type { HashedEventFields } from '../hash.js';
import type { Json } from '../primitives.js';
import type { EventRecord } from './types.js';

/** A normalized event to append (ids, defaults and time already decided by the core). */
export interface NewEvent {
  type: string;
  stream: string;
  data: Json;
  actor: string | null;
  correlation_id: string | null;
  causation_id: string | null;
  work_item_id: string | null;
  created_at: number;
}

/**
 * A read of the log as the backend runs it (`EventLog.read`'s input checked, defaults filled, times in epoch
 * ms; null means no filter).
 */
export interface EventQuery {
  after: number;
  until: number | null;
  stream: string | null;
  types: string[] | null;
  /** The item's own events and the batch events (`work_items_<x>`) whose `data.items` name it. */
  work_item_id: string | null;
  since: number | null;
  before: number | null;
  limit: number;
  reverse: boolean;
}

/** The raw stored form of an event: the fields its hash covers, the previous event's hash, and its own. */
export interface StoredEvent extends HashedEventFields {
  prev_hash: string;
  hash: string;
}

/** The event half of a backend: the append-only, hash-chained log. */
export interface EventBackend {
  /** Appends events in one transaction, each given the next position and chained to the one before. */
  append(events: NewEvent[]): Promise<EventRecord[]>;
  /** The stored events matching `q`, in position order (newest first with `reverse`). */
  read(q: EventQuery): Promise<EventRecord[]>;
  /** Raw stored events in position order, for verification and export. */
  scan(afterPosition: number, limit: number): Promise<StoredEvent[]>;
  /** The newest event's position and hash, or null for an empty log. */
  head(): Promise<{ position: number; hash: string } | null>;
  /** Event counts per type with created_at in [since, until). */
  typeCounts(since: number, until: number): Promise<Array<{ type: string; count: number }>>;
  /** How many events of each of `types` the log holds, ever (a type with none is left out). */
  countTypes(types: string[]): Promise<Array<{ type: string; count: number }>>;
}
