// The commit path of `docs.commit` (and of every write built on it: apply, fork, a human's answer): the
// counted, replayable compare-and-swap commit, and its one write split into named steps — check the
// shape → replay a write id → read → patch → the no-change test → the kind's rules → the CAS write → the
// cache. The steps are plain functions called in turn by `write`: no await, closure or copy of their own.
import {
  InvalidInputError,
  ProvenanceRequiredError,
  StateConflictError,
  versionConflict,
} from '../../errors.js';
import type { DocumentWrite, NewEvent, NewWorkItem, StatusChange } from '../backend.js';
import { committedData, noopData } from '../codecs/documents.js';
import { checkInput } from '../input.js';
import { applyMergePatch, canonicalJson, cloneJson, sha256 } from '../json.js';
import type { CommitEffects, KindDefinition } from '../kind.js';
import type {
  ActorKind,
  CommitInput,
  CommitResult,
  DocumentRecord,
  EnqueueInput,
  HistoryEntry,
  Json,
  JsonObject,
  Provenance,
  WorkItem,
} from '../types.js';
import { normalizeEnqueue } from '../work/inputs.js';
import { ownedKey } from '../work/owners.js';
import { latestKey } from './cache.js';
import {
  type DocumentStoreState,
  type DocumentWriteCounts,
  type KindResolver,
  loadKinds,
} from './context.js';
import { DOC_INPUTS } from './inputs.js';
import { applyJsonPatch } from './patch.js';
import { commitContext, type PreparedCommit, prepareCommit } from './rules.js';

/** A human's answer to a decision a document asked for: the item as answered and the change that records it. */
export interface Answer {
  item: WorkItem;
  change: StatusChange;
}

/** `docs.commit`: the input checked, then the commit (see `DocumentStore.commit`). */
export async function commit(s: DocumentStoreState, input: CommitInput): Promise<CommitResult> {
  const i = checkInput<CommitInput>('commit', input, DOC_INPUTS.commit);
  return commitDocument(s, i, null);
}

/**
 * A checked commit, counted in `writeCounts`: `forkedFrom` is the version a fork copies, `answer` the human
 * decision the commit records (its item is resolved in the same transaction).
 */
export async function commitDocument(
  s: DocumentStoreState,
  i: CommitInput,
  forkedFrom: DocumentWrite['forked_from'],
  answer: Answer | null = null,
): Promise<CommitResult> {
  try {
    const result = await commitAnswered(s, i, forkedFrom, answer);
    if (!result.replayed) countWrite(s.writes, i.kind, 'commits');
    return result;
  } catch (err) {
    if (err instanceof StateConflictError) countWrite(s.writes, i.kind, 'conflicts');
    throw err;
  }
}

async function commitAnswered(
  s: DocumentStoreState,
  i: CommitInput,
  forkedFrom: DocumentWrite['forked_from'],
  answer: Answer | null,
): Promise<CommitResult> {
  try {
    return await commitOnce(s, i, forkedFrom, answer);
  } catch (err) {
    if (!(err instanceof StateConflictError) || i.write_id === undefined) throw err;
    // A retry racing its original (same write id, same moment) loses the conditional write or the
    // write id's unique index to it; once the original has landed, the retry's answer is its result.
    const replayed = await replay(s, i, requestHashOf(i, forkedFrom));
    if (replayed) return replayed;
    throw err;
  }
}

function countWrite(
  writes: Map<string, DocumentWriteCounts>,
  kind: string,
  what: keyof DocumentWriteCounts,
): void {
  let c = writes.get(kind);
  if (c === undefined) {
    c = { commits: 0, conflicts: 0 };
    writes.set(kind, c);
  }
  c[what]++;
}

