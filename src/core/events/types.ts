// The public shapes of the event log: an event as stored and read, and the inputs of `events.append`,
// `events.read` and `events.tail`.
import type { Json } from '../primitives.js';

/** One entry of the append-only event log. */
export interface EventRecord {
  /** Global position in the instance's log: 1, 2, 3 … with no gaps. */
  position: number;
  stream: string;
  /** Sequence number within `stream`, starting at 1. */
  stream_seq: number;
  type: string;
  data: Json;
  actor: string | null;
  correlation_id: string | null;
  causation_id: string | null;
  work_item_id: string | null;
  created_at: string;
  prev_hash: string;
  hash: string;
}

/** `events.append`: an event of `type` (default stream: the instance's, or the item's with `work_item_id`). */
export interface AppendEventInput {
  /** The event type (a name of letters, digits and `_ . : -`; not one agentstate writes itself). */
  type: string;
  /** What happened (JSON). @default null */
  data?: Json;
  /**
   * The stream it belongs to (not a `doc:` stream: those are the documents'). @default `work_item:<id>` when
   * work_item_id is given, else `instance`
   */
  stream?: string;
  /** The work item it is about (it must exist). @default null */
  work_item_id?: string | null;
  /** Who did it; null for no one. @default the instance's agent name */
  actor?: string | null;
  /** Ties together the events of one request or run (free-form). @default null */
  correlation_id?: string | null;
  /** What caused this event, e.g. an earlier event or request (free-form). @default null */
  causation_id?: string | null;
}

/**
 * `events.read` and `events.tail`: by position, stream, type (one or several), item and time (`since`,
 * `before`: ISO-8601 or a duration back from now). @default limit 1000, oldest first
 */
export interface ReadEventsInput {
  /** Return events with position > after. @default 0 */
  after?: number;
  /** Return events with position <= until. */
  until?: number;
  /** Only events of this stream. */
  stream?: string;
  /** Only events of this type, or of one of these. */
  type?: string | string[];
  /** Only this work item's events (a batch event is read as the item's own). */
  work_item_id?: string;
  /** ISO-8601 lower bound (inclusive) on created_at. */
  since?: string;
  /** ISO-8601 upper bound (exclusive) on created_at. */
  before?: string;
  /** At most this many events. @default 1000 */
  limit?: number;
  /** Newest first. @default false */
  reverse?: boolean;
}
