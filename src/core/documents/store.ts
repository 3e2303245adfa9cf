// The versioned-document service: compare-and-swap commits with history and provenance, validated by
// the document's kind; reads at any version, diffs, forks and projections.
import { createRequire } from 'node:module';
import type FastJsonPatch from 'fast-json-patch';
import {
  InvalidInputError,
  NotFoundError,
  ProvenanceRequiredError,
  StateConflictError,
  ValidationFailedError,
  versionConflict,
} from '../../errors.js';
import type { DocumentWrite, NewEvent, NewWorkItem, StatusChange, StoreBackend } from '../backend.js';
import { checkInput, type InputSpec, LIMITS, RESERVED_KEYS, storedObject } from '../input.js';
import { applyMergePatch, canonicalJson, cloneJson, getPath, sha256 } from '../json.js';
import type { CommitContext, CommitEffects, KindDefinition } from '../kind.js';
import type { Clock } from '../time.js';
import {
  ACTOR_KINDS,
  type ActorKind,
  type CommitInput,
  type CommitResult,
  type DecisionAnswer,
  type DocumentRecord,
  type EnqueueInput,
  type HistoryEntry,
  type Json,
  type JsonObject,
  type JsonPatchOp,
  type Provenance,
  type WorkItem,
} from '../types.js';
import { normalizeEnqueue } from '../work-queue.js';
import { explainStatusFailure, isRepeatedAnswer, ownedKey, ownerOf } from '../work-rules.js';

/** The version a pruned history entry can no longer be read at. */
export class VersionPrunedError extends NotFoundError {
  constructor(message: string, details: Record<string, unknown>) {
    super(message, { ...details, pruned: true });
    this.name = 'VersionPrunedError';
  }
}

/** How the store finds and checks kinds (the registry, injected so the core stays kind-agnostic). */
export interface KindResolver {
  get(name: string): KindDefinition;
  validateSchema(kind: KindDefinition, body: JsonObject): void;
}

/** What a DocumentStore runs with besides its backend: the clock, the default actor, history pruning, the kinds. */
export interface DocumentStoreContext {
  clock: Clock;
  /** Default actor name. */
  actor: string;
  /** Keep only the newest N versions of each document's history; null keeps everything. @default null */
  keepVersions: number | null;
  /** Loads the kind registry on first use (kinds pull in schemas and codecs a work-item call never needs). */
  kinds: () => Promise<KindResolver>;
}

const NAME = { type: 'name', required: true } as const;

/** Who writes: the actor, its kind and its role. */
const WRITER = {
  actor: { type: 'name' },
  actor_kind: { type: 'string', enum: ACTOR_KINDS },
  role: { type: 'name' },
} as const;
/** What a write records of who made it: the writer and where the write comes from (a model's provenance). */
const ATTRIBUTION = { ...WRITER, provenance: { type: 'object' } } as const;

/** A call of a kind's operation on a document: what it is given and who asks (escalate, apply). */
const KIND_CALL_REST = {
  args: { type: 'object' },
  ...ATTRIBUTION,
  reason: { type: 'text' },
} as const;
const KIND_CALL = { kind: NAME, id: NAME, ...KIND_CALL_REST } as const;

export const DOC_INPUTS = {
  commit: {
    kind: NAME,
    id: NAME,
    expected_version: { type: 'int', required: true, min: 0 },
    body: { type: 'object' },
    merge_patch: { type: 'object' },
    json_patch: { type: 'json' },
    noop: { type: 'bool' },
    ...ATTRIBUTION,
    write_id: { type: 'name' },
    reason: { type: 'text' },
    override: { type: 'object' },
  },
  get: { kind: NAME, id: NAME, version: { type: 'int', min: 1 } },
  history: {
    kind: NAME,
    id: NAME,
    after: { type: 'int', min: 0 },
    limit: { type: 'int', min: 1, max: 10_000 },
    reverse: { type: 'bool' },
  },
  diff: { kind: NAME, id: NAME, from: { type: 'int', required: true, min: 0 }, to: { type: 'int', min: 0 } },
  fork: {
    kind: NAME,
    id: NAME,
    version: { type: 'int', min: 1 },
    new_id: NAME,
    ...ATTRIBUTION,
    write_id: { type: 'name' },
    reason: { type: 'text' },
  },
  project: { kind: NAME, id: NAME, paths: { type: 'names', required: true } },
  list: {
    kind: { type: 'name' },
    limit: { type: 'int', min: 1, max: 100_000 },
    // kind/id: two names and the slash between them.
    after: { type: 'name', max: 2 * LIMITS.name + 1 },
  },
  prune: { kind: NAME, id: NAME, keep: { type: 'int', required: true, min: 1 } },
  escalate: KIND_CALL,
  apply: { kind: NAME, id: NAME, operation: NAME, ...KIND_CALL_REST },
  validate: {
    kind: NAME,
    id: NAME,
    body: { type: 'object', required: true },
    ...WRITER,
  },
} satisfies Record<string, InputSpec>;

/** `docs.list`: documents by kind then id, paged by `after`. */
export interface ListDocumentsInput {
  /** Only documents of this kind. */
  kind?: string;
  /** At most this many documents. @default 1000 */
  limit?: number;
  /** Only the documents after this one: `kind/id` of the last document a page showed. */
  after?: string;
}

/**
 * The document a list cursor names: `kind/id`, split at the first slash (a kind has none, an id may).
 * INVALID_INPUT without a slash or with either side empty.
 */
