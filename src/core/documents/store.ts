// The versioned-document service (`inst.docs.*`): compare-and-swap commits with history and provenance,
// validated by the document's kind; reads at any version, diffs, forks and projections; human decisions.
// A thin facade: each method hands the store's one state object to the function of its sibling module.

import type { StoreBackend } from '../backend.js';
import { checkInput } from '../input.js';
import type {
  CommitInput,
  CommitResult,
  DecisionAnswer,
  DocumentRecord,
  HistoryEntry,
  Json,
  JsonObject,
  WorkItem,
} from '../types.js';
import { LatestVersions } from './cache.js';
import { commit } from './commit.js';
import type { DocumentStoreContext, DocumentStoreState, DocumentWriteCounts } from './context.js';
import { answerDecision, escalate } from './decisions.js';
import {
  type ApplyInput,
  type DiffDocumentInput,
  DOC_INPUTS,
  type ForkDocumentInput,
  type KindCall,
  type ListDocumentsInput,
} from './inputs.js';
import { apply, fork } from './operations.js';
import {
  type DocumentDiff,
  diff,
  find,
  findVersion,
  findWrite,
  getDocument,
  history,
  list,
  project,
} from './reads.js';
import { validate } from './rules.js';

/**
 * Versioned documents of the registered kinds. Every write is a compare-and-swap: `commit` names the
 * version it read (`expected_version`, 0 for a new document) and gets STATE_CONFLICT if another writer got
 * there first, so no update is ever lost; the kind's JSON Schema and rules check the body against the
 * previous version, and its effects (work items, events) are written in the same transaction. Each version
 * is kept with its actor, actor kind, provenance and content hash (`history`, `diff`, `get({ version })`);
 * a `write_id` makes a retried commit return the first one's result instead of writing twice.
 * @example
 * const doc = await inst.docs.get({ kind: 'json', id: 'notes' });
 * await inst.docs.commit({ kind: 'json', id: 'notes', expected_version: doc.version, merge_patch: { done: true } });
 */
export class DocumentStore {
  /** What every method runs with (the backend, the context, the kinds, the cache, the counters). */
  readonly #s: DocumentStoreState;

  constructor(backend: StoreBackend, ctx: DocumentStoreContext) {
    this.#s = { backend, ctx, kinds: undefined, latest: new LatestVersions(), writes: new Map() };
  }