async function commitOnce(
  s: DocumentStoreState,
  i: CommitInput,
  forkedFrom: DocumentWrite['forked_from'],
  answer: Answer | null,
): Promise<CommitResult> {
  const key = latestKey(i.kind, i.id);
  const cached = s.latest.get(key);
  if (cached === undefined || cached.version !== i.expected_version) {
    return write(s, i, forkedFrom, null, key, answer);
  }
  try {
    return await write(s, i, forkedFrom, cached, key, answer);
  } catch (err) {
    if (!(err instanceof StateConflictError)) throw err;
    // Someone else wrote the document (or it changed behind the store): decide again on a fresh read.
    s.latest.forget(key);
    return write(s, i, forkedFrom, null, key, answer);
  }
}

/**
 * The original result of an earlier commit with `i.write_id`, or null when there is none; STATE_CONFLICT
 * when the write id was used for a different change.
 */
async function replay(
  s: DocumentStoreState,
  i: CommitInput,
  requestHash: string,
): Promise<CommitResult | null> {
  const prior = await s.backend.docs.findWrite(i.kind, i.id, i.write_id!);
  if (!prior) return null;
  if (prior.request_hash !== requestHash) {
    // Stryker disable next-line OptionalChaining: the write id was found in this document's history, and a document with history is never deleted, so get() is not null here
    const actual = (await s.backend.docs.get(i.kind, i.id))?.version ?? 0;
    throw new StateConflictError(
      `write_id ${i.write_id} was already used for a different change to ${i.kind}/${i.id}`,
      { kind: i.kind, id: i.id, write_id: i.write_id, expected: i.expected_version, actual },
    );
  }
  let body = prior.body;
  if (body === null) {
    const v = await s.backend.docs.getVersion(i.kind, i.id, prior.entry.version);
    body = v && v !== 'pruned' ? v.body : {};
  }
  return commitResult(i.kind, i.id, prior.entry, body, true, !prior.entry.noop);
}

/** The commit itself; `cached` is the document at `expected_version` when the store remembers it. */
async function write(
  s: DocumentStoreState,
  i: CommitInput,
  forkedFrom: DocumentWrite['forked_from'],
  cached: DocumentRecord | null,
  /** The document's `latest` key. */
  key: string,
  /** The human decision this commit answers (its item is resolved in the same transaction). */
  answer: Answer | null,
): Promise<CommitResult> {
  const kinds = s.kinds ?? (await loadKinds(s));
  const kind = kinds.get(i.kind);
  // Before anything is read or written: an id this kind refuses (e.g. one that is a path) is never stored.
  kind.checkId?.(i.id);
  const actorKind = checkShape(i);
  // Only a write id is ever compared against the request, so only then is it worth hashing.
  // Stryker disable next-line StringLiteral: the request hash of a write without a write id is stored but never read (replay compares it only for an entry found by its write id)
  const requestHash = i.write_id === undefined ? '' : requestHashOf(i, forkedFrom);
  if (i.write_id !== undefined) {
    const replayed = await replay(s, i, requestHash);
    if (replayed) return replayed;
  }

  const current = cached ?? (await s.backend.docs.get(i.kind, i.id));
  const actual = current?.version ?? 0;
  if (actual !== i.expected_version) {
    throw versionConflict(i.kind, i.id, actual, i.expected_version);
  }
  // One object per write, what every later step needs (in place of a closure per step).
  const w: CommitScope = {
    i,
    forkedFrom,
    current,
    actor: i.actor ?? s.ctx.actor,
    actorKind,
    requestHash,
    // An answer and the commit that records it are one moment: the same time on all of their events.
    now: answer?.change.now ?? s.ctx.clock(),
    stream: documentStream(i.kind, i.id),
    answer,
    keepVersions: s.ctx.keepVersions,
  };

  if (i.noop) {
    if (!current)
      throw new InvalidInputError(`${i.kind}/${i.id} does not exist: there is nothing to leave unchanged`, {
        field: 'noop',
      });
    const entry = await s.backend.docs.commit(noopWrite(w, current));
    return commitResult(i.kind, i.id, entry, structuredClone(current.body), false, false);
  }

  // A kind's rules may fill in fields of the new body, so then it shares no object with the version it is
  // built on (the store's remembered copy among them), which a refused write would otherwise have changed.
  const next = patched(i, current, kind.check !== undefined);
  const vf = kind.versionField;
  // Nothing changed? Compare against the stored hash (with the stored version field, if the kind has one).
  if (vf && current) next[vf] = current.body[vf] as Json;
  // One canonical text (and hash) serves the no-change test, the size limit and the content hash.
  const text = canonicalJson(next);
  let hash = sha256(text);
  if (current && hash === current.content_hash) {
    if (cached) {
      // No conditional write will check the remembered copy: confirm the document still holds it.
      const stored = await s.backend.docs.get(i.kind, i.id);
      if (stored?.version !== cached.version || stored.content_hash !== cached.content_hash) {
        s.latest.forget(key);
        return write(s, i, forkedFrom, null, key, answer);
      }
    }
    return unchanged(i, current, cached);
  }
  const pending = checkKindRules(s, kinds, kind, w, next, vf ? undefined : text);
  // Only a kind with rules of its own needs the commit context (and an await).
  const { effects, text: stored, bytes } = pending instanceof Promise ? await pending : pending;
  if (stored !== text) hash = sha256(stored);
  const entry = await s.backend.docs.commit(
    documentWrite(w, next, stored, hash, false, committedEvents(w, hash, effects), enqueued(w, effects)),
  );
  remember(s, key, w, entry, next, hash, bytes);
  return commitResult(i.kind, i.id, entry, next, false, true);
}

