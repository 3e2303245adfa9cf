// What both backends build alike and the core has no use for: kept here once, beside the two backends,
// instead of once in each.
import type {
  CounterRecord,
  DocumentRowDump,
  DumpOptions,
  DumpRecord,
  HistoryRowDump,
  LimitRowDump,
  StoredEvent,
  WorkflowChunkRowDump,
  WorkflowHookRow,
  WorkflowRowRecord,
  WorkflowRunRow,
  WorkflowStepRow,
  WorkflowWaitRow,
  WorkItemRowDump,
} from '../core/backend.js';
import { toIso } from '../core/time.js';
import {
  type EventRecord,
  type InstanceSummary,
  type Json,
  type StatusCounts,
  WORK_ITEM_STATUSES,
  type WorkItemStatus,
} from '../core/types.js';
import { InvalidInputError, InvalidTransitionError, StateConflictError } from '../errors.js';

/**
 * A World entity insert (`entity`: run, step, hook, wait) met a row of that key, or a hook's token a live hook
 * holds: nothing of the create is written.
 */
export function workflowEntityConflict(entity: string, id: string): StateConflictError {
  return new StateConflictError(`workflow ${entity} ${JSON.stringify(id)} exists already`, { entity, id });
}

/** A write to workflow stream `name`, which was closed: nothing is written after a close. */
export function streamClosed(name: string): InvalidTransitionError {
  return new InvalidTransitionError(
    `stream ${JSON.stringify(name)} is closed: nothing can be written to it`,
    {
      name,
      from: 'closed',
    },
  );
}

/** A stream's state from its last row (`chunk_index`, `eof`), or from none: tail -1, not done. */
export function streamStateOf(last: { chunk_index: number; eof: boolean } | null): {
  tail: number;
  done: boolean;
} {
  if (last === null) return { tail: -1, done: false };
  return last.eof ? { tail: last.chunk_index - 1, done: true } : { tail: last.chunk_index, done: false };
}

/** Stored bytes (a driver's Buffer) as a Uint8Array of their own, which no later use of the driver's memory touches. */
export function chunkBytes(stored: Uint8Array): Uint8Array {
  return new Uint8Array(stored);
}

/** An enqueued item's `blocked_by` names `dep`, which is no item of this instance. */
export function missingBlocker(dep: string): InvalidInputError {
  return new InvalidInputError(`blocked_by names ${dep}, which is not a work item of this instance`, {
    field: 'blocked_by',
    id: dep,
  });
}

/** The number of items in each status, from the counted statuses (a status no item is in counts 0). */
export function statusCounts(rows: Array<{ status: WorkItemStatus; n: number }>): StatusCounts {
  const counts = Object.fromEntries(WORK_ITEM_STATUSES.map((s) => [s, 0])) as StatusCounts;
  for (const r of rows) counts[r.status] = r.n;
  return counts;
}

/** An event as read back: its stored data text parsed, its time as ISO-8601. */
export function toEventRecord(row: StoredEvent): EventRecord {
  return { ...row, data: JSON.parse(row.data) as Json, created_at: toIso(row.created_at) };
}

/**
 * What both instances.ts read of an instance: its head, the contract they share. Listing is not shared: a
 * SQLite instance is a file of its own (src/instance/list.ts finds the folders, then reads each head with
 * `instanceHead`), while a PostgreSQL schema holds many instances, listed by one query (`listInstances`).
 */
export type InstanceHead = Pick<InstanceSummary, 'events' | 'last_event_at'>;

/** The head of an instance from its newest event (none: an empty log). */
export function instanceHeadOf(
  newest: { position: number; created_at: number | null } | undefined,
): InstanceHead {
  return { events: newest?.position ?? 0, last_event_at: toIso(newest?.created_at) };
}

/**
 * The columns of the tables a dump holds (the fields of its rows), in the order both backends read and load
 * them.
 */