export function documentCursor(after: string): { kind: string; id: string } {
  const at = after.indexOf('/');
  if (at <= 0 || at === after.length - 1) {
    throw new InvalidInputError(
      `list: after must be kind/id (of the last document a page showed), got ${JSON.stringify(after.slice(0, 80))}`,
      { field: 'after' },
    );
  }
  return { kind: after.slice(0, at), id: after.slice(at + 1) };
}

/** The stream a document's events go to. */
export function documentStream(kind: string, id: string): string {
  return `doc:${kind}/${id}`;
}

const MODEL_PROVENANCE = ['model_id', 'run_id', 'step_id'] as const;

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

let jsonPatchLib: typeof FastJsonPatch | undefined;
/** fast-json-patch, loaded on first use (only patches and diffs need it). */
function jsonPatch(): typeof FastJsonPatch {
  jsonPatchLib ??= createRequire(import.meta.url)('fast-json-patch') as typeof FastJsonPatch;
  return jsonPatchLib;
}

/**
 * Refuses an operation whose `path` or `from` goes through a name a JavaScript object inherits but the JSON
 * document does not hold (`/toString`, `/valueOf`): RFC 6902 resolves pointers in the document only, and
 * fast-json-patch would read the inherited function and put it into the body. The last segment of an
 * `add`, `move` or `copy` path is a new member, so any name may be added there; a `test` of a name the
 * document lacks fails as a test (STATE_CONFLICT), as for any absent member.
 */
function inheritedMember(doc: unknown, op: FastJsonPatch.Operation, index: number): void {
  // Not an operation at all: fast-json-patch's own check refuses it.
  if (typeof op !== 'object' || op === null) return;
  const check = (field: 'path' | 'from', pointer: unknown, lastMayBeAbsent: boolean) => {
    if (typeof pointer !== 'string' || pointer === '') return;
    const segments = pointer.slice(1).split('/');
    let cur: unknown = doc;
    for (const [k, raw] of segments.entries()) {
      if (typeof cur !== 'object' || cur === null || Array.isArray(cur)) return;
      const seg = raw.replace(/~1/g, '/').replace(/~0/g, '~');
      if (!Object.hasOwn(cur, seg)) {
        if (seg in cur && !(lastMayBeAbsent && k === segments.length - 1)) {
          throw new InvalidInputError(
            `json_patch operation ${index}: ${field} ${JSON.stringify(pointer)} names no member of the document`,
            { field: 'json_patch', pointer: `/${index}/${field}`, operation: 'commit' },
          );
        }
        return;
      }
      cur = (cur as Record<string, unknown>)[seg];
    }
  };
  check('path', op.path, op.op === 'add' || op.op === 'move' || op.op === 'copy' || op.op === 'test');
  if (op.op === 'move' || op.op === 'copy') check('from', op.from, false);
}

function applyJsonPatch(base: JsonObject, ops: unknown): JsonObject {
  if (!Array.isArray(ops))
    throw new InvalidInputError('json_patch must be an array of RFC 6902 operations', {
      field: 'json_patch',
    });
  ops.forEach((op, index) => {
    for (const field of ['path', 'from'] as const) {
      const path = (op as Partial<JsonPatchOp> | null)?.[field];
      if (typeof path !== 'string') continue;
      const seg = path.split('/').find((s) => RESERVED_KEYS.has(s.replace(/~1/g, '/').replace(/~0/g, '~')));
      if (seg !== undefined) {
        throw new InvalidInputError(
          `json_patch operation ${index}: ${field} ${JSON.stringify(path)} names the key ${JSON.stringify(seg)}, which is refused`,
          { field: 'json_patch', pointer: `/${index}/${field}`, operation: 'commit' },
        );
      }
    }
  });
  // One operation at a time, each checked against the document as the operations before it left it.
  let out: unknown = structuredClone(base);
  for (const [index, op] of (ops as FastJsonPatch.Operation[]).entries()) {
    inheritedMember(out, op, index);
    try {
      out = jsonPatch().applyOperation(out, op, true, true, true, index).newDocument;
    } catch (err) {
      const e = err as { message: string; name: string };
      if (e.name === 'TEST_OPERATION_FAILED') {
        throw new StateConflictError(
          `json_patch test operation ${index} failed: the document differs from what you expected`,
          { field: 'json_patch' },
        );
      }
      if (!(err instanceof jsonPatch().JsonPatchError)) throw err;
      throw new InvalidInputError(`json_patch operation ${index} is invalid: ${e.message.split('\n')[0]}`, {
        field: 'json_patch',
      });
    }
  }
  if (typeof out !== 'object' || out === null || Array.isArray(out)) {
    throw new InvalidInputError('json_patch must leave a JSON object', { field: 'json_patch' });
  }
  return out as JsonObject;
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

/** A human's answer to a decision a document asked for: the item as answered and the change that records it. */
interface Answer {
  item: WorkItem;
  change: StatusChange;
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

/** How often a read-modify-commit is run again after the document moved on under it. */
const RETRIES = 10;

/**
 * A conflict another try on a fresh read can get past: the document was at another version than read.
 * Not a held lock, a failed JSON Patch test or a reused write id: those would fail the same way again.
 */
export function isStaleVersion(err: unknown): boolean {
  if (!(err instanceof StateConflictError)) return false;
  const d = err.details as { expected?: unknown; actual?: unknown; rule?: unknown; write_id?: unknown };
  return (
    typeof d.expected === 'number' &&
    typeof d.actual === 'number' &&
    d.rule === undefined &&
    d.write_id == null
  );
}

/** Runs `fn` (a read, a change computed from it, a commit) again while it loses to a newer version. */
export async function retryOnStaleVersion<T>(fn: () => Promise<T>, attempts = RETRIES): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      if (attempt >= attempts || !isStaleVersion(err)) throw err;
    }
  }
}

