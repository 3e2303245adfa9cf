// The Workflow SDK World's half of the storage interface (StoreBackend.workflowStreams, .workflowRuns): its
// byte streams, and its runs, steps, hooks and waits as rows with the decision of each events.create, and the
// rows a dump holds of them.
import type { NewEvent } from '../events/backend.js';
import type { EventRecord } from '../events/types.js';

/** One row of a workflow stream as stored: a chunk, or (`eof`) the close after the last one, with no data. */
export interface StreamChunkRow {
  /** The row's dense, 0-based position in its stream (a close takes the position after the last chunk). */
  index: number;
  /** The chunk's bytes, exactly as written (empty for a close). */
  data: Uint8Array;
  /** Whether this row is the stream's close. */
  eof: boolean;
}

/** A stream's state: the index of its last chunk (-1 when it has none) and whether it is closed. */
export interface StreamState {
  /** The index of the last chunk (not counting the close); -1 when the stream has no chunk. */
  tail: number;
  /** Whether the stream was closed. */
  done: boolean;
}

/**
 * The byte streams of a Workflow SDK World (src/workflow-world/streams.ts): named streams of chunks at dense
 * 0-based indexes, each closed at most once. Names are global to the instance; a run id only files a stream
 * under its run (`names`), and need not be a run the store knows. Inputs arrive checked (names, sizes).
 */
export interface WorkflowStreamBackend {
  /**
   * Appends `chunks`, in order, to stream `name` in one transaction, at the indexes after its last row,
   * allocated under the stream's lock at commit: concurrent appends never share an index or leave a gap.
   * A closed stream takes nothing (INVALID_TRANSITION, nothing written). Returns the stream's state after.
   */
  append(q: { run_id: string; name: string; chunks: Uint8Array[]; now: number }): Promise<StreamState>;
  /**
   * Closes stream `name` (creating it empty, filed under `run_id`, when it has no row yet); closing a closed
   * stream changes nothing. Returns the stream's state after.
   */
  close(q: { run_id: string; name: string; now: number }): Promise<StreamState>;
  /** At most `limit` rows of stream `name` from index `from` on, in index order (the close among them). */
  read(q: { name: string; from: number; limit: number }): Promise<StreamChunkRow[]>;
  /** The stream's state (tail -1 and not done for a stream that has no row). */
  info(name: string): Promise<StreamState>;
  /** The names of the streams filed under `run_id` (by the write that created each), in name order. */
  names(run_id: string): Promise<string[]>;
  /**
   * The streams filed under `run_id` with their state (as `info` gives it), in name order, at most `limit`:
   * what a person looking at the run is shown (how many chunks each holds, whether it was closed).
   */
  states(q: { run_id: string; limit: number }): Promise<Array<StreamState & { name: string }>>;
}

/**
 * A Workflow SDK run as its row keeps it: the columns reads filter and order by, and `body`, the whole run as
 * the World's codec wrote it (src/core/codecs/workflow-events/codec.ts), which is what a read returns.
 */
export interface WorkflowRunRow {
  /** The run's id. */
  run_id: string;
  /** Its workflow's name (runs are listed by it). */
  workflow_name: string;
  /** Its status (runs are listed by it). */
  status: string;
  /** When it was created (epoch ms): runs are listed in (created_at, run_id) order. */
  created_at: number;
  /** When it last changed (epoch ms). */
  updated_at: number;
  /** The run, as the codec's JSON text. */
  body: string;
}

/** A step of a Workflow SDK run as its row keeps it (see {@link WorkflowRunRow}). */
export interface WorkflowStepRow {
  /** The step's run. */
  run_id: string;
  /** The step's id (its events' correlationId), unique in its run. */
  step_id: string;
  /** Its status. */
  status: string;
  /** When it was created (epoch ms): a run's steps are listed in (created_at, step_id) order. */
  created_at: number;
  /** When it last changed (epoch ms). */
  updated_at: number;
  /** The step, as the codec's JSON text. */
  body: string;
}

