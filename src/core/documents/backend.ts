// The document half of the storage interface (StoreBackend.docs): a validated write for the conditional
// statement, reads of documents and their history, and the rows a dump holds of them.
import type { NewEvent } from '../events/backend.js';
import type { ActorKind, JsonObject, Provenance } from '../primitives.js';
import type { NewWorkItem, StatusChange } from '../work/backend.js';
import type { DocumentRecord, HistoryEntry, Override } from './types.js';

/** Who wrote a version and why, as its history entry keeps it. */
export interface CommitAttribution {
  actor: string;
  actor_kind: ActorKind;
  provenance: Provenance | null;
  write_id: string | null;
  /** Hash of the request payload, to tell a retry from a reuse of the write id. */
  request_hash: string;
  reason: string | null;
  override: Override | null;
}

/** A validated write, ready for the conditional statement. */
export interface DocumentWrite extends CommitAttribution {
  kind: string;
  id: string;
  expected_version: number;
  /**
   * Content hash of the version being replaced (null when creating): the conditional write checks it with
   * the version, so a commit built on a remembered copy never lands on a document that changed behind it.
   */
  expected_hash: string | null;
  /** The new body (for a no-op: the current body, not written). */
  body: JsonObject;
  /**
   * The body's canonical JSON text (canonicalJson, what content_hash covers), when the store has it; a
   * backend that keeps the body as parsed JSON (PostgreSQL's jsonb) may send it instead of serializing
   * `body` again. Absent for a no-op.
   */
  body_text?: string;
  content_hash: string;
  noop: boolean;
  forked_from: { kind: string; id: string; version: number } | null;
  now: number;
  /** Keep only the newest N versions of history (null: keep all). Never removes the latest. */
  keep_versions: number | null;
  /** Written in the same transaction: the state_committed event, and any effects of the kind. */
  events: NewEvent[];
  enqueue: NewWorkItem[];
  /**
   * Status changes of work items in the same transaction (a human's answer to a decision the document
   * asked for); one that matches no row fails the whole commit with the reason.
   */
  resolve: StatusChange[];
}

/** The document half of a backend: versioned documents, each commit a conditional write with its history entry. */
export interface DocumentBackend {
  /** The document at its latest version, or null when there is none. */
  get(kind: string, id: string): Promise<DocumentRecord | null>;
  /** A version from history: the body, null when it never existed, 'pruned' when retention removed it. */
  getVersion(
    kind: string,
    id: string,
    version: number,
  ): Promise<{ body: JsonObject; entry: HistoryEntry } | null | 'pruned'>;
  /** The history entry (and body) written with this write id, if any. */
  findWrite(
    kind: string,
    id: string,
    writeId: string,
  ): Promise<{ entry: HistoryEntry; body: JsonObject | null; request_hash: string } | null>;
  /**
   * Writes `w` only if the document is still at `w.expected_version` (one conditional statement),
   * with its history entry, events and enqueued items, in one transaction. STATE_CONFLICT otherwise.
   */
  commit(w: DocumentWrite): Promise<HistoryEntry>;
  /**
   * History entries of the document in seq order after `afterSeq` (newest first with `reverse`: those before
   * it, 0 meaning from the newest), at most `limit`.
   */
  history(
    kind: string,
    id: string,
    q: { afterSeq: number; limit: number; reverse: boolean },
  ): Promise<HistoryEntry[]>;
  /**
   * Documents by kind then id (of one kind, or all), at most `limit`; with `after`, those after that
   * document in this order, and none when it is no document.
   */
  list(
    kind: string | null,
    limit: number,
    after?: { kind: string; id: string },
  ): Promise<Array<Omit<DocumentRecord, 'body'>>>;
  /** Removes history older than the newest `keep` versions; returns the number of entries removed. */
  prune(kind: string, id: string, keep: number): Promise<number>;
}

/** A document row as a dump holds it (times in epoch ms). */
export interface DocumentRowDump {
  kind: string;
  id: string;
  version: number;
  body: JsonObject;
  content_hash: string;
  forked_from: { kind: string; id: string; version: number } | null;
  created_at: number;
  updated_at: number;
}

/** A history entry as a dump holds it: who wrote it, and the body of that version (null for a no-op). */
export interface HistoryRowDump extends CommitAttribution {
  kind: string;
  id: string;
  seq: number;
  version: number;
  parent_version: number;
  noop: boolean;
  body: JsonObject | null;
  content_hash: string;
  created_at: number;
}