/** What a kind without rules of its own asks for. */
const NO_EFFECTS: CommitEffects = Object.freeze({});

/** A body a kind accepted: the effects its rules ask for, and the canonical text (and size) to store. */
export interface PreparedCommit {
  effects: CommitEffects;
  text: string;
  bytes: number;
}

/**
 * The one step every check of a body against its kind goes through — a commit, `validate` of a body, and
 * `validate` of a state file: the kind's version field set to the version being written, the kind's size
 * limit, its JSON Schema, then its rules (which may fill in fields of `next`, so the text is taken after
 * them). Throws the refusal a commit would throw, having written nothing. Synchronous for a kind without
 * rules, so a plain commit pays no await and builds no context (`context` is called only for rules);
 * `knownText` is the canonical text of `next` when the caller has it already (without a version field).
 */
export function prepareCommit(
  kinds: KindResolver,
  kind: KindDefinition,
  next: JsonObject,
  prev: JsonObject | null,
  toVersion: number,
  context: () => CommitContext,
  knownText?: string,
): PreparedCommit | Promise<PreparedCommit> {
  if (kind.versionField) next[kind.versionField] = toVersion;
  const text = kind.versionField || knownText === undefined ? canonicalJson(next) : knownText;
  const bytes = Buffer.byteLength(text);
  const limit = kind.maxBytes ?? LIMITS.jsonBytes;
  if (bytes > limit) {
    throw new ValidationFailedError(`the body is larger than the ${limit} byte limit of kind ${kind.name}`, {
      pointer: '/',
      rule: 'max-bytes',
    });
  }
  kinds.validateSchema(kind, next);
  if (!kind.check) return { effects: NO_EFFECTS, text, bytes };
  const check = kind.check;
  return (async () => {
    const effects = (await check(next, prev, context())) ?? NO_EFFECTS;
    const after = canonicalJson(next);
    return { effects, text: after, bytes: after === text ? bytes : Buffer.byteLength(after) };
  })();
}

/** How many documents' newest versions a store remembers (see `#latest`). */
const LATEST_CACHE_SIZE = 256;
/** Bodies larger than this (bytes of JSON) are not remembered. */
const LATEST_CACHE_MAX_BYTES = 256 * 1024;

/** A call of one of a kind's operations on a document (`escalate` names its operation itself). */
export interface KindCall {
  kind: string;
  id: string;
  /** The operation's arguments (e.g. escalate's `{ ambiguities: ['a1'] }`; default `{}`). */
  args?: Record<string, unknown>;
  actor?: string;
  actor_kind?: CommitInput['actor_kind'];
  role?: string;
  provenance?: Provenance;
  reason?: string;
}

/** `apply`: run one of a kind's named operations on a document's latest version, as one CAS commit. */
export interface ApplyInput extends KindCall {
  /** The kind's operation (e.g. workflow-sessions `add-todo`); its arguments go in `args`. */
  operation: string;
}

