// The public shapes of `events.verify`: what it takes, what it returns, and the problems it reports.
import type { Json } from '../primitives.js';

/** What kind of disagreement verify found. */
export type IntegrityProblemKind =
  /** A position is missing or out of order, or an event's prev_hash or hash does not recompute. */
  | 'chain_broken'
  /** An event's stream_seq does not follow the previous event of its stream. */
  | 'stream_seq_gap'
  /** A system event whose data agentstate could not have written (not JSON, fields missing). */
  | 'event_malformed'
  /** A body does not hash to the content_hash stored next to it. */
  | 'content_hash_mismatch'
  /** A row's field differs from what its events say. */
  | 'row_differs'
  /** A row (or a document version) that no event records. */
  | 'event_missing'
  /** An event records a row that is not there. */
  | 'row_missing'
  /** A kept history entry is missing between the oldest kept version and the latest (retention only removes the oldest). */
  | 'history_gap'
  /** The head given to verify is no longer in the log, or the event at its position changed. */
  | 'head_mismatch'
  /** A row naming an event position (PostgreSQL event_heads, event_streams) differs from the log. */
  | 'counter_mismatch'
  /**
   * A record of a durable run (a step, a sleep) at a place of the log where its worker did not hold the
   * item's lease on the attempt it names (or a reset of an item in flight).
   */
  | 'record_unfenced';

/** One disagreement between the stored rows and the event log. */
export interface IntegrityProblem {
  problem: IntegrityProblemKind;
  table:
    | 'events'
    | 'work_items'
    | 'documents'
    | 'document_history'
    | 'event_heads'
    | 'event_streams'
    | 'work_item_blockers'
    | 'work_limits'
    | 'workflow_runs'
    | 'workflow_steps'
    | 'workflow_hooks'
    | 'workflow_waits';
  /**
   * The row: `#position` for events, the item id, `kind/id`, `kind/id@seq`, the stream name; a World run's
   * or hook's id, `runId/stepId` for a step, `runId/correlationId` for a wait.
   */
  key: string;
  /** The column that differs, when one does. */
  field?: string;
  /** What the log says it should be. */
  expected?: Json;
  /** What the row holds. */
  actual?: Json;
  message: string;
}

/** Result of verify: the hash chain, the mutable rows against the log, and an optional head seen earlier. */
export interface VerifyResult {
  /** No problem found. */
  ok: boolean;
  /** Events whose chain verified: all of them when intact, else those before the first broken link. */
  events: number;
  /** Hash of the last of those events (null for an empty log). */
  head: string | null;
  /** The first broken link of the chain, if any. */
  broken?: { position: number; reason: string };
  /**
   * The head as `position:hash`, to keep somewhere else and pass back later as `head` (`--head`): it pins
   * every event up to it. Null for an empty log.
   */
  anchor: string | null;
  /** Problems found, in the order found (at most 1000; `problem_count` counts them all). */
  problems: IntegrityProblem[];
  problem_count: number;
  /**
   * How many rows were checked against the log; `counters` is true when the backend keeps counter rows.
   * `workflow_runs` counts a Workflow World's runs checked (with their steps, hooks and waits); null when the
   * instance has World events or rows but @workflow/world, whose rules the check replays, is not installed.
   */
  checked: {
    events: number;
    work_items: number;
    documents: number;
    history: number;
    counters: boolean;
    workflow_runs: number | null;
  };
  /** The head given to verify, and whether the log still holds it unchanged. */
  expected_head?: { position: number; hash: string; matches: boolean };
}

/** `events.verify`: with `head` (`position:hash` printed earlier), any rewrite of the log up to it is reported. */
export interface VerifyInput {
  /** A head printed earlier by verify, export or the dashboard (`position:hash`): any rewrite since is reported. */
  head?: string | { position: number; hash: string };
  /** Called every 10 000 events with the number checked so far (for progress output). */
  onProgress?: (events: number) => void;
}
