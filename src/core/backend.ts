// The storage interface every backend implements; the core and the edges know only this. StoreBackend composes
// each area's half (work/, events/, documents/, workflow/ backend.ts), re-exported here so that one import
// (`core/backend.js`) names them all; what spans the areas (capabilities, dumps) is declared here.
import type { DocumentBackend, DocumentRowDump, HistoryRowDump } from './documents/backend.js';
import type { EventBackend, StoredEvent } from './events/backend.js';
import type { LimitBackend, LimitRowDump, WorkItemBackend, WorkItemRowDump } from './work/backend.js';
import type {
  WorkflowChunkRowDump,
  WorkflowRowRecord,
  WorkflowRunBackend,
  WorkflowStreamBackend,
} from './workflow/backend.js';

export type * from './documents/backend.js';
export type * from './events/backend.js';
export type * from './work/backend.js';
export type * from './workflow/backend.js';

/** What a backend can do natively; the core picks strategies by flag, never by dialect name. */
export interface BackendCapabilities {
  /**
   * The backend pushes a wake-up hint soon after events are appended (`listen`); a tail then polls at once
   * instead of waiting out its interval. A hint only: polling stays the truth.
   */
  notify: boolean;
  /**
   * How often an idle worker or scheduler polls for work by default, in ms (without hints a worker learns
   * of new work only by polling). @default 1000
   */
  idlePollMs?: number;
}

/** One record of a portable instance dump; events keep their exact stored data text and hashes. */
export type DumpRecord =
  | { t: 'work_item'; row: WorkItemRowDump }
  | { t: 'event'; row: StoredEvent }
  | { t: 'document'; row: DocumentRowDump }
  | { t: 'history'; row: HistoryRowDump }
  | { t: 'limit'; row: LimitRowDump }
  | WorkflowRowRecord
  | { t: 'workflow_chunk'; row: WorkflowChunkRowDump };

/**
 * A row kept beside the rows and the log, derived from them, for verify to check: a backend whose head is not
 * the log itself names event positions (PostgreSQL: the instance's `event_heads` row and its `event_streams`
 * counters), and every backend keeps blocked_by read backwards (`work_item_blockers`, all its rows in one
 * record). Never part of a dump file: an import derives them again.
 */
export type CounterRecord =
  | { t: 'event_head'; row: { position: number; hash: string } }
  | { t: 'event_stream'; row: { stream: string; seq: number } }
  | { t: 'blocker_edges'; row: { edges: Array<{ blocker: string; item: string }> } };

/** What `StoreBackend.dump` yields besides the instance's rows. */
export interface DumpOptions {
  /** Also yield the counter rows (after everything else), for verify. @default false */
  counters?: boolean;
  /** Yield the chunks of the Workflow World's streams (verify has nothing to check them against). @default true */
  chunks?: boolean;
}

/**
 * A storage backend: one instance's work items, event log and documents (`openSqliteBackend`, or
 * `openPostgresBackend` from `@agentstate/store/postgres`). The core reaches storage only through this.
 */
export interface StoreBackend {
  /** The backend's name (`sqlite`, `postgres`). */
  readonly name: string;
  /** What it can do natively. */
  readonly capabilities: BackendCapabilities;
  /** Work items. */
  readonly work: WorkItemBackend;
  /** The event log. */
  readonly events: EventBackend;
  /** Versioned documents and their history. */
  readonly docs: DocumentBackend;
  /** Limits per concurrency key, which claims respect. */
  readonly limits: LimitBackend;
  /** The byte streams of a Workflow SDK World; absent on a backend that does not store them. */
  readonly workflowStreams?: WorkflowStreamBackend;
  /** The runs, steps, hooks, waits and events of a Workflow SDK World; absent on a backend that does not store them. */
  readonly workflowRuns?: WorkflowRunBackend;
  /** Migrations applied when this backend was opened (empty when the schema was current). */
  readonly migrationsApplied: string[];
  /**
   * Every row of the instance, read in one consistent snapshot (events in position order), for a portable
   * dump and for verify; counter rows only when asked.
   */
  dump?(options?: DumpOptions): AsyncIterable<DumpRecord | CounterRecord>;
  /** Loads dump records verbatim into an empty instance, in one transaction. */
  load?(records: DumpRecord[]): Promise<void>;
  /**
   * With `capabilities.notify`: calls `onAppend` soon after events of this instance commit. Hints can be
   * lost; resolves to a function that stops listening.
   */
  listen?(onAppend: (position: number) => void): Promise<() => Promise<void>>;
  /** Applies pending migrations (safe when several processes start at once); returns the names applied. */
  migrate(): Promise<string[]>;
  /** Closes the connection (or the pool); closing again does nothing. */
  close(): Promise<void>;
}