  /**
   * Commits a new version if the document is still at `expected_version`; STATE_CONFLICT otherwise. Give
   * exactly one of `body`, `merge_patch` (RFC 7396) or `json_patch` (RFC 6902), or `noop: true` with a
   * `reason` (a version that records a decision to change nothing). @default actor the instance's worker,
   * actor_kind 'system'
   * @example await inst.docs.commit({ kind: 'json', id: 'notes', expected_version: 0, body: { todo: [] } })
   */
  commit(input: CommitInput): Promise<CommitResult> {
    return commit(this.#s, input);
  }

  /**
   * Commits (replays of a `write_id` not counted) and commits refused with STATE_CONFLICT made through this
   * store since it opened, by document kind: this process's share, for metrics (counters that restart at 0).
   */
  writeCounts(): ReadonlyMap<string, Readonly<DocumentWriteCounts>> {
    return this.#s.writes;
  }

  /**
   * Checks a body against its kind (schema and rules, with the stored document as the previous
   * version) without writing anything. Throws the error a commit would throw.
   */
  validate(input: {
    kind: string;
    id: string;
    body: JsonObject;
    actor?: string;
    actor_kind?: CommitInput['actor_kind'];
    role?: string;
  }): Promise<{ kind: string; id: string; ok: true; checked_against: number }> {
    return validate(this.#s, input);
  }

  /**
   * Runs one of the kind's named operations as a CAS commit on the latest version. An operation is a
   * pure function of the current body, so on STATE_CONFLICT it is simply re-run on the new version.
   * @example await inst.docs.apply({ kind: 'workflow-sessions', id: 'deploy', operation: 'set-phase', args: { phase: 'build' } })
   */
  apply(input: ApplyInput): Promise<CommitResult> {
    return apply(this.#s, input);
  }

  /**
   * Puts a document's open questions to humans (e.g. a task-ir's ambiguities): runs its kind's `escalate`
   * operation as one CAS commit (re-run on conflict), whose effects enqueue a decision item per question
   * in the same transaction, and returns the commit with every decision item of the document still
   * waiting for a human. Escalating again writes nothing and asks nothing twice.
   * @example await inst.docs.escalate({ kind: 'task-ir', id: 'login' })
   */
  escalate(input: KindCall): Promise<CommitResult & { decisions: WorkItem[] }> {
    return escalate(this.#s, input);
  }

  /** The latest version, or the one asked for; NOT_FOUND (pruned: true for retention) otherwise. */
  get(input: { kind: string; id: string; version?: number }): Promise<DocumentRecord> {
    return getDocument(this.#s.backend, input);
  }

  /** The latest version, or null (where `get` would be NOT_FOUND). */
  find(kind: string, id: string): Promise<DocumentRecord | null> {
    return find(this.#s.backend, kind, id);
  }

  /**
   * One version from the history: its body and entry, null when it never existed, 'pruned' when retention
   * removed it (where `get({ version })` would throw).
   */
  findVersion(
    kind: string,
    id: string,
    version: number,
  ): Promise<{ body: JsonObject; entry: HistoryEntry } | null | 'pruned'> {
    return findVersion(this.#s.backend, kind, id, version);
  }

  /**
   * The version a commit with this `write_id` wrote, or null: its history entry, and its body unless
   * retention removed it since.
   */
  findWrite(
    kind: string,
    id: string,
    writeId: string,
  ): Promise<{ entry: HistoryEntry; body: JsonObject | null } | null> {
    return findWrite(this.#s.backend, kind, id, writeId);
  }

  /** Commits in order (no-ops included), paged by `after` (a seq). @default limit 100 */
  history(input: { kind: string; id: string; after?: number; limit?: number; reverse?: boolean }): Promise<{
    entries: HistoryEntry[];
    next_after: number | null;
  }> {
    return history(this.#s.backend, input);
  }

  /** RFC 6902 JSON Patch from version `from` (0 = empty) to `to` (default latest). */
  diff(input: DiffDocumentInput): Promise<DocumentDiff> {
    return diff(this.#s.backend, input);
  }

  /** Copies a version into a new document (version 1), recording where it came from. */
  fork(input: ForkDocumentInput): Promise<CommitResult> {
    return fork(this.#s, input);
  }

  /** Only the named fields (JSON pointers or dot paths), with the version they were read at. */
  project(input: { kind: string; id: string; paths: string[] }): Promise<{
    kind: string;
    id: string;
    version: number;
    values: Record<string, Json>;
    missing: string[];
  }> {
    return project(this.#s.backend, input);
  }

  /**
   * Documents (without bodies), by kind then id; with `after` (`kind/id` of the last document a page
   * showed), the documents after it in that order, so paging visits each once. An `after` naming no
   * document is INVALID_INPUT. @default limit 1000
   */
  list(input: ListDocumentsInput = {}): Promise<Array<Omit<DocumentRecord, 'body'>>> {
    return list(this.#s.backend, input);
  }

  /** Removes history older than the newest `keep` versions (never the latest). */
  async prune(input: { kind: string; id: string; keep: number }): Promise<{ removed: number }> {
    const i = checkInput<{ kind: string; id: string; keep: number }>('prune', input, DOC_INPUTS.prune);
    return { removed: await this.#s.backend.docs.prune(i.kind, i.id, i.keep) };
  }

  /**
   * A human's answer to a decision a document asked for (a work item the document enqueued, waiting for a
   * human): the document records the answer (its kind's `onWorkItemResolved`) and the item is resolved, in
   * one transaction, so a crash never leaves one without the other. A repeated identical answer returns the
   * item unchanged; any other answer to a finished item is INVALID_TRANSITION.
   */
  answerDecision(item: WorkItem, a: DecisionAnswer): Promise<WorkItem> {
    return answerDecision(this.#s, item, a);
  }
}