// The steps of `write`, in the order it takes them.

/**
 * The shape of a commit, before anything is read: exactly one of body, merge patch or JSON Patch (or a
 * no-op with a reason), a model's provenance, a well-formed override. Returns the writer's actor kind.
 */
function checkShape(i: CommitInput): ActorKind {
  const changes =
    (i.body === undefined ? 0 : 1) +
    (i.merge_patch === undefined ? 0 : 1) +
    (i.json_patch === undefined ? 0 : 1);
  if (i.noop) {
    if (changes > 0) throw new InvalidInputError('a no-op carries no body or patch', { field: 'noop' });
    if (!i.reason) throw new InvalidInputError('a no-op needs a reason', { field: 'reason' });
  } else if (changes !== 1) {
    throw new InvalidInputError(
      'give exactly one of body, merge_patch or json_patch (or noop: true with a reason)',
      {
        field: 'body',
      },
    );
  }
  const actorKind = i.actor_kind ?? 'system';
  checkProvenance(actorKind, i.provenance);
  if (i.override !== undefined) {
    const o = i.override as { rules?: unknown; reason?: unknown };
    if (
      !Array.isArray(o.rules) ||
      o.rules.some((r) => typeof r !== 'string') ||
      typeof o.reason !== 'string' ||
      !o.reason
    ) {
      throw new InvalidInputError('override must be { rules: string[], reason: string }', {
        field: 'override',
      });
    }
  }
  return actorKind;
}

/** What the steps after the read share about one write: the input, the document as read, who and when. */
interface CommitScope {
  readonly i: CommitInput;
  readonly forkedFrom: DocumentWrite['forked_from'];
  /** The document at `expected_version`, null for a new one. */
  readonly current: DocumentRecord | null;
  readonly actor: string;
  readonly actorKind: ActorKind;
  readonly requestHash: string;
  readonly now: number;
  /** The stream the commit's events go to. */
  readonly stream: string;
  readonly answer: Answer | null;
  readonly keepVersions: number | null;
}

/** An event of the commit, on the document's stream. */
function newEvent(w: CommitScope, type: string, data: Json): NewEvent {
  return {
    type,
    stream: w.stream,
    data,
    actor: w.actor,
    correlation_id: null,
    causation_id: null,
    work_item_id: null,
    created_at: w.now,
  };
}

/**
 * The conditional write the backend runs: one object literal per write (spreading a shared base into it
 * costs more than the fields).
 */
