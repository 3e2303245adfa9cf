// What a kind is: a JSON Schema plus small functions for logical rules, transitions, role permissions
// and side effects. The store core calls these; it knows nothing about any one kind.
import type { JsonSchema, ObjectSchema } from './json-schema.js';
import type {
  ActorKind,
  EnqueueInput,
  EventRecord,
  Json,
  JsonObject,
  Override,
  Provenance,
  WorkItem,
} from './types.js';

export type { ActorKind, Override, Provenance } from './types.js';
export { ACTOR_KINDS } from './types.js';

/** A document as read from the store. */
export interface DocSnapshot {
  kind: string;
  id: string;
  version: number;
  body: JsonObject;
}

/** What a kind's rules see about a write. */
export interface CommitContext {
  kind: string;
  id: string;
  /** The version being replaced (0 for a new document) and the one being written. */
  fromVersion: number;
  toVersion: number;
  actor: string;
  actor_kind: ActorKind;
  /** The writer's role, for kinds with field permissions (e.g. Grid's MC, executor, planner). */
  role: string | null;
  provenance: Provenance | null;
  override: Override | null;
  reason: string | null;
  /** Epoch ms of the write. */
  now: number;
  /**
   * The work item a human is answering with this commit, as it will be once answered (only the store's
   * decision path sets it; the item is resolved in the same transaction). Absent for every other write.
   */
  answering?: WorkItem | null;
  /** Reads the latest version of another document of this instance (e.g. the task-ir a run starts from). */
  read(kind: string, id: string): Promise<DocSnapshot | null>;
  /**
   * The positions of `positions` that name no event in this instance's log (none: all of them are there),
   * for evidence that cites an event: it must cite one that was recorded. The log is append-only, so an
   * event found now is there for good.
   */
  missingEvents(positions: readonly number[]): Promise<number[]>;
}

/** Work and events a kind asks for, written in the same transaction as the commit. */
export interface CommitEffects {
  enqueue?: EnqueueInput[];
  events?: Array<{ type: string; data?: Json }>;
}

/**
 * A document kind: the JSON Schema its bodies follow and the rules the store runs on every commit
 * (`registerKind` adds one; docs/kinds.md, "Your own kind").
 */
export interface KindDefinition extends KindExtensions {
  /** Registry name, e.g. `agent-run`. */
  name: string;
  /** One line for help output. */
  description: string;
  /**
   * The event types `check` returns as effects. `append` refuses them, as it refuses the store's own
   * event types, so the history a kind writes with its commits cannot be forged by appending look-alikes
   * (through MCP, HTTP or the CLI, by anyone who may append). A kind's own commits still write them.
   */
  emits?: readonly string[];
  /** JSON Schema of the body (validated with ajv by the core before `check`). */
  schema: Record<string, unknown>;
  /** Largest serialized body in bytes. @default 1 MiB */
  maxBytes?: number;
  /**
   * A body field the core keeps equal to the document version (e.g. AgentState's `state_version`):
   * set on every write, so callers cannot forge it.
   */
  versionField?: string;
  /**
   * Refuses document ids this kind cannot hold; throws INVALID_INPUT naming `id`. The store calls it
   * before every commit (and fork), so a refused id is never stored. Kinds with a file view use
   * `checkFileId` (../kinds/file-id.ts): their ids become file names. `registerKind` sets that default
   * for a kind with a `file` and no `checkId`. @default no check beyond the id's length and characters
   */
  checkId?(id: string): void;
  /**
   * Logical rules, status transitions and role permissions. Throws ValidationFailedError (naming the
   * JSON pointer and the rule), InvalidTransitionError, PermissionDeniedError, AmbiguityUnresolvedError …;
   * may return effects to apply atomically with the commit. `prev` is null for a new document.
   * May also normalize `next` in place (e.g. maintain `updated_at`), before it is hashed and stored.
   */
  check?(
    next: JsonObject,
    prev: JsonObject | null,
    ctx: CommitContext,
  ): CommitEffects | undefined | Promise<CommitEffects | undefined>;
  /**
   * A human answers a decision this kind enqueued (an effect item waiting for a human): returns the body
   * to commit with the answer (e.g. the ambiguity resolved by `answer.actor`), committed in the same
   * transaction as the item's resolution, or null when the document has nothing to record. Throws
   * (INVALID_INPUT, INVALID_TRANSITION, …) to refuse an answer, e.g. one without the answer itself.
   * `item` is the item as answered: its status, result and error are the human's.
   */
  onWorkItemResolved?(item: WorkItem, doc: DocSnapshot, answer: { actor: string }): JsonObject | null;
}