/** A live hook of a Workflow SDK run as its row keeps it (see {@link WorkflowRunRow}); a disposed hook has none. */
export interface WorkflowHookRow {
  /** The hook's id (its events' correlationId), unique in the instance. */
  hook_id: string;
  /** The hook's run. */
  run_id: string;
  /** Its token, unique among the instance's live hooks. */
  token: string;
  /** When it was created (epoch ms): hooks are listed in (created_at, hook_id) order. */
  created_at: number;
  /** The hook, as the codec's JSON text. */
  body: string;
}

/** A wait of a Workflow SDK run as its row keeps it (see {@link WorkflowRunRow}), until its run ends. */
export interface WorkflowWaitRow {
  /** The wait's run. */
  run_id: string;
  /** Its events' correlationId, unique in its run. */
  correlation_id: string;
  /** Its status. */
  status: string;
  /** When it was created (epoch ms). */
  created_at: number;
  /** When it last changed (epoch ms). */
  updated_at: number;
  /** The wait, as the codec's JSON text. */
  body: string;
}

/** What `WorkflowRunBackend.createEvent` read for the decision, in the transaction that applies it. */
export interface WorkflowCreateRead {
  /** The run, or null. */
  run: WorkflowRunRow | null;
  /** The step asked for (`WorkflowCreateQuery.step_id`), or null. */
  step: WorkflowStepRow | null;
  /** The hook asked for (`hook_id`), or null. */
  hook: WorkflowHookRow | null;
  /** The wait asked for (`wait_id`), or null. */
  wait: WorkflowWaitRow | null;
  /** The live hook holding the token asked for (`token`), or null. */
  token_holder: { run_id: string; hook_id: string } | null;
  /** Whether the run's log holds an event of `recorded.event_type` with `recorded.correlation_id`. */
  recorded: boolean;
}

/** A write of one World entity: `insert` a new row (an existing one is a conflict) or `update` the one read. */
export interface WorkflowEntityWrite<R> {
  /** Insert or update. */
  op: 'insert' | 'update';
  /** The row's new value. */
  row: R;
}

/** What one `createEvent` writes, as the decision made it: entity writes, removals, then the events. */
export interface WorkflowCreatePlan {
  /** The run to write. */
  run?: WorkflowEntityWrite<WorkflowRunRow>;
  /** The step to write. */
  step?: WorkflowEntityWrite<WorkflowStepRow>;
  /** The hook to insert. */
  hook?: WorkflowEntityWrite<WorkflowHookRow>;
  /** The wait to write. */
  wait?: WorkflowEntityWrite<WorkflowWaitRow>;
  /** Rows to delete: one hook, or every hook or wait of a run. */
  removals: Array<
    { kind: 'hook'; hook_id: string } | { kind: 'hooks-of-run' | 'waits-of-run'; run_id: string }
  >;
  /** The events to append, in order, on the run's stream (built by the codec); may be empty. */
  events: NewEvent[];
}

/** One `events.create` of a World as the backend runs it: what to read, and the decision over it. */
export interface WorkflowCreateQuery {
  /** The run. */
  run_id: string;
  /** Read this step of the run. */
  step_id?: string;
  /** Read this hook. */
  hook_id?: string;
  /** Read this wait of the run. */
  wait_id?: string;
  /** Read the live hook holding this token. */
  token?: string;
  /** Look for an event of this type with this correlation id in the run's log. */
  recorded?: { correlation_id: string; event_type: string };
  /**
   * The decision (pure, no I/O; it may run again if the transaction is retried): the plan to apply, or a
   * thrown error, which writes nothing and is thrown to the caller as it is.
   */
  decide(read: WorkflowCreateRead): WorkflowCreatePlan;
}

/** How many rows of a World table are in one status. */
export interface WorkflowStatusCount {
  /** The status. */
  status: string;
  /** Rows in it. */
  count: number;
}

/** A keyset page: rows after `after` (the last row a page showed) in the list's order, at most `limit`. */
export interface WorkflowPage<K> {
  /** The last row of the previous page (its keys), or null for the first page. */
  after: K | null;
  /** At most this many rows. */
  limit: number;
  /** Newest first. */
  reverse: boolean;
}