function documentWrite(
  w: CommitScope,
  body: JsonObject,
  bodyText: string | undefined,
  contentHash: string,
  noop: boolean,
  events: NewEvent[],
  enqueue: DocumentWrite['enqueue'],
): DocumentWrite {
  const i = w.i;
  return {
    kind: i.kind,
    id: i.id,
    expected_version: i.expected_version,
    expected_hash: w.current?.content_hash ?? null,
    body,
    body_text: bodyText,
    content_hash: contentHash,
    noop,
    actor: w.actor,
    actor_kind: w.actorKind,
    provenance: i.provenance ?? null,
    write_id: i.write_id ?? null,
    request_hash: w.requestHash,
    reason: i.reason ?? null,
    override: i.override ?? null,
    forked_from: w.forkedFrom,
    now: w.now,
    keep_versions: w.keepVersions,
    events,
    enqueue,
    resolve: w.answer === null ? [] : [w.answer.change],
  };
}

/** A no-op's write: the document as it is, one version on, with its `state_committed` event. */
function noopWrite(w: CommitScope, current: DocumentRecord): DocumentWrite {
  const i = w.i;
  return documentWrite(
    w,
    current.body,
    undefined,
    current.content_hash,
    true,
    [newEvent(w, 'state_committed', noopData(i, current.version, w.actorKind))],
    [],
  );
}

/**
 * The body to write: the one given (a copy), or the current body (or `{}`) with the patch applied. A merge
 * patch copies only what it changes, so the rest is shared with the current body unless `ownCopy` asks for a
 * body that shares nothing (JSON Patch always copies).
 */
function patched(i: CommitInput, current: DocumentRecord | null, ownCopy: boolean): JsonObject {
  let next: JsonObject;
  if (i.body !== undefined) next = structuredClone(i.body);
  else if (i.merge_patch !== undefined) {
    const base = current?.body ?? {};
    next = applyMergePatch(ownCopy ? cloneJson(base) : base, i.merge_patch) as JsonObject;
  } else next = applyJsonPatch(current?.body ?? {}, i.json_patch);
  return next;
}

/** Nothing changed: report it, write nothing, bump nothing. */
function unchanged(i: CommitInput, current: DocumentRecord, cached: DocumentRecord | null): CommitResult {
  return {
    kind: i.kind,
    id: i.id,
    version: current.version,
    previous_version: current.version,
    changed: false,
    noop: false,
    replayed: false,
    content_hash: current.content_hash,
    write_id: null,
    committed_at: current.updated_at,
    body: cached ? cloneJson(current.body) : current.body,
  };
}

/**
 * The kind's checks of `next` (see `prepareCommit`), with the commit context its rules see; `text` is the
 * canonical text of `next` when the kind has no version field to change it.
 */
function checkKindRules(
  s: DocumentStoreState,
  kinds: KindResolver,
  kind: KindDefinition,
  w: CommitScope,
  next: JsonObject,
  text: string | undefined,
): PreparedCommit | Promise<PreparedCommit> {
  const i = w.i;
  return prepareCommit(
    kinds,
    kind,
    next,
    // The rules get the previous version as their own copy: it may be the store's remembered one.
    w.current && kind.check ? cloneJson(w.current.body) : null,
    i.expected_version + 1,
    () =>
      commitContext(s.backend, {
        kind: i.kind,
        id: i.id,
        fromVersion: i.expected_version,
        toVersion: i.expected_version + 1,
        actor: w.actor,
        actor_kind: w.actorKind,
        role: i.role ?? null,
        provenance: i.provenance ?? null,
        override: i.override ?? null,
        reason: i.reason ?? null,
        now: w.now,
        answering: w.answer?.item ?? null,
      }),
    text,
  );
}

/** The commit's events: its `state_committed`, then the events the kind's rules asked for. */
function committedEvents(w: CommitScope, hash: string, effects: CommitEffects): NewEvent[] {
  const events = [newEvent(w, 'state_committed', committedData(w.i, w.actorKind, hash))];
  for (const e of effects.events ?? []) events.push(newEvent(w, e.type, e.data ?? null));
  return events;
}