/** What a file codec and an operation may read besides the body. */
export interface ViewContext {
  /** Epoch ms now. */
  now: number;
  /** Recent events of the document's stream, newest first (for activity sections). */
  recentEvents: Array<{
    position: number;
    type: string;
    created_at: string;
    actor: string | null;
    data: Json;
  }>;
}

/**
 * How many of a document's newest events a view is given: ten writes' worth, for kinds that append up to
 * four events per write (Grid's activity table).
 */
export const VIEW_RECENT_EVENTS = 40;

/** A view's context from the newest events of the document's stream (read newest first). */
export function viewContextOf(now: number, recent: readonly EventRecord[]): ViewContext {
  return {
    now,
    recentEvents: recent.map((e) => ({
      position: e.position,
      type: e.type,
      created_at: e.created_at,
      actor: e.actor,
      data: e.data,
    })),
  };
}

/**
 * The human-readable file a kind's documents are mirrored to (`.grid/STATE.md`, `.aios/<id>-state.yaml`,
 * `.copilot/state/<id>.json`). The store is the truth; the file is a view stamped with the version it shows.
 */
export interface KindFile {
  /** Path of the document's file, relative to the project root. */
  defaultPath(id: string): string;
  /** The document id a path belongs to, or null when the path is not this kind's file. */
  idFromPath(path: string): string | null;
  /**
   * Where the body names its own document id, for a kind whose file is named after a body field (aios:
   * `instance_id`). `validate`, `import` and `recover` refuse a file whose name gives another id
   * (VALIDATION_FAILED, rule `file-name-matches-id`), so `.aios/a-state.yaml` cannot hold instance `b`.
   */
  bodyId?(body: JsonObject): { pointer: string; id: Json | undefined };
  /**
   * Parses file text into the body and the stamp it carries (null for a file never exported by
   * agentstate). Throws InvalidInputError / ValidationFailedError naming the line or field on malformed
   * text: bad YAML/JSON, missing or broken frontmatter fences, binary content, oversize input.
   */
  parse(text: string): { body: JsonObject; stamp: FileStamp | null };
  /**
   * Renders the body at `stamp.version`. `previous` is the text of the file being replaced: YAML
   * renderers keep its comments and key order where the data did not change.
   */
  render(body: JsonObject, stamp: FileStamp, ctx: ViewContext, previous?: string): string;
}

/** The version a file shows, written into the file by `render` and read back by `parse`. */
export interface FileStamp {
  kind: string;
  id: string;
  version: number;
}

/**
 * A named change an agent makes as it works ("start a session", "update position"): a pure function
 * from the current body to the next. The store runs it as one CAS commit (and rewrites the file).
 */
export interface KindOperation {
  /** kebab-case, e.g. `start-session`, `update-position`. */
  name: string;
  summary: string;
  /** The operation's arguments (same checker as every other input). */
  input: import('./input.js').InputSpec;
  /** Which argument, if any, is positional on the CLI (after the document id). */
  positional?: string;
  /**
   * Returns the next body. `body` is null when the document does not exist yet (only operations that
   * create it accept that; others throw NotFoundError). Must not mutate `body`. `args` have been checked
   * against `input` by the store (`DocumentStore.apply`), the only caller: do not check them again.
   */
  apply(body: JsonObject | null, args: Record<string, unknown>, ctx: OperationContext): JsonObject;
}

/** What a kind operation's `apply` may read besides the body and its arguments. */
export interface OperationContext {
  /** Epoch ms of the write. */
  now: number;
  /** Who runs the operation (the call's `actor`, else the instance's agent name). */
  actor: string;
  /** The caller's role, for kinds with field permissions; null when the call names none. */
  role: string | null;
}

/**
 * The area an operation of the service table belongs to, for grouping in help, tool lists and routes
 * (`workflow`: the runs of a Workflow SDK World kept in the store).
 */
export type OperationGroup = 'work' | 'events' | 'documents' | 'files' | 'reports' | 'instance' | 'workflow';

/**
 * An operation of the service table (src/service/): the one description every edge (CLI, workflows, MCP
 * tools, HTTP routes, OpenAPI) is generated from. The service's own operations and those a kind declares
 * (`KindExtensions.serviceOperations`) have this one shape. `Inst` is the open instance `run` gets: the core
 * knows no instance, so the service names it (its `Operation` is this with its `Instance`).
 */