export const DUMP_COLUMNS = {
  work_items: [
    'id',
    'title',
    'kind',
    'status',
    'priority',
    'payload',
    'notes',
    'result',
    'error',
    'attempts',
    'max_attempts',
    'lease_owner',
    'lease_expires_at',
    'claimed_at',
    'blocked_by',
    'not_before',
    'idempotency_key',
    'created_at',
    'updated_at',
    'resolved_at',
    'on_blocker_failure',
    'cascaded_from',
    'concurrency_key',
    'traceparent',
  ],
  events: [
    'position',
    'stream',
    'stream_seq',
    'type',
    'data',
    'actor',
    'correlation_id',
    'causation_id',
    'work_item_id',
    'created_at',
    'prev_hash',
    'hash',
  ],
  documents: ['kind', 'id', 'version', 'body', 'content_hash', 'forked_from', 'created_at', 'updated_at'],
  work_limits: [
    'key',
    'max_in_flight',
    'rate_count',
    'rate_period_ms',
    'window_start',
    'window_count',
    'created_at',
    'updated_at',
  ],
  document_history: [
    'kind',
    'id',
    'seq',
    'version',
    'parent_version',
    'noop',
    'body',
    'content_hash',
    'actor',
    'actor_kind',
    'provenance',
    'write_id',
    'request_hash',
    'reason',
    'override',
    'created_at',
  ],
  workflow_runs: ['run_id', 'workflow_name', 'status', 'created_at', 'updated_at', 'body'],
  workflow_steps: ['run_id', 'step_id', 'status', 'created_at', 'updated_at', 'body'],
  workflow_hooks: ['hook_id', 'run_id', 'token', 'created_at', 'body'],
  workflow_waits: ['run_id', 'correlation_id', 'status', 'created_at', 'updated_at', 'body'],
  workflow_stream_chunks: ['name', 'chunk_index', 'run_id', 'data', 'eof', 'created_at'],
} as const satisfies Record<string, readonly string[]>;

/** How many work items or events a dump reads per query. */
export const DUMP_PAGE = 5000;

/** How many stream chunks a dump reads per query (a chunk holds up to 1 MiB). */
export const DUMP_CHUNK_PAGE = 64;

/**
 * The tables of a Workflow SDK World a dump holds, in the order it yields them: each one's record type and
 * the columns of its key, the order its rows are read in (page after page).
 */
export const WORKFLOW_DUMP = [
  { table: 'workflow_runs', t: 'workflow_run', keys: ['run_id'] },
  { table: 'workflow_steps', t: 'workflow_step', keys: ['run_id', 'step_id'] },
  { table: 'workflow_hooks', t: 'workflow_hook', keys: ['hook_id'] },
  { table: 'workflow_waits', t: 'workflow_wait', keys: ['run_id', 'correlation_id'] },
  { table: 'workflow_stream_chunks', t: 'workflow_chunk', keys: ['name', 'chunk_index'] },
] as const;

/** A World table a dump holds. */
export type WorkflowDumpTable = (typeof WORKFLOW_DUMP)[number]['table'];

/** The values of a World row's key columns (WORKFLOW_DUMP), as a page after it names them. */
export type WorkflowDumpKey = Array<string | number>;

/** What a backend's dump reads, every read from the one snapshot the dump holds. */
export interface DumpSource {
  /** At most `limit` work items with an id after `after`, in id order. */
  items(after: string, limit: number): Promise<WorkItemRowDump[]> | WorkItemRowDump[];
  /** At most `limit` events after position `after`, in position order. */
  events(after: number, limit: number): Promise<StoredEvent[]> | StoredEvent[];
  /** Every document, by kind and id. */
  documents(): Promise<DocumentRowDump[]> | DocumentRowDump[];
  /** One document's history, by seq. */
  history(doc: DocumentRowDump): Promise<HistoryRowDump[]> | HistoryRowDump[];
  /** Every limit, by key. */
  limits(): Promise<LimitRowDump[]> | LimitRowDump[];
  /** The counter rows the backend keeps (see CounterRecord). */
  counters(): Promise<CounterRecord[]> | CounterRecord[];
  /**
   * At most `limit` rows of World table `table` (its DUMP_COLUMNS), in the order of its key columns
   * (WORKFLOW_DUMP), after the row whose key is `after` (null: from the first).
   */
  workflow(
    table: WorkflowDumpTable,
    after: WorkflowDumpKey | null,
    limit: number,
  ): Promise<Array<Record<string, unknown>>> | Array<Record<string, unknown>>;
}

