// The public shapes of versioned documents: a commit's input (patches, overrides) and result, a document at
// one version, and an entry of its history.
import type { ActorKind, Json, JsonObject, Provenance } from '../primitives.js';

/** An explicit permission to break named rules, recorded in the write's history entry. */
export interface Override {
  /** Rule names being overridden, e.g. `budget-limit`. */
  rules: string[];
  reason: string;
}

/** An RFC 6902 JSON Patch operation. */
export interface JsonPatchOp {
  op: 'add' | 'remove' | 'replace' | 'move' | 'copy' | 'test';
  path: string;
  value?: Json;
  from?: string;
}

/**
 * `docs.commit`: a compare-and-swap write of `kind`/`id` against `expected_version` (0 creates it), as a whole
 * `body`, a `merge_patch` or a `json_patch`. @default actor_kind 'system'
 */
export interface CommitInput {
  /** The document's kind (one the kind registry knows, e.g. `json`). */
  kind: string;
  /** The document's id within its kind. */
  id: string;
  /** The version the caller read; 0 means the document must not exist yet. */
  expected_version: number;
  /** The whole new body … */
  body?: JsonObject;
  /** … or an RFC 7396 merge patch against the expected version … */
  merge_patch?: JsonObject;
  /** … or an RFC 6902 JSON Patch against the expected version. */
  json_patch?: JsonPatchOp[];
  /** Record an explicit no-op (needs `reason`): history entry, version unchanged. */
  noop?: boolean;
  /** Who writes it, kept in the history entry. @default the instance's agent name */
  actor?: string;
  /** What kind of writer: a `model` write needs `provenance`. @default 'system' */
  actor_kind?: ActorKind;
  /** The writer's role, for kinds with field permissions. */
  role?: string;
  /**
   * Where the write came from; a `model` write needs model_id, run_id, step_id, and input_hash or prompt_ref.
   */
  provenance?: Provenance;
  /** Idempotency key: a retry with the same write_id and payload returns the original result. */
  write_id?: string;
  /** Why, kept in the history entry (a no-op needs one). */
  reason?: string;
  /** Permission to break named rules of the kind, kept in the history entry. */
  override?: Override;
}

/** What a commit returns: the new version (or the same one for a no-op or a replayed `write_id`). */
export interface CommitResult {
  kind: string;
  id: string;
  /** The version after the commit (unchanged for a no-op or a commit that changed nothing). */
  version: number;
  previous_version: number;
  /** False for no-ops and for commits whose body equals the current one. */
  changed: boolean;
  noop: boolean;
  /** True when this was a retry of an earlier commit with the same write_id. */
  replayed: boolean;
  content_hash: string;
  write_id: string | null;
  committed_at: string;
  body: JsonObject;
}

/** A document at one version. */
export interface DocumentRecord {
  kind: string;
  id: string;
  version: number;
  body: JsonObject;
  content_hash: string;
  created_at: string;
  updated_at: string;
  forked_from: { kind: string; id: string; version: number } | null;
}

/** One commit in a document's history (no-ops included). */
export interface HistoryEntry {
  seq: number;
  version: number;
  parent_version: number;
  noop: boolean;
  content_hash: string;
  actor: string;
  actor_kind: ActorKind;
  provenance: Provenance | null;
  write_id: string | null;
  reason: string | null;
  override: Override | null;
  created_at: string;
}