export interface ServiceOperation<Inst = unknown, I = Record<string, unknown>, O = unknown> {
  /** snake_case, unique: the MCP tool name, the HTTP route `/api/v1/<name>`, the table key. */
  name: string;
  group: OperationGroup;
  /** One line, for help output and tool lists (models read it: keep it short and exact). */
  description: string;
  /** JSON Schema of the input object (validated before `run`; unknown fields are refused). */
  input: ObjectSchema;
  /** JSON Schema of the result. */
  output: JsonSchema;
  /** Whether it changes the store or files (HTTP POST and MCP annotations follow it). */
  writes: boolean;
  /** A repeated identical call changes nothing more (MCP's idempotentHint). */
  idempotent?: boolean;
  /**
   * What the operation needs of an instance: `required` (default) an existing one; `create` opens or creates
   * it (init, import); `optional` runs without one when none is named (gates, resume); `none` never opens
   * one (validating a file). `run` gets null for an instance it did not need.
   */
  instance?: 'required' | 'create' | 'optional' | 'none';
  /**
   * Reads paths the caller names on the local filesystem (state files, dumps): offered by the CLI and the
   * library, never by a network edge (MCP over HTTP, the HTTP API), whose callers do not own this machine.
   */
  local?: boolean;
  /**
   * A stream, not one result: `run` returns an `EventWatch`-like object whose async iterable yields results
   * until `ctx.signal` aborts (tailing the log). Offered by the edges that stream — the CLI's `--follow`,
   * Server-Sent Events, MCP notifications — and by no edge that answers once (HTTP routes, tools, workflows).
   */
  streams?: boolean;
  /**
   * A list an edge pages through: where the records are in the result, the page-size field, and the input
   * that asks for the records after one. The MCP edge keeps a page within its result budget with it, and
   * the HTTP API caps its page size and links the next page.
   */
  page?: PageSpec<I>;
  /** Work done before the instance is opened (e.g. checking a dump), so a refusal creates nothing. */
  prepare?(input: I, ctx: Pick<RunContext, 'progress'>): Promise<unknown>;
  /** Runs on an open instance (null only for `optional` / `none`) with an input that passed `input`. */
  run(inst: Inst, input: I, ctx: RunContext): Promise<O>;
}

/** How an operation's result pages (`ServiceOperation.page`). */
export interface PageSpec<I = Record<string, unknown>> {
  /** The result's field that holds the records; absent when the result is the list itself. */
  list?: string;
  /** The input field that sets the page size. */
  limit: string;
  /** The page size when the call names none. */
  defaultLimit: number;
  /**
   * The input fields that ask for the records after `last`, the last record an answer kept (merged over the
   * call's own input: the filters stay).
   */
  // biome-ignore lint/suspicious/noExplicitAny: a record of the operation's list, whatever its type
  next(last: any, input: I): Record<string, unknown>;
}

/** A running count of long work, and the step it is in (e.g. `checking the dump: events`). */
export type Progress = (done: number, phase?: string) => void;

/** What an edge hands an operation besides its input. */
export interface RunContext {
  /** What `prepare` returned. */
  prepared?: unknown;
  /**
   * Called with a running count during long work (verify, export, import), for edges that show progress;
   * `phase` names what is being counted when the work has more than one step.
   */
  progress?: Progress;
  /** Ends a streaming operation (and any long wait); the edge aborts it when its client goes away. */
  signal?: AbortSignal;
  /** How often a streaming operation looks for more when its backend cannot push, ms (the edge's setting). */
  pollMs?: number;
  /**
   * Where the call came from, as the edge knows it (never an input field, so no caller names it): recorded by
   * the operations that answer for a person — resolve (a decision's answer), cancel, unpark. The MCP edge sets
   * it for an answer a person gave through the host's form (`via: 'elicitation'`).
   */
  provenance?: Provenance;
  /**
   * The position each worker's last resume returned, kept by an edge for its callers (the MCP server's, so a
   * model's `resume` reads what is new since its last call): resume starts after the worker's when the call
   * names no `after`, and records the position it returns.
   */
  cursors?: Map<string, number>;
}

/** Optional parts of a kind beyond validation; the core and the edges use them when present. */
export interface KindExtensions {
  /** The file view of this kind. */
  file?: KindFile;
  /** Operations, exposed as `agentstate <cli> <operation> <id> …`. */
  operations?: KindOperation[];
  /**
   * Operations of the service table this kind brings (e.g. workflow-sessions' `gate`, task-ir's
   * `escalate`): served by every edge like the service's own. They load with the table, so their `run`
   * imports what it needs with import(). Only built-in kinds' are served (src/kinds/service-operations.ts lists
   * them); `registerKind` refuses a kind that declares others.
   */
  serviceOperations?: readonly ServiceOperation<never, never>[];
  /** CLI command group for the operations, e.g. `grid`, `aios`, `session`. */
  cli?: string;
}