/** The work items the kind's rules asked the commit to enqueue, owned by the document. */
function enqueued(w: CommitScope, effects: CommitEffects): DocumentWrite['enqueue'] {
  return effects.enqueue === undefined || effects.enqueue.length === 0
    ? []
    : effects.enqueue.map((e) =>
        ownedItem(w.i.kind, w.i.id, e, w.now, { actor: w.actor, actor_kind: w.actorKind }),
      );
}

/** Remembers the version just written under `key` (see `LatestVersions`). */
function remember(
  s: DocumentStoreState,
  key: string,
  w: CommitScope,
  entry: HistoryEntry,
  next: JsonObject,
  hash: string,
  bytes: number,
): void {
  const i = w.i;
  s.latest.remember(
    key,
    {
      kind: i.kind,
      id: i.id,
      version: entry.version,
      // What a fresh read of this version returns, as a private copy.
      body: cloneJson(next),
      content_hash: hash,
      // Stryker disable next-line LogicalOperator: the remembered copy's created_at is never read (a commit built on it reads its version, body, content hash and updated_at)
      created_at: w.current?.created_at ?? entry.created_at,
      updated_at: entry.created_at,
      // Stryker disable next-line LogicalOperator: the remembered copy's forked_from is never read (a commit built on it reads its version, body, content hash and updated_at)
      forked_from: w.current?.forked_from ?? w.forkedFrom,
    },
    bytes,
  );
}

// What the steps and the commit path call.

/** What a model's provenance record must name (besides an input hash or a prompt reference). */
const MODEL_PROVENANCE = ['model_id', 'run_id', 'step_id'] as const;

/** A write by a model needs a provenance record: PROVENANCE_REQUIRED naming what it lacks. */
function checkProvenance(actorKind: string, p: Provenance | undefined): void {
  if (actorKind !== 'model') return;
  const missing: string[] = MODEL_PROVENANCE.filter((f) => typeof p?.[f] !== 'string' || p[f] === '');
  if (
    !(typeof p?.input_hash === 'string' && p.input_hash) &&
    !(typeof p?.prompt_ref === 'string' && p.prompt_ref)
  ) {
    missing.push('input_hash or prompt_ref');
  }
  if (missing.length > 0) {
    throw new ProvenanceRequiredError(
      `a write by a model needs a provenance record; missing: ${missing.join(', ')}`,
      { missing, rule: 'model-output-needs-provenance' },
    );
  }
}

/** The hash that tells a retry of a commit (same write id, same change) from a reuse of its write id. */
function requestHashOf(i: CommitInput, forkedFrom: DocumentWrite['forked_from']): string {
  return sha256(
    canonicalJson({
      expected_version: i.expected_version,
      body: i.body,
      merge_patch: i.merge_patch,
      json_patch: i.json_patch,
      noop: i.noop ?? false,
      forked_from: forkedFrom,
    }),
  );
}

/**
 * A work item a document's commit enqueues as an effect: its idempotency key is the document's own
 * (`doc:<kind>/<id>#<key>`), which no plain enqueue may use, so the item is known to belong to the document.
 */
function ownedItem(
  kind: string,
  id: string,
  e: EnqueueInput,
  now: number,
  by: { actor: string; actor_kind: ActorKind },
): NewWorkItem {
  const { idempotency_key: local, ...rest } = e;
  // Enqueued by the commit: recorded with the commit's actor and actor kind unless the kind names others.
  const item = normalizeEnqueue({ actor_kind: by.actor_kind, ...rest }, now, by.actor);
  return { ...item, idempotency_key: ownedKey(kind, id, local ?? item.id) };
}

/** What a commit returns, from the history entry it wrote (or found, for a replay). */
function commitResult(
  kind: string,
  id: string,
  e: HistoryEntry,
  body: JsonObject,
  replayed: boolean,
  changed: boolean,
): CommitResult {
  return {
    kind,
    id,
    version: e.version,
    previous_version: e.parent_version,
    changed,
    noop: e.noop,
    replayed,
    content_hash: e.content_hash,
    write_id: e.write_id,
    committed_at: e.created_at,
    body,
  };
}

/** The stream a document's events go to. */
export function documentStream(kind: string, id: string): string {
  return `doc:${kind}/${id}`;
}
