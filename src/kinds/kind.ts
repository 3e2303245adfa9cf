// What a kind is: a JSON Schema plus small functions for logical rules, transitions, role permissions
// and side effects. The store core calls these; it knows nothing about any one kind.
import type {
  ActorKind,
  EnqueueInput,
  Json,
  JsonObject,
  Override,
  Provenance,
  WorkItem,
} from '../core/types.js';

export type { ActorKind, Override, Provenance } from '../core/types.js';
export { ACTOR_KINDS } from '../core/types.js';

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
  /** Reads the latest version of another document of this instance (e.g. the task-ir a run starts from). */
  read(kind: string, id: string): Promise<DocSnapshot | null>;
}

/** Work and events a kind asks for, written in the same transaction as the commit. */
export interface CommitEffects {
  enqueue?: EnqueueInput[];
  events?: Array<{ type: string; data?: Json }>;
}

export interface KindDefinition {
  /** Registry name, e.g. `agent-run`. */
  name: string;
  /** One line for help output. */
  description: string;
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
   * Called after a work item this kind enqueued (as an effect) is resolved; returns the new body to
   * commit to the document (e.g. the ambiguity now resolved), or null for nothing to do.
   */
  onWorkItemResolved?(item: WorkItem, doc: DocSnapshot): JsonObject | null;
}