/** What `DocumentStore.writeCounts` counts per kind. */
export interface DocumentWriteCounts {
  commits: number;
  conflicts: number;
}

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
  readonly #backend: StoreBackend;
  readonly #ctx: DocumentStoreContext;
  /**
   * The version this store last committed of each recently written document (a private copy). A version's
   * body never changes, so a commit whose `expected_version` matches skips reading the document; the
   * write still checks version and content hash in its conditional statement, and a miss there drops the
   * entry and runs the commit again from a fresh read.
   */
  readonly #latest = new Map<string, DocumentRecord>();
  /** The kind registry once `ctx.kinds()` has delivered it. */
  #kinds: KindResolver | undefined;
  /** Commits and refused commits (STATE_CONFLICT) through this store, by document kind. */
  readonly #writes = new Map<string, DocumentWriteCounts>();

  constructor(backend: StoreBackend, ctx: DocumentStoreContext) {
    this.#backend = backend;
    this.#ctx = ctx;
  }

  async #loadKinds(): Promise<KindResolver> {
    this.#kinds ??= await this.#ctx.kinds();
    return this.#kinds;
  }

  /**
   * Commits a new version if the document is still at `expected_version`; STATE_CONFLICT otherwise. Give
   * exactly one of `body`, `merge_patch` (RFC 7396) or `json_patch` (RFC 6902), or `noop: true` with a
   * `reason` (a version that records a decision to change nothing). @default actor the instance's worker,
   * actor_kind 'system'
   * @example await inst.docs.commit({ kind: 'json', id: 'notes', expected_version: 0, body: { todo: [] } })
   */
  async commit(input: CommitInput): Promise<CommitResult> {
    const i = checkInput<CommitInput>('commit', input, DOC_INPUTS.commit);
    return this.#commit(i, null);
  }

  async #commit(
    i: CommitInput,
    forkedFrom: DocumentWrite['forked_from'],
    answer: Answer | null = null,
  ): Promise<CommitResult> {
    try {
      const result = await this.#commitAnswered(i, forkedFrom, answer);
      if (!result.replayed) this.#count(i.kind, 'commits');
      return result;
    } catch (err) {
      if (err instanceof StateConflictError) this.#count(i.kind, 'conflicts');
      throw err;
    }
  }

  async #commitAnswered(
    i: CommitInput,
    forkedFrom: DocumentWrite['forked_from'],
    answer: Answer | null,
  ): Promise<CommitResult> {
    try {
      return await this.#commitOnce(i, forkedFrom, answer);
    } catch (err) {
      if (!(err instanceof StateConflictError) || i.write_id === undefined) throw err;
      // A retry racing its original (same write id, same moment) loses the conditional write or the
      // write id's unique index to it; once the original has landed, the retry's answer is its result.
      const replay = await this.#replay(i, requestHashOf(i, forkedFrom));
      if (replay) return replay;
      throw err;
    }
  }

  #count(kind: string, what: keyof DocumentWriteCounts): void {
    let c = this.#writes.get(kind);
    if (c === undefined) {
      c = { commits: 0, conflicts: 0 };
      this.#writes.set(kind, c);
    }
    c[what]++;
  }

  /**
   * Commits (replays of a `write_id` not counted) and commits refused with STATE_CONFLICT made through this
   * store since it opened, by document kind: this process's share, for metrics (counters that restart at 0).
   */
  writeCounts(): ReadonlyMap<string, Readonly<DocumentWriteCounts>> {
    return this.#writes;
  }

  async #commitOnce(
    i: CommitInput,
    forkedFrom: DocumentWrite['forked_from'],
    answer: Answer | null,
  ): Promise<CommitResult> {
    const key = `${i.kind}\u0000${i.id}`;
    const cached = this.#latest.get(key);
    if (cached === undefined || cached.version !== i.expected_version) {
      return this.#write(i, forkedFrom, null, key, answer);
    }
    try {
      return await this.#write(i, forkedFrom, cached, key, answer);
    } catch (err) {
      if (!(err instanceof StateConflictError)) throw err;
      // Someone else wrote the document (or it changed behind the store): decide again on a fresh read.
      this.#latest.delete(key);
      return this.#write(i, forkedFrom, null, key, answer);
    }
  }

  /**
   * The original result of an earlier commit with `i.write_id`, or null when there is none; STATE_CONFLICT
   * when the write id was used for a different change.
   */
  async #replay(i: CommitInput, requestHash: string): Promise<CommitResult | null> {
    const prior = await this.#backend.docs.findWrite(i.kind, i.id, i.write_id!);
    if (!prior) return null;
    if (prior.request_hash !== requestHash) {
      // Stryker disable next-line OptionalChaining: the write id was found in this document's history, and a document with history is never deleted, so get() is not null here
      const actual = (await this.#backend.docs.get(i.kind, i.id))?.version ?? 0;
      throw new StateConflictError(
        `write_id ${i.write_id} was already used for a different change to ${i.kind}/${i.id}`,
        { kind: i.kind, id: i.id, write_id: i.write_id, expected: i.expected_version, actual },
      );
    }
    let body = prior.body;
    if (body === null) {
      const v = await this.#backend.docs.getVersion(i.kind, i.id, prior.entry.version);
      body = v && v !== 'pruned' ? v.body : {};
    }
    return this.#result(i.kind, i.id, prior.entry, body, true, !prior.entry.noop);
  }

  /** `key` is the record's `#latest` key. */
  #remember(key: string, record: DocumentRecord, bytes: number): void {
    this.#latest.delete(key);
    if (bytes > LATEST_CACHE_MAX_BYTES) return;
    this.#latest.set(key, record);
    if (this.#latest.size > LATEST_CACHE_SIZE) {
      const oldest = this.#latest.keys().next().value;
      if (oldest !== undefined) this.#latest.delete(oldest);
    }
  }

  /** The commit itself; `cached` is the document at `expected_version` when the store remembers it. */
  async #write(
    i: CommitInput,
    forkedFrom: DocumentWrite['forked_from'],
    cached: DocumentRecord | null,
    /** The document's `#latest` key. */
    key: string,
    /** The human decision this commit answers (its item is resolved in the same transaction). */
    answer: Answer | null,
  ): Promise<CommitResult> {
    const kinds = this.#kinds ?? (await this.#loadKinds());
    const kind = kinds.get(i.kind);
    // Before anything is read or written: an id this kind refuses (e.g. one that is a path) is never stored.
    kind.checkId?.(i.id);
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
    // Only a write id is ever compared against the request, so only then is it worth hashing.
    // Stryker disable next-line StringLiteral: the request hash of a write without a write id is stored but never read (#replay compares it only for an entry found by its write id)
    const requestHash = i.write_id === undefined ? '' : requestHashOf(i, forkedFrom);
    if (i.write_id !== undefined) {
      const replay = await this.#replay(i, requestHash);
      if (replay) return replay;
    }

    const current = cached ?? (await this.#backend.docs.get(i.kind, i.id));
    const actual = current?.version ?? 0;
    if (actual !== i.expected_version) {
      throw versionConflict(i.kind, i.id, actual, i.expected_version);
    }
    // An answer and the commit that records it are one moment: the same time on all of their events.
    const now = answer?.change.now ?? this.#ctx.clock();
    const actor = i.actor ?? this.#ctx.actor;
    const stream = documentStream(i.kind, i.id);
    const event = (type: string, data: Json): NewEvent => ({
      type,
      stream,
      data,
      actor,
      correlation_id: null,
      causation_id: null,
      work_item_id: null,
      created_at: now,
    });
    // One object literal per write (spreading a shared base into it costs more than the fields).
    const write = (
      body: JsonObject,
      bodyText: string | undefined,
      contentHash: string,
      noop: boolean,
      events: NewEvent[],
      enqueue: DocumentWrite['enqueue'],
    ): DocumentWrite => ({
      kind: i.kind,
      id: i.id,
      expected_version: i.expected_version,
      expected_hash: current?.content_hash ?? null,
      body,
      body_text: bodyText,
      content_hash: contentHash,
      noop,
      actor,
      actor_kind: actorKind,
      provenance: i.provenance ?? null,
      write_id: i.write_id ?? null,
      request_hash: requestHash,
      reason: i.reason ?? null,
      override: i.override ?? null,
      forked_from: forkedFrom,
      now,
      keep_versions: this.#ctx.keepVersions,
      events,
      enqueue,
      resolve: answer === null ? [] : [answer.change],
    });

    if (i.noop) {
      if (!current)
        throw new InvalidInputError(`${i.kind}/${i.id} does not exist: there is nothing to leave unchanged`, {
          field: 'noop',
        });
      const entry = await this.#backend.docs.commit(
        write(
          current.body,
          undefined,
          current.content_hash,
          true,
          [
            event('state_committed', {
              kind: i.kind,
              id: i.id,
              version: current.version,
              parent_version: i.expected_version,
              actor_kind: actorKind,
              noop: true,
              reason: i.reason ?? null,
            }),
          ],
          [],
        ),
      );
      return this.#result(i.kind, i.id, entry, structuredClone(current.body), false, false);
    }

    let next: JsonObject;
    if (i.body !== undefined) next = structuredClone(i.body);
    else if (i.merge_patch !== undefined)
      next = applyMergePatch(current?.body ?? {}, i.merge_patch) as JsonObject;
    else next = applyJsonPatch(current?.body ?? {}, i.json_patch);

    const vf = kind.versionField;
    // Nothing changed? Compare against the stored hash (with the stored version field, if the kind has one).
    if (vf && current) next[vf] = current.body[vf] as Json;
    // One canonical text (and hash) serves the no-change test, the size limit and the content hash.
    const text = canonicalJson(next);
    let hash = sha256(text);
    if (current && hash === current.content_hash) {
      if (cached) {
        // No conditional write will check the remembered copy: confirm the document still holds it.
        const stored = await this.#backend.docs.get(i.kind, i.id);
        if (stored?.version !== cached.version || stored.content_hash !== cached.content_hash) {
          this.#latest.delete(key);
          return this.#write(i, forkedFrom, null, key, answer);
        }
      }
      // Nothing changed: report it, write nothing, bump nothing.
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
    const pending = prepareCommit(
      kinds,
      kind,
      next,
      current?.body ?? null,
      i.expected_version + 1,
      () =>
        this.#commitContext({
          kind: i.kind,
          id: i.id,
          fromVersion: i.expected_version,
          toVersion: i.expected_version + 1,
          actor,
          actor_kind: actorKind,
          role: i.role ?? null,
          provenance: i.provenance ?? null,
          override: i.override ?? null,
          reason: i.reason ?? null,
          now,
          answering: answer?.item ?? null,
        }),
      vf ? undefined : text,
    );
    // Only a kind with rules of its own needs the commit context (and an await).
    const { effects, text: stored, bytes } = pending instanceof Promise ? await pending : pending;
    if (stored !== text) hash = sha256(stored);
    const events = [
      event('state_committed', {
        kind: i.kind,
        id: i.id,
        version: i.expected_version + 1,
        parent_version: i.expected_version,
        actor_kind: actorKind,
        noop: false,
        content_hash: hash,
        write_id: i.write_id ?? null,
        reason: i.reason ?? null,
      }),
    ];
    for (const e of effects.events ?? []) events.push(event(e.type, e.data ?? null));
    const entry = await this.#backend.docs.commit(
      write(
        next,
        stored,
        hash,
        false,
        events,
        effects.enqueue === undefined || effects.enqueue.length === 0
          ? []
          : effects.enqueue.map((e) => ownedItem(i.kind, i.id, e, now, { actor, actor_kind: actorKind })),
      ),
    );
    this.#remember(
      key,
      {
        kind: i.kind,
        id: i.id,
        version: entry.version,
        // What a fresh read of this version returns, as a private copy.
        body: cloneJson(next),
        content_hash: hash,
        // Stryker disable next-line LogicalOperator: the remembered copy's created_at is never read (a commit built on it reads its version, body, content hash and updated_at)
        created_at: current?.created_at ?? entry.created_at,
        updated_at: entry.created_at,
        // Stryker disable next-line LogicalOperator: the remembered copy's forked_from is never read (a commit built on it reads its version, body, content hash and updated_at)
        forked_from: current?.forked_from ?? forkedFrom,
      },
      bytes,
    );
    return this.#result(i.kind, i.id, entry, next, false, true);
  }

  /** What a kind's rules see about a write, with reads of the other documents of this instance. */
  #commitContext(c: Omit<CommitContext, 'read' | 'missingEvents'>): CommitContext {
    return {
      ...c,
      read: async (k, id) => {
        const d = await this.#backend.docs.get(k, id);
        return d && { kind: d.kind, id: d.id, version: d.version, body: d.body };
      },
      missingEvents: async (positions) => {
        if (positions.length === 0) return [];
        // Positions are gapless (1 … head, never skipped), so the head alone says which exist.
        const head = (await this.#backend.events.head())?.position ?? 0;
        return positions.filter((p) => !(Number.isSafeInteger(p) && p >= 1 && p <= head));
      },
    };
  }

  /**
   * Checks a body against its kind (schema and rules, with the stored document as the previous
   * version) without writing anything. Throws the error a commit would throw.
   */
  async validate(input: {
    kind: string;
    id: string;
    body: JsonObject;
    actor?: string;
    actor_kind?: CommitInput['actor_kind'];
    role?: string;
  }): Promise<{ kind: string; id: string; ok: true; checked_against: number }> {
    const i = checkInput<typeof input>('validate', input, DOC_INPUTS.validate);
    const kinds = await this.#loadKinds();
    const kind = kinds.get(i.kind);
    kind.checkId?.(i.id);
    const current = await this.#backend.docs.get(i.kind, i.id);
    const version = current?.version ?? 0;
    await prepareCommit(kinds, kind, structuredClone(i.body), current?.body ?? null, version + 1, () =>
      this.#commitContext({
        kind: i.kind,
        id: i.id,
        fromVersion: version,
        toVersion: version + 1,
        actor: i.actor ?? this.#ctx.actor,
        actor_kind: i.actor_kind ?? 'system',
        role: i.role ?? null,
        provenance: null,
        override: null,
        reason: null,
        now: this.#ctx.clock(),
      }),
    );
    return { kind: i.kind, id: i.id, ok: true, checked_against: version };
  }

  /**
   * Runs one of the kind's named operations as a CAS commit on the latest version. An operation is a
   * pure function of the current body, so on STATE_CONFLICT it is simply re-run on the new version.
   * @example await inst.docs.apply({ kind: 'workflow-sessions', id: 'deploy', operation: 'set-phase', args: { phase: 'build' } })
   */
  async apply(input: ApplyInput): Promise<CommitResult> {
    return this.#apply(checkInput<ApplyInput>('apply', input, DOC_INPUTS.apply));
  }

  async #apply(input: ApplyInput): Promise<CommitResult> {
    const kind = (await this.#loadKinds()).get(input.kind);
    const op = kind.operations?.find((o) => o.name === input.operation);
    if (!op) {
      const known = (kind.operations ?? []).map((o) => o.name);
      throw new InvalidInputError(
        `kind ${input.kind} has no operation ${JSON.stringify(input.operation)}${known.length ? `; known: ${known.join(', ')}` : ''}`,
        { field: 'operation' },
      );
    }
    // The kind operation's own arguments, which only the kind knows: checked here, once, under its name.
    const args = checkInput<Record<string, unknown>>(
      op.name,
      input.args ?? {},
      op.input,
      `${input.kind}.${op.name}`,
    );
    const actor = input.actor ?? this.#ctx.actor;
    return retryOnStaleVersion(async () => {
      const current = await this.#backend.docs.get(input.kind, input.id);
      const next = op.apply(current ? structuredClone(current.body) : null, args, {
        now: this.#ctx.clock(),
        actor,
        role: input.role ?? null,
      });
      // The caller's fields were checked; the body is the kind's, held to the store's JSON rule as written.
      return this.#commit(
        {
          kind: input.kind,
          id: input.id,
          expected_version: current?.version ?? 0,
          body: storedObject(op.name, 'body', next) as JsonObject,
          actor,
          ...(input.actor_kind === undefined ? {} : { actor_kind: input.actor_kind }),
          ...(input.role === undefined ? {} : { role: input.role }),
          ...(input.provenance === undefined ? {} : { provenance: input.provenance }),
          reason: input.reason ?? `${op.name}`,
        },
        null,
      );
    });
  }

  /**
   * Puts a document's open questions to humans (e.g. a task-ir's ambiguities): runs its kind's `escalate`
   * operation as one CAS commit (re-run on conflict), whose effects enqueue a decision item per question
   * in the same transaction, and returns the commit with every decision item of the document still
   * waiting for a human. Escalating again writes nothing and asks nothing twice.
   * @example await inst.docs.escalate({ kind: 'task-ir', id: 'login' })
   */
  async escalate(input: KindCall): Promise<CommitResult & { decisions: WorkItem[] }> {
    const i = checkInput<typeof input>('escalate', input, DOC_INPUTS.escalate);
    const kind = (await this.#loadKinds()).get(i.kind);
    if (!kind.operations?.some((o) => o.name === 'escalate')) {
      throw new InvalidInputError(
        `kind ${i.kind} puts no questions to humans: it has no escalate operation`,
        { field: 'kind', operation: 'escalate' },
      );
    }
    const { args, ...rest } = i;
    const commit = await this.#apply({ ...rest, operation: 'escalate', args: args ?? {} });
    return { ...commit, decisions: await this.#waitingDecisions(i.kind, i.id) };
  }

  /** The decision items document `kind`/`id` enqueued that are still waiting for a human, in claim order. */
  async #waitingDecisions(kind: string, id: string): Promise<WorkItem[]> {
    const waiting = await this.#backend.work.list({
      statuses: ['waiting_human'],
      kind: null,
      now: this.#ctx.clock(),
      limit: 100_000,
    });
    return waiting.filter((item) => {
      const owner = ownerOf(item);
      return owner?.kind === kind && owner.id === id;
    });
  }

  #result(
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

  /** The latest version, or the one asked for; NOT_FOUND (pruned: true for retention) otherwise. */
  async get(input: { kind: string; id: string; version?: number }): Promise<DocumentRecord> {
    return this.#get(
      checkInput<{ kind: string; id: string; version?: number }>('get', input, DOC_INPUTS.get),
    );
  }

  async #get(i: { kind: string; id: string; version?: number }): Promise<DocumentRecord> {
    const latest = await this.#backend.docs.get(i.kind, i.id);
    if (!latest) throw new NotFoundError(`${i.kind}/${i.id} not found`, { kind: i.kind, id: i.id });
    if (i.version === undefined || i.version === latest.version) return latest;
    const v = await this.#backend.docs.getVersion(i.kind, i.id, i.version);
    if (v === 'pruned') {
      throw new VersionPrunedError(`${i.kind}/${i.id} version ${i.version} was removed by retention`, {
        kind: i.kind,
        id: i.id,
        version: i.version,
      });
    }
    if (!v) {
      throw new NotFoundError(`${i.kind}/${i.id} has no version ${i.version} (latest is ${latest.version})`, {
        kind: i.kind,
        id: i.id,
        version: i.version,
        latest: latest.version,
      });
    }
    return {
      ...latest,
      version: v.entry.version,
      body: v.body,
      content_hash: v.entry.content_hash,
      updated_at: v.entry.created_at,
    };
  }

  /** The latest version, or null (where `get` would be NOT_FOUND). */
  async find(kind: string, id: string): Promise<DocumentRecord | null> {
    checkInput('get', { kind, id }, DOC_INPUTS.get);
    return this.#backend.docs.get(kind, id);
  }
  /**
   * One version from the history: its body and entry, null when it never existed, 'pruned' when retention
   * removed it (where `get({ version })` would throw).
   */
  async findVersion(
    kind: string,
    id: string,
    version: number,
  ): Promise<{ body: JsonObject; entry: HistoryEntry } | null | 'pruned'> {
    checkInput('get', { kind, id, version }, DOC_INPUTS.get);
    return this.#backend.docs.getVersion(kind, id, version);
  }

  /**
   * The version a commit with this `write_id` wrote, or null: its history entry, and its body unless
   * retention removed it since.
   */
  async findWrite(
    kind: string,
    id: string,
    writeId: string,
  ): Promise<{ entry: HistoryEntry; body: JsonObject | null } | null> {
    checkInput('get', { kind, id }, DOC_INPUTS.get);
    const w = await this.#backend.docs.findWrite(kind, id, writeId);
    return w && { entry: w.entry, body: w.body };
  }

  /** Commits in order (no-ops included), paged by `after` (a seq). @default limit 100 */
  async history(input: {
    kind: string;
    id: string;
    after?: number;
    limit?: number;
    reverse?: boolean;
  }): Promise<{
    entries: HistoryEntry[];
    next_after: number | null;
  }> {
    const i = checkInput<{ kind: string; id: string; after?: number; limit?: number; reverse?: boolean }>(
      'history',
      input,
      DOC_INPUTS.history,
    );
    const limit = i.limit ?? 100;
    const entries = await this.#backend.docs.history(i.kind, i.id, {
      afterSeq: i.after ?? 0,
      limit,
      reverse: i.reverse ?? false,
    });
    if (entries.length === 0 && !(await this.#backend.docs.get(i.kind, i.id))) {
      throw new NotFoundError(`${i.kind}/${i.id} not found`, { kind: i.kind, id: i.id });
    }
    return { entries, next_after: entries.length === limit ? entries[entries.length - 1]!.seq : null };
  }

  /** RFC 6902 JSON Patch from version `from` (0 = empty) to `to` (default latest). */
  async diff(input: { kind: string; id: string; from: number; to?: number }): Promise<{
    kind: string;
    id: string;
    from: number;
    to: number;
    patch: JsonPatchOp[];
  }> {
    const i = checkInput<{ kind: string; id: string; from: number; to?: number }>(
      'diff',
      input,
      DOC_INPUTS.diff,
    );
    const latest = await this.#get({ kind: i.kind, id: i.id });
    const to = i.to ?? latest.version;
    const body = async (v: number) =>
      v === 0 ? {} : (await this.#get({ kind: i.kind, id: i.id, version: v })).body;
    const patch = jsonPatch().compare(await body(i.from), await body(to)) as JsonPatchOp[];
    return { kind: i.kind, id: i.id, from: i.from, to, patch };
  }

  /** Copies a version into a new document (version 1), recording where it came from. */
  async fork(input: {
    kind: string;
    id: string;
    version?: number;
    new_id: string;
    actor?: string;
    actor_kind?: CommitInput['actor_kind'];
    role?: string;
    provenance?: Provenance;
    write_id?: string;
    reason?: string;
  }): Promise<CommitResult> {
    const i = checkInput<typeof input>('fork', input, DOC_INPUTS.fork);
    const src = await this.#get({
      kind: i.kind,
      id: i.id,
      ...(i.version === undefined ? {} : { version: i.version }),
    });
    const { kind, id, version, new_id, ...rest } = i;
    return this.#commit(
      {
        ...rest,
        kind,
        id: new_id,
        expected_version: 0,
        body: src.body,
        reason: i.reason ?? `forked from ${kind}/${id}@${src.version}`,
      },
      { kind, id, version: src.version },
    );
  }

  /** Only the named fields (JSON pointers or dot paths), with the version they were read at. */
  async project(input: { kind: string; id: string; paths: string[] }): Promise<{
    kind: string;
    id: string;
    version: number;
    values: Record<string, Json>;
    missing: string[];
  }> {
    const i = checkInput<{ kind: string; id: string; paths: string[] }>('project', input, DOC_INPUTS.project);
    const doc = await this.#get({ kind: i.kind, id: i.id });
    const values: Record<string, Json> = {};
    const missing: string[] = [];
    for (const p of i.paths) {
      const v = getPath(doc.body, p);
      if (v === undefined) missing.push(p);
      else values[p] = v;
    }
    return { kind: doc.kind, id: doc.id, version: doc.version, values, missing };
  }

  /**
   * Documents (without bodies), by kind then id; with `after` (`kind/id` of the last document a page
   * showed), the documents after it in that order, so paging visits each once. An `after` naming no
   * document is INVALID_INPUT. @default limit 1000
   */
  async list(input: ListDocumentsInput = {}): Promise<Array<Omit<DocumentRecord, 'body'>>> {
    const i = checkInput<ListDocumentsInput>('list', input, DOC_INPUTS.list);
    const after = i.after === undefined ? undefined : documentCursor(i.after);
    const docs = await this.#backend.docs.list(i.kind ?? null, i.limit ?? 1000, after);
    // A cursor naming no document reads nothing: told only then, so a page costs one query.
    if (
      after !== undefined &&
      docs.length === 0 &&
      (await this.#backend.docs.get(after.kind, after.id)) === null
    ) {
      throw new InvalidInputError(
        `list: after ${JSON.stringify(i.after)} names no document; page on from kind/id of the last document a page showed`,
        { field: 'after' },
      );
    }
    return docs;
  }

  /** Removes history older than the newest `keep` versions (never the latest). */
  async prune(input: { kind: string; id: string; keep: number }): Promise<{ removed: number }> {
    const i = checkInput<{ kind: string; id: string; keep: number }>('prune', input, DOC_INPUTS.prune);
    return { removed: await this.#backend.docs.prune(i.kind, i.id, i.keep) };
  }

  /**
   * A human's answer to a decision a document asked for (a work item the document enqueued, waiting for a
   * human): the document records the answer (its kind's `onWorkItemResolved`) and the item is resolved, in
   * one transaction, so a crash never leaves one without the other. A repeated identical answer returns the
   * item unchanged; any other answer to a finished item is INVALID_TRANSITION.
   */
  async answerDecision(item: WorkItem, a: DecisionAnswer): Promise<WorkItem> {
    const owner = ownerOf(item);
    if (!owner)
      throw new InvalidInputError(`work item ${item.id} is not a decision a document asked for`, {
        id: item.id,
      });
    const kind = (await this.#loadKinds()).get(owner.kind);
    if (!kind.onWorkItemResolved) {
      throw new InvalidInputError(`kind ${owner.kind} takes no answers to its work items`, { id: item.id });
    }
    for (let attempt = 0; ; attempt++) {
      const current = (await this.#backend.work.get(item.id)) ?? item;
      if (current.status !== 'waiting_human') {
        if (isRepeatedAnswer(current, a)) return current;
        explainStatusFailure(current, item.id, a.status);
      }
      const doc = await this.#backend.docs.get(owner.kind, owner.id);
      if (!doc)
        throw new NotFoundError(`${owner.kind}/${owner.id} not found`, { kind: owner.kind, id: owner.id });
      const now = this.#ctx.clock();
      const answered: WorkItem = {
        ...current,
        status: a.status,
        result: a.result,
        error: a.error,
        resolved_at: new Date(now).toISOString(),
        updated_at: new Date(now).toISOString(),
      };
      const change: StatusChange = {
        id: item.id,
        from: ['waiting_human'],
        to: a.status,
        event: 'work_item_resolved',
        result: a.result,
        error: a.error,
        actor: a.actor,
        actor_kind: 'human',
        ...(a.provenance === undefined ? {} : { data: { provenance: a.provenance as JsonObject } }),
        now,
      };
      const body = kind.onWorkItemResolved(
        answered,
        { kind: doc.kind, id: doc.id, version: doc.version, body: structuredClone(doc.body) },
        { actor: a.actor },
      );
      try {
        if (body === null) return (await this.#backend.work.setStatus([change]))[0]!;
        await this.#commit(
          {
            kind: owner.kind,
            id: owner.id,
            expected_version: doc.version,
            body,
            actor: a.actor,
            actor_kind: 'human',
            ...(a.provenance === undefined ? {} : { provenance: a.provenance }),
            reason: `answer to work item ${item.id}`,
          },
          null,
          { item: answered, change },
        );
        return (await this.#backend.work.get(item.id)) ?? answered;
      } catch (err) {
        // The document moved on, or the item was answered meanwhile: look again.
        if (attempt >= RETRIES - 1) throw err;
        if (isStaleVersion(err)) continue;
        if ((err as { code?: string }).code !== 'INVALID_TRANSITION') throw err;
        if ((await this.#backend.work.get(item.id))?.status === 'waiting_human') throw err;
      }
    }
  }
}