/** The rows `read` returns page after page (`size` each), each page after the `key` of the last row. */
async function* pages<R, K>(
  read: (after: K, limit: number) => Promise<R[]> | R[],
  first: K,
  key: (row: R) => K,
  size = DUMP_PAGE,
): AsyncIterable<R> {
  for (let after = first; ; ) {
    const rows = await read(after, size);
    yield* rows;
    if (rows.length < size) return;
    after = key(rows[rows.length - 1]!);
  }
}

/** A stream chunk as a dump holds it: its bytes in base64, its close flag a boolean (SQLite keeps 0/1). */
function chunkDump(raw: Record<string, unknown>): WorkflowChunkRowDump {
  return {
    name: raw.name as string,
    chunk_index: raw.chunk_index as number,
    run_id: raw.run_id as string,
    data: Buffer.from(raw.data as Uint8Array).toString('base64'),
    eof: raw.eof === true || raw.eof === 1,
    created_at: raw.created_at as number,
  };
}

/**
 * A dump in the order both backends write it: the work items and the events (in pages, by key), then each
 * document followed by its history, then the limits, then the Workflow World's runs, steps, hooks, waits and
 * stream chunks (in pages, by key; the chunks unless `chunks` is false); with `counters`, the counter rows last.
 */
export async function* dumpRecords(
  src: DumpSource,
  options: DumpOptions,
): AsyncIterable<DumpRecord | CounterRecord> {
  for await (const row of pages(
    (a: string, n) => src.items(a, n),
    '',
    (r) => r.id,
  )) {
    yield { t: 'work_item', row };
  }
  for await (const row of pages(
    (a: number, n) => src.events(a, n),
    0,
    (r) => r.position,
  )) {
    yield { t: 'event', row };
  }
  for (const row of await src.documents()) {
    yield { t: 'document', row };
    for (const h of await src.history(row)) yield { t: 'history', row: h };
  }
  for (const row of await src.limits()) yield { t: 'limit', row };
  for (const { table, t, keys } of WORKFLOW_DUMP) {
    const chunks = t === 'workflow_chunk';
    if (chunks && options.chunks === false) continue;
    for await (const raw of pages(
      (a: WorkflowDumpKey | null, n) => src.workflow(table, a, n),
      null,
      (r) => keys.map((k) => r[k] as string | number),
      chunks ? DUMP_CHUNK_PAGE : DUMP_PAGE,
    )) {
      yield chunks ? { t, row: chunkDump(raw) } : ({ t, row: raw } as unknown as WorkflowRowRecord);
    }
  }
  if (options.counters) yield* await src.counters();
}

/** The records of a dump by table, each in the order the dump holds them (as a load inserts them). */
export function dumpTables(records: DumpRecord[]): {
  items: WorkItemRowDump[];
  events: StoredEvent[];
  docs: DocumentRowDump[];
  history: HistoryRowDump[];
  limits: LimitRowDump[];
  runs: WorkflowRunRow[];
  steps: WorkflowStepRow[];
  hooks: WorkflowHookRow[];
  waits: WorkflowWaitRow[];
  chunks: WorkflowChunkRowDump[];
} {
  const tables = {
    items: [] as WorkItemRowDump[],
    events: [] as StoredEvent[],
    docs: [] as DocumentRowDump[],
    history: [] as HistoryRowDump[],
    limits: [] as LimitRowDump[],
    runs: [] as WorkflowRunRow[],
    steps: [] as WorkflowStepRow[],
    hooks: [] as WorkflowHookRow[],
    waits: [] as WorkflowWaitRow[],
    chunks: [] as WorkflowChunkRowDump[],
  };
  for (const r of records) {
    switch (r.t) {
      case 'work_item':
        tables.items.push(r.row);
        break;
      case 'event':
        tables.events.push(r.row);
        break;
      case 'document':
        tables.docs.push(r.row);
        break;
      case 'history':
        tables.history.push(r.row);
        break;
      case 'limit':
        tables.limits.push(r.row);
        break;
      case 'workflow_run':
        tables.runs.push(r.row);
        break;
      case 'workflow_step':
        tables.steps.push(r.row);
        break;
      case 'workflow_hook':
        tables.hooks.push(r.row);
        break;
      case 'workflow_wait':
        tables.waits.push(r.row);
        break;
      case 'workflow_chunk':
        tables.chunks.push(r.row);
        break;
    }
  }
  return tables;
}