/**
 * The storage of a Workflow SDK World (src/workflow-world/storage.ts): its runs, steps, hooks and waits as
 * rows, and its events as events of the instance's hash chain on each run's stream. Every change comes from
 * `createEvent`, one transaction serialized per run.
 */
export interface WorkflowRunBackend {
  /**
   * In one transaction, under the run's lock (concurrent creates on one run take turns, and each reads what
   * the one before committed): reads what `q` asks for, calls `q.decide`, applies its writes (an `insert`
   * that meets an existing row — or a token a live hook holds — is STATE_CONFLICT with `details.entity`,
   * and nothing is written) and removals, and appends its events. Returns the events as stored.
   */
  createEvent(q: WorkflowCreateQuery): Promise<EventRecord[]>;
  /** The run, or null. */
  getRun(run_id: string): Promise<WorkflowRunRow | null>;
  /** Runs in (created_at, run_id) order, of one workflow and / or one status. */
  listRuns(
    q: { workflow_name: string | null; status: string | null } & WorkflowPage<{
      created_at: number;
      id: string;
    }>,
  ): Promise<WorkflowRunRow[]>;
  /** The step of the run, or null. */
  getStep(run_id: string, step_id: string): Promise<WorkflowStepRow | null>;
  /** A run's steps in (created_at, step_id) order. */
  listSteps(
    q: { run_id: string } & WorkflowPage<{ created_at: number; id: string }>,
  ): Promise<WorkflowStepRow[]>;
  /** The live hook, or null. */
  getHook(hook_id: string): Promise<WorkflowHookRow | null>;
  /** The live hook holding `token`, or null. */
  getHookByToken(token: string): Promise<WorkflowHookRow | null>;
  /** Live hooks (of one run, or all) in (created_at, hook_id) order. */
  listHooks(
    q: { run_id: string | null } & WorkflowPage<{ created_at: number; id: string }>,
  ): Promise<WorkflowHookRow[]>;
  /** A run's waits (until the run ends, which deletes them) in (created_at, correlation_id) order. */
  listWaits(
    q: { run_id: string } & WorkflowPage<{ created_at: number; id: string }>,
  ): Promise<WorkflowWaitRow[]>;
  /** How many runs, and how many steps of every run, are in each status (statuses with none left out). */
  countStatuses(): Promise<{ runs: WorkflowStatusCount[]; steps: WorkflowStatusCount[] }>;
  /** A run's events in stream_seq order, after `after` (a stream_seq). */
  listEvents(q: { run_id: string } & WorkflowPage<number>): Promise<EventRecord[]>;
  /** The run's `seq`-th event, or null. */
  getEvent(run_id: string, seq: number): Promise<EventRecord | null>;
  /** World events with this correlation id, of any run, in position order, after `after` (a position). */
  listEventsByCorrelation(q: { correlation_id: string } & WorkflowPage<number>): Promise<EventRecord[]>;
}

/** A chunk of a Workflow SDK World's byte stream as a dump holds it: its row, the bytes in base64. */
export interface WorkflowChunkRowDump {
  /** The stream's name. */
  name: string;
  /** The row's dense, 0-based position in its stream. */
  chunk_index: number;
  /** The run the stream is filed under. */
  run_id: string;
  /** The chunk's bytes, base64 (empty for a close). */
  data: string;
  /** Whether this row is the stream's close. */
  eof: boolean;
  /** When it was written (epoch ms). */
  created_at: number;
}

/** A row of a Workflow SDK World's runs, steps, hooks or waits, as a dump holds it (verbatim). */
export type WorkflowRowRecord =
  | { t: 'workflow_run'; row: WorkflowRunRow }
  | { t: 'workflow_step'; row: WorkflowStepRow }
  | { t: 'workflow_hook'; row: WorkflowHookRow }
  | { t: 'workflow_wait'; row: WorkflowWaitRow };
