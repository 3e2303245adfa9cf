// AgentStateSaver: LangGraph's BaseCheckpointSaver on an agentstate instance. A thread namespace is one
// versioned document whose versions are its checkpoints, so a run that read the head can only extend the
// head (compare-and-swap), every checkpoint is in the audit log, and channel values are stored once per
// (channel, version). Writes go through inst.docs.commit; reads use the backend's document interface.
import type { RunnableConfig } from '@langchain/core/runnables';
import {
  BaseCheckpointSaver,
  type ChannelVersions,
  type Checkpoint,
  type CheckpointListOptions,
  type CheckpointMetadata,
  type CheckpointPendingWrite,
  type CheckpointTuple,
  compareWritesSortKeys,
  type DeltaChannelHistory,
  maxChannelVersion,
  type PendingWrite,
  type SerializerProtocol,
  TASKS,
  WRITES_IDX_MAP,
  writesSortKey,
} from '@langchain/langgraph-checkpoint';
import {
  type ActorKind,
  type Instance,
  InvalidInputError,
  isAgentStateError,
  type Json,
  type JsonObject,
  NotFoundError,
  StateConflictError,
} from '../../index.js';
import {
  appendedTail,
  canonical,
  checkChannels,
  type Dumped,
  dump,
  dumpBytes,
  isDelta,
  joinId,
  load,
  type Stored,
  type StoredBlob,
  storedOf,
  textOf,
  threadDocId,
  threadIdOf,
} from './encoding.js';
import { NAMESPACES_KIND, registerLangGraphKinds, THREAD_KIND, WRITES_KIND } from './kinds/kind.js';
import { type RunOnThreadOptions, runOnThread } from './thread-runs.js';

/** Where a channel's value lives: its channel version and the document version that stored it. */
type Ref = [version: number | string, at: number];

/** One version of a thread document, as stored. */
interface CheckpointBody {
  thread_id: string;
  checkpoint_ns: string;
  checkpoint_id: string;
  parent_checkpoint_id: string | null;
  checkpoint: Stored;
  metadata: Stored;
  /** Values of the channels this checkpoint changed (null: the channel is empty at this version). */
  blobs: Record<string, StoredBlob | null>;
  refs: Record<string, Ref>;
  /** The greatest checkpoint id of the namespace so far, and the version holding it. */
  latest: [string, number];
  step: number | null;
  source: string | null;
  nodes: string[];
}

/** A pending write as stored: task id, index, channel, value, task path. */
type WriteRow = [string, number, string, Stored, string];

/** What the saver knows about a checkpoint it saw as the head of its namespace. */
interface Head {
  /** The document version while this checkpoint was the head (0: the namespace was empty). */
  version: number;
  refs: Record<string, Ref>;
  latest: [string, number] | null;
  seen: Checkpoint['versions_seen'] | null;
}

/** Options of AgentStateSaver. */
export interface AgentStateSaverOptions {
  /** LangGraph serializer. @default JsonPlusSerializer */
  serde?: SerializerProtocol;
  /** Actor recorded on every checkpoint. @default the instance's worker */
  actor?: string;
  /** Actor kind recorded on every checkpoint. @default 'system' */
  actorKind?: Exclude<ActorKind, 'model'>;
  /**
   * How many heads the saver remembers having read (per process); a run whose head was forgotten is
   * treated as a branch, as the official savers treat every run. @default 10000
   */
  rememberHeads?: number;
  /**
   * A channel value stored this many checkpoints back is stored again with the next checkpoint, so a
   * checkpoint never depends on versions further back than this and `prune` can always remove what is
   * older, and a growing list is rebuilt from at most this many deltas. Costs one full copy of each value per
   * this many checkpoints. @default 50
   */
  restoreAfter?: number;
}

/**
 * Two runs started from the same head of a thread; this one lost: the thread was not forked. Read the
 * thread again (or run again) to continue from the new head. Code STATE_CONFLICT.
 */
export class ThreadConflictError extends StateConflictError {
  /** The thread both runs extended. */
  readonly threadId: string;
  /** Its checkpoint namespace ('' for the root graph). */
  readonly checkpointNs: string;
  /** The checkpoint this run extended. */
  readonly expectedCheckpointId: string | null;
  /** The head the other run wrote. */
  readonly actualCheckpointId: string | null;

  /** Thrown by the saver: `expected` is the head this run extended, `actual` the head the other run wrote. */
  constructor(t: { threadId: string; checkpointNs: string; expected: string | null; actual: string | null }) {
    super(
      `thread ${t.threadId}${t.checkpointNs ? ` (namespace ${t.checkpointNs})` : ''} moved on from checkpoint ${t.expected ?? '(none)'} to ${t.actual ?? '(none)'} while this run was working on it: another run extended it first, so this one was not saved (no fork)`,
      {
        thread_id: t.threadId,
        checkpoint_ns: t.checkpointNs,
        expected_checkpoint_id: t.expected,
        actual_checkpoint_id: t.actual,
        rule: 'one-run-per-thread',
      },
    );
    this.name = 'ThreadConflictError';
    this.threadId = t.threadId;
    this.checkpointNs = t.checkpointNs;
    this.expectedCheckpointId = t.expected;
    this.actualCheckpointId = t.actual;
  }
}

const RETRIES = 10;
/** Version bodies kept in memory (they never change). */
const BODY_CACHE = 512;

const writesDocId = (thread: string, ns: string, id: string): string => joinId([thread, ns, id]);
const checkpointWriteId = (id: string): string => {
  const j = joinId([id]);
  return j.startsWith('%') ? `cp${j}` : `cp:${j}`;
};

function configOf(thread: string, ns: string, id: string): RunnableConfig {
  return { configurable: { thread_id: thread, checkpoint_ns: ns, checkpoint_id: id } };
}

function isCheckpoint(body: JsonObject | null | undefined): boolean {
  return !!body && typeof body.checkpoint_id === 'string' && body.deleted !== true;
}

function changedNodes(
  before: Checkpoint['versions_seen'] | null,
  after: Checkpoint['versions_seen'] | undefined,
): string[] {
  if (!after) return [];
  return Object.keys(after).filter(
    (n) => !n.startsWith('__') && JSON.stringify(after[n]) !== JSON.stringify(before?.[n]),
  );
}

/**
 * LangGraph's checkpointer on agentstate (SQLite or PostgreSQL).
 * @example
 * const inst = await openInstance({ name: 'agent' });
 * const graph = builder.compile({ checkpointer: new AgentStateSaver(inst) });
 */
export class AgentStateSaver extends BaseCheckpointSaver {
  /** The instance the checkpoints are stored in. */
  readonly instance: Instance;
  readonly #actor: string;
  readonly #actorKind: Exclude<ActorKind, 'model'>;
  readonly #heads = new Map<string, Head>();
  readonly #maxHeads: number;
  readonly #restoreAfter: number;
  readonly #bodies = new Map<string, CheckpointBody>();
  readonly #namespaces = new Set<string>();
  /** Checkpoints refused by a conflict: their pending writes are refused too. */
  readonly #rejected = new Set<string>();

  /** A checkpointer on `instance`; registers the adapter's kinds (once per process). */
  constructor(instance: Instance, options: AgentStateSaverOptions = {}) {
    super(options.serde);
    registerLangGraphKinds();
    this.instance = instance;
    this.#actor = options.actor ?? instance.name;
    this.#actorKind = options.actorKind ?? 'system';
    this.#maxHeads = options.rememberHeads ?? 10_000;
    this.#restoreAfter = Math.max(1, options.restoreAfter ?? 50);
  }

  /**
   * Runs `fn` (typically `graph.invoke(input, config)` on this thread) as the only run on the config's
   * (thread, namespace) among every process that uses this method on the same store: LangGraph Platform's
   * multitask strategies, which no open-source saver has. `reject` (the default) throws ThreadBusyError at
   * once while another run holds the thread; `enqueue` waits until the runs that came first have ended.
   * The hold is leased and renewed while `fn` runs, so a run whose process died frees the thread after
   * `leaseMs`. Runs that do not use it are still kept from forking the thread by `put`.
   */
  async runOnThread<T>(
    config: RunnableConfig,
    fn: () => Promise<T>,
    options?: RunOnThreadOptions,
  ): Promise<T> {
    const c = config?.configurable;
    const thread = threadIdOf(c?.thread_id, 'runOnThread');
    const ns =
      c?.checkpoint_ns === undefined || c.checkpoint_ns === null
        ? ''
        : textOf(c.checkpoint_ns, 'checkpoint_ns', 'runOnThread');
    return runOnThread(
      this.instance,
      { actor: this.#actor, actorKind: this.#actorKind },
      thread,
      ns,
      fn,
      options,
    );
  }

  // --- what the saver remembers about heads ---------------------------------------------------------

  #remember(docId: string, checkpointId: string, head: Head): void {
    const key = `${docId}\u0000${checkpointId}`;
    this.#heads.delete(key);
    this.#heads.set(key, head);
    if (this.#heads.size > this.#maxHeads) {
      const oldest = this.#heads.keys().next().value;
      if (oldest !== undefined) this.#heads.delete(oldest);
    }
  }

  #forget(docId: string, checkpointId: string): void {
    this.#heads.delete(`${docId}\u0000${checkpointId}`);
  }

  #forgetDocument(docId: string): void {
    for (const key of [...this.#heads.keys()]) if (key.startsWith(`${docId}\u0000`)) this.#heads.delete(key);
    for (const key of [...this.#bodies.keys()])
      if (key.startsWith(`${docId}\u0000`)) this.#bodies.delete(key);
  }

  // --- reads ------------------------------------------------------------------------------------------

  async #versionBody(docId: string, version: number): Promise<CheckpointBody | null> {
    const key = `${docId}\u0000${version}`;
    const cached = this.#bodies.get(key);
    if (cached) return cached;
    const v = await this.instance.docs.findVersion(THREAD_KIND, docId, version);
    if (v === null || v === 'pruned' || !isCheckpoint(v.body)) return null;
    const body = v.body as unknown as CheckpointBody;
    this.#bodies.set(key, body);
    if (this.#bodies.size > BODY_CACHE) {
      const oldest = this.#bodies.keys().next().value;
      if (oldest !== undefined) this.#bodies.delete(oldest);
    }
    return body;
  }

  async #findCheckpoint(
    docId: string,
    id: string,
  ): Promise<{ version: number; body: CheckpointBody } | null> {
    const w = await this.instance.docs.findWrite(THREAD_KIND, docId, checkpointWriteId(id));
    if (!w || w.entry.noop) return null;
    const body = w.body ?? (await this.#versionBody(docId, w.entry.version));
    if (!isCheckpoint(body as JsonObject | null) || (body as unknown as CheckpointBody).checkpoint_id !== id)
      return null;
    return { version: w.entry.version, body: body as unknown as CheckpointBody };
  }

  async #channelValues(
    docId: string,
    version: number,
    body: CheckpointBody,
  ): Promise<Record<string, unknown>> {
    const out: Record<string, unknown> = {};
    for (const [ch, [, at]] of Object.entries(body.refs)) {
      const holder = at === version ? body : await this.#versionBody(docId, at);
      if (!holder) {
        throw new NotFoundError(
          `checkpoint ${body.checkpoint_id} of thread ${body.thread_id}: the value of channel ${ch} (version ${at} of ${THREAD_KIND}/${docId}) is missing`,
          { kind: THREAD_KIND, id: docId, version: at, channel: ch, pruned: true },
        );
      }
      const blob = holder.blobs[ch];
      if (blob) out[ch] = await load(this.serde, await this.#full(docId, blob, ch));
    }
    return out;
  }

  /** Full UTF-8 bytes of recently used JSON values, by document version and channel (a delta is computed against them). */
  readonly #texts = new Map<string, Buffer>();

  /** A stored value with its deltas applied: the full serialized value. */
  async #full(docId: string, blob: StoredBlob, ch: string): Promise<Stored> {
    if (!isDelta(blob)) return blob;
    const base = await this.#bytes(docId, blob.a, ch);
    return { t: blob.t, s: base.toString('utf8', 0, base.length - 1) + blob.tail };
  }

  /**
   * The full JSON bytes of channel `ch` as stored at document version `at`: the nearest full (or cached)
   * value, then the deltas after it in order, joined in one copy; cached.
   */
  async #bytes(docId: string, at: number, ch: string): Promise<Buffer> {
    const tails: string[] = [];
    let cur = at;
    let base: Buffer | undefined;
    for (;;) {
      base = this.#texts.get(`${docId}\u0000${cur}\u0000${ch}`);
      if (base !== undefined) break;
      const blob = (await this.#versionBody(docId, cur))?.blobs[ch];
      if (!blob || !('s' in blob || isDelta(blob))) {
        throw new NotFoundError(
          `the value of channel ${ch} at version ${cur} of ${THREAD_KIND}/${docId} is missing`,
          { kind: THREAD_KIND, id: docId, version: cur, channel: ch },
        );
      }
      if (!isDelta(blob)) {
        base = Buffer.from((blob as { s: string }).s, 'utf8');
        break;
      }
      tails.push(blob.tail);
      cur = blob.a;
    }
    let out = base;
    if (tails.length > 0) {
      // Each delta's tail ends with the array's ']', which the next one replaces.
      const parts = [base.subarray(0, base.length - 1)];
      for (let i = tails.length - 1; i >= 0; i--) {
        const t = Buffer.from(tails[i] as string, 'utf8');
        parts.push(i === 0 ? t : t.subarray(0, t.length - 1));
      }
      out = Buffer.concat(parts);
    }
    this.#rememberBytes(`${docId}\u0000${at}\u0000${ch}`, out);
    return out;
  }

  #rememberBytes(key: string, bytes: Buffer): void {
    this.#texts.delete(key);
    this.#texts.set(key, bytes);
    if (this.#texts.size > 64) {
      const oldest = this.#texts.keys().next().value;
      if (oldest !== undefined) this.#texts.delete(oldest);
    }
  }

  /** Every blob of a stored checkpoint as a full value (its deltas applied), to compare with a new one. */
  async #fullBlobs(
    docId: string,
    blobs: Record<string, StoredBlob | null>,
  ): Promise<Record<string, Stored | null>> {
    const out: Record<string, Stored | null> = {};
    for (const [ch, b] of Object.entries(blobs)) out[ch] = b === null ? null : await this.#full(docId, b, ch);
    return out;
  }

  /** The versions a stored value depends on (itself and the values its deltas extend). */
  async #chain(docId: string, at: number, ch: string): Promise<number[]> {
    const out = [at];
    let blob = (await this.#versionBody(docId, at))?.blobs[ch];
    while (blob && isDelta(blob)) {
      out.push(blob.a);
      blob = (await this.#versionBody(docId, blob.a))?.blobs[ch];
    }
    return out;
  }

  async #writeRows(thread: string, ns: string, id: string): Promise<WriteRow[]> {
    const doc = await this.instance.docs.find(WRITES_KIND, writesDocId(thread, ns, id));
    if (!doc || doc.body.deleted === true) return [];
    const rows = (doc.body.writes as unknown as WriteRow[]).slice();
    rows.sort((a, b) =>
      compareWritesSortKeys(writesSortKey(a[4], a[0], a[1]), writesSortKey(b[4], b[0], b[1])),
    );
    return rows;
  }

  /** The tuple, or null when prune removed values it needs (it reads as pruned). */
  async #readable(docId: string, version: number, body: CheckpointBody): Promise<CheckpointTuple | null> {
    try {
      return await this.#tuple(docId, version, body);
    } catch (err) {
      if (isAgentStateError(err, 'NOT_FOUND') && (err.details as { pruned?: unknown }).pruned === true)
        return null;
      throw err;
    }
  }

  async #tuple(docId: string, version: number, body: CheckpointBody): Promise<CheckpointTuple> {
    const { thread_id: thread, checkpoint_ns: ns, checkpoint_id: id, parent_checkpoint_id: parent } = body;
    const [bare, metadata, values, rows] = await Promise.all([
      load(this.serde, body.checkpoint) as Promise<Omit<Checkpoint, 'channel_values'>>,
      load(this.serde, body.metadata) as Promise<CheckpointMetadata>,
      this.#channelValues(docId, version, body),
      this.#writeRows(thread, ns, id),
    ]);
    const checkpoint: Checkpoint = { ...bare, channel_values: values };
    const pendingWrites: CheckpointPendingWrite[] = await Promise.all(
      rows.map(async (r) => [r[0], r[2], await load(this.serde, r[3])] as CheckpointPendingWrite),
    );
    if (checkpoint.v < 4 && parent !== null) await this.#migratePendingSends(checkpoint, thread, ns, parent);
    return {
      config: configOf(thread, ns, id),
      checkpoint,
      metadata,
      parentConfig: parent === null ? undefined : configOf(thread, ns, parent),
      pendingWrites,
    };
  }

  /** Checkpoints before format 4 kept sends as writes to TASKS on their parent: move them into the channel. */
  async #migratePendingSends(
    checkpoint: Checkpoint,
    thread: string,
    ns: string,
    parent: string,
  ): Promise<void> {
    const sends = (await this.#writeRows(thread, ns, parent)).filter((r) => r[2] === TASKS);
    checkpoint.channel_values[TASKS] = await Promise.all(sends.map((r) => load(this.serde, r[3])));
    const versions = Object.values(checkpoint.channel_versions);
    checkpoint.channel_versions[TASKS] =
      versions.length > 0 ? maxChannelVersion(...versions) : this.getNextVersion(undefined);
  }

  /**
   * The checkpoint `config` names by `checkpoint_id`, or without one the newest of its thread and namespace,
   * with its pending writes; undefined when there is none (or `thread_id` is missing). A read by id means the
   * caller continues from that checkpoint (time travel), so a put on it may branch; a read of the newest
   * means the caller extends the head, which `put` then holds it to.
   */
  override async getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    return this.#getTuple(config, true);
  }

  /**
   * `intent`: a read by id says the caller means to continue from that checkpoint (time travel), so a
   * put on it may branch; a read of the latest says the caller means to extend the head.
   */
  async #getTuple(config: RunnableConfig, intent: boolean): Promise<CheckpointTuple | undefined> {
    const c = config.configurable ?? {};
    if (typeof c.thread_id !== 'string' || c.thread_id === '') return undefined;
    const thread = c.thread_id;
    const ns =
      c.checkpoint_ns === undefined || c.checkpoint_ns === null
        ? ''
        : textOf(c.checkpoint_ns, 'checkpoint_ns', 'getTuple');
    const docId = threadDocId(thread, ns);
    const wanted = c.checkpoint_id;
    if (typeof wanted === 'string' && wanted !== '') {
      if (intent) this.#forget(docId, wanted);
      const found = await this.#findCheckpoint(docId, wanted);
      return found ? ((await this.#readable(docId, found.version, found.body)) ?? undefined) : undefined;
    }
    const head = await this.instance.docs.find(THREAD_KIND, docId);
    if (!head || !isCheckpoint(head.body)) {
      if (intent)
        this.#remember(docId, '', { version: head?.version ?? 0, refs: {}, latest: null, seen: null });
      return undefined;
    }
    let body = head.body as unknown as CheckpointBody;
    let version = head.version;
    if (body.latest[0] !== body.checkpoint_id) {
      const at = body.latest[1];
      const latest = await this.#versionBody(docId, at);
      if (latest) {
        body = latest;
        version = at;
      }
    }
    const tuple = await this.#tuple(docId, version, body);
    if (intent) {
      this.#remember(docId, body.checkpoint_id, {
        version: head.version,
        refs: body.refs,
        latest: (head.body as unknown as CheckpointBody).latest,
        seen: tuple.checkpoint.versions_seen,
      });
    }
    return tuple;
  }

  /** The namespaces of a thread that hold checkpoints (the root one always listed). */
  async #namespacesOf(thread: string): Promise<string[]> {
    const doc = await this.instance.docs.find(NAMESPACES_KIND, joinId([thread]));
    const list = doc && doc.body.deleted !== true ? (doc.body.namespaces as string[]) : [];
    return list.includes('') ? list : ['', ...list];
  }

  /** Every (thread, namespace) document with checkpoints, for a list without a thread. */
  async #allNamespaces(): Promise<Array<[string, string]>> {
    const out: Array<[string, string]> = [];
    for (const d of await this.instance.docs.list({ kind: NAMESPACES_KIND, limit: 100_000 })) {
      const doc = await this.instance.docs.find(NAMESPACES_KIND, d.id);
      if (!doc || doc.body.deleted === true) continue;
      for (const ns of doc.body.namespaces as string[]) out.push([doc.body.thread_id as string, ns]);
    }
    return out;
  }

  /** The checkpoints of one namespace, newest first (by commit), as (version, body). */
  async *#versionsOf(docId: string): AsyncGenerator<{ version: number; body: CheckpointBody }> {
    let after = 0;
    for (;;) {
      const page = await this.instance.docs
        .history({ kind: THREAD_KIND, id: docId, after, limit: 200, reverse: true })
        .catch((err: unknown) => {
          if (isAgentStateError(err, 'NOT_FOUND')) return { entries: [] };
          throw err;
        });
      const entries = page.entries;
      for (const e of entries) {
        if (e.noop) continue;
        const body = await this.#versionBody(docId, e.version);
        if (body) yield { version: e.version, body };
      }
      if (entries.length < 200) return;
      after = entries[entries.length - 1]!.seq;
    }
  }

  /**
   * The checkpoints of the config's thread (every thread when it names none) and namespace (every namespace
   * when it names none), newest first: only those before `options.before`'s checkpoint and whose metadata
   * holds every value of `options.filter`, at most `options.limit` (all when it is absent, 0 or less).
   */
  override async *list(
    config: RunnableConfig,
    options: CheckpointListOptions = {},
  ): AsyncGenerator<CheckpointTuple> {
    const c = config.configurable ?? {};
    const { limit, before, filter } = options;
    const beforeId = before?.configurable?.checkpoint_id as string | undefined;
    const wanted = Object.entries(filter ?? {}).filter(([, v]) => v !== undefined);
    const ns =
      c.checkpoint_ns === undefined || c.checkpoint_ns === null ? undefined : String(c.checkpoint_ns);
    let targets: Array<[string, string]>;
    if (typeof c.thread_id === 'string' && c.thread_id !== '') {
      const thread = c.thread_id;
      targets =
        ns === undefined ? (await this.#namespacesOf(thread)).map((n) => [thread, n]) : [[thread, ns]];
    } else {
      targets = (await this.#allNamespaces()).filter(([, n]) => ns === undefined || n === ns);
    }
    const max = limit === undefined || limit <= 0 ? Number.POSITIVE_INFINITY : Math.floor(limit);
    const matches = async (body: CheckpointBody, docId: string, version: number) => {
      if (beforeId !== undefined && !(body.checkpoint_id < beforeId)) return null;
      const tuple = await this.#readable(docId, version, body);
      if (!tuple) return null;
      const md = (tuple.metadata ?? {}) as Record<string, unknown>;
      return wanted.every(([k, v]) => JSON.stringify(md[k]) === JSON.stringify(v)) ? tuple : null;
    };
    if (targets.length === 1) {
      const [thread, n] = targets[0]!;
      const docId = threadDocId(thread, n);
      let count = 0;
      for await (const { version, body } of this.#versionsOf(docId)) {
        if (count >= max) return;
        const t = await matches(body, docId, version);
        if (t) {
          count++;
          yield t;
        }
      }
      return;
    }
    // Several namespaces: newest checkpoint id first across all of them.
    const all: CheckpointTuple[] = [];
    for (const [thread, n] of targets) {
      const docId = threadDocId(thread, n);
      for await (const { version, body } of this.#versionsOf(docId)) {
        const t = await matches(body, docId, version);
        if (t) all.push(t);
      }
    }
    all.sort((a, b) => (a.checkpoint.id < b.checkpoint.id ? 1 : a.checkpoint.id > b.checkpoint.id ? -1 : 0));
    yield* all.slice(0, Number.isFinite(max) ? max : undefined);
  }

  /**
   * LangGraph's read for delta channels: for each of `options.channels`, the writes to it stored with the
   * ancestors of the config's checkpoint, from which the channel's value is rebuilt. Unlike `getTuple`, this
   * read does not count as the caller continuing from the checkpoint.
   */
  override async getDeltaChannelHistory(options: {
    config: RunnableConfig;
    channels: string[];
  }): Promise<Record<string, DeltaChannelHistory>> {
    const { config, channels } = options;
    if (channels.length === 0) return {};
    // Newest ancestor first; each block is one ancestor's writes for the channel, in writesSortKey order.
    const blocks = new Map<string, CheckpointPendingWrite[][]>(channels.map((ch) => [ch, []]));
    const seeds = new Map<string, unknown>();
    const open = new Set(channels);
    // Reads here are not a caller's intent to branch: they must not make the run's head forgotten.
    let cursor = (await this.#getTuple(config, false))?.parentConfig;
    while (cursor && open.size > 0) {
      const t = await this.#getTuple(cursor, false);
      if (!t) break;
      for (const ch of open) {
        const mine = (t.pendingWrites ?? []).filter((w) => w[1] === ch);
        if (mine.length > 0) blocks.get(ch)!.push(mine);
        if (Object.hasOwn(t.checkpoint.channel_values, ch)) {
          seeds.set(ch, t.checkpoint.channel_values[ch]);
          open.delete(ch);
        }
      }
      cursor = t.parentConfig;
    }
    const out: Record<string, DeltaChannelHistory> = {};
    for (const ch of channels) {
      const entry: DeltaChannelHistory = { writes: blocks.get(ch)!.reverse().flat() };
      if (seeds.has(ch)) entry.seed = seeds.get(ch);
      out[ch] = entry;
    }
    return out;
  }

  // --- writes -----------------------------------------------------------------------------------------

  /** The base a put that does not extend a remembered head builds on: the current head and the parent. */
  async #branchBase(docId: string, parentId: string | undefined): Promise<Head & { live: boolean }> {
    const head = await this.instance.docs.find(THREAD_KIND, docId);
    const live = !!head && isCheckpoint(head.body);
    const headBody = live ? (head!.body as unknown as CheckpointBody) : null;
    let parent: CheckpointBody | null = null;
    if (parentId !== undefined) {
      parent =
        headBody?.checkpoint_id === parentId
          ? headBody
          : ((await this.#findCheckpoint(docId, parentId))?.body ?? null);
    }
    const seen = parent ? ((await load(this.serde, parent.checkpoint)) as Checkpoint).versions_seen : null;
    return {
      version: head?.version ?? 0,
      refs: parent?.refs ?? {},
      latest: headBody?.latest ?? null,
      seen,
      live,
    };
  }

  /** Records a namespace in its thread's list (before its first checkpoint, so a listed one may be empty). */
  async #addNamespace(thread: string, ns: string): Promise<void> {
    const key = `${thread}\u0000${ns}`;
    if (this.#namespaces.has(key)) return;
    const id = joinId([thread]);
    for (let attempt = 1; ; attempt++) {
      const doc = await this.instance.docs.find(NAMESPACES_KIND, id);
      const list = doc && doc.body.deleted !== true ? (doc.body.namespaces as string[]) : [];
      if (list.includes(ns)) break;
      try {
        await this.instance.docs.commit({
          kind: NAMESPACES_KIND,
          id,
          expected_version: doc?.version ?? 0,
          body: { thread_id: thread, namespaces: [...list, ns] },
          actor: this.#actor,
          actor_kind: this.#actorKind,
          reason: `namespace ${JSON.stringify(ns)}`,
        });
        break;
      } catch (err) {
        if (!isAgentStateError(err, 'STATE_CONFLICT') || attempt >= RETRIES) throw err;
      }
    }
    this.#namespaces.add(key);
  }

  /**
   * Stores `checkpoint` as the next version of its thread and namespace, with the channel values that
   * `newVersions` names, and returns the config naming it. A run that read the head may only extend it:
   * when another run extended it first, throws ThreadConflictError and stores nothing (no fork). The same
   * checkpoint id stored again with the same content is returned as it is; with other content it is refused
   * (STATE_CONFLICT, rule checkpoints-are-immutable).
   */
  override async put(
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    newVersions: ChannelVersions,
  ): Promise<RunnableConfig> {
    const c = config.configurable;
    if (!c) throw new InvalidInputError('put: config.configurable is missing', { field: 'configurable' });
    const thread = threadIdOf(c.thread_id, 'put');
    const ns =
      c.checkpoint_ns === undefined || c.checkpoint_ns === null
        ? ''
        : textOf(c.checkpoint_ns, 'checkpoint_ns', 'put');
    const parentId =
      c.checkpoint_id === undefined || c.checkpoint_id === null || c.checkpoint_id === ''
        ? undefined
        : textOf(c.checkpoint_id, 'checkpoint_id', 'put');
    const id = textOf(checkpoint?.id, 'checkpoint.id', 'put');
    if (id === '')
      throw new InvalidInputError('put: checkpoint.id must not be empty', { field: 'checkpoint.id' });
    const docId = threadDocId(thread, ns);
    const { channel_values: values = {}, ...bare } = checkpoint;
    checkChannels(Object.keys(newVersions ?? {}), 'put');
    checkChannels(Object.keys(checkpoint.channel_versions ?? {}), 'put');
    const [cp, md] = await Promise.all([dump(this.serde, bare), dump(this.serde, metadata)]);
    const dumped: Record<string, Dumped | null> = {};
    for (const ch of Object.keys(newVersions ?? {})) {
      dumped[ch] = Object.hasOwn(values, ch)
        ? await dumpBytes(this.serde, (values as Record<string, unknown>)[ch])
        : null;
    }
    // A value's text is made only when it is stored whole (or compared with a stored one).
    let blobs: Record<string, Stored | null> | undefined;
    const fullBlobs = () => {
      blobs ??= Object.fromEntries(Object.entries(dumped).map(([ch, d]) => [ch, d && storedOf(d)]));
      return blobs;
    };
    // A remembered head means this run read it as the latest: it may only extend it.
    const extending = this.#heads.get(`${docId}\u0000${parentId ?? ''}`);
    for (let attempt = 1; ; attempt++) {
      const base = extending ?? (await this.#branchBase(docId, parentId));
      if (base.version === 0 || ('live' in base && !base.live) || base.latest === null)
        await this.#addNamespace(thread, ns);
      const next = base.version + 1;
      const refs: Record<string, Ref> = {};
      for (const [ch, v] of Object.entries(checkpoint.channel_versions ?? {})) {
        const r = base.refs[ch];
        if (r && String(r[0]) === String(v)) refs[ch] = r;
      }
      for (const [ch, v] of Object.entries(newVersions ?? {})) refs[ch] = [v, next];
      const own: Record<string, StoredBlob | null> = {};
      // A growing list keeps only what it appends to the parent's value (a chain of at most restoreAfter).
      for (const [ch, d] of Object.entries(dumped)) {
        const prev = base.refs[ch];
        if (d && 'bytes' in d && prev) {
          const held = (await this.#versionBody(docId, prev[1]))?.blobs[ch];
          const depth = held && isDelta(held) ? held.n + 1 : 1;
          if (held && ('s' in held || isDelta(held)) && depth < this.#restoreAfter) {
            const tail = appendedTail(await this.#bytes(docId, prev[1], ch), d.bytes);
            if (tail !== null) {
              own[ch] = { t: 'json', a: prev[1], n: depth, tail };
              continue;
            }
          }
        }
        own[ch] = d && storedOf(d);
      }
      // Values stored long ago are stored again here, so no checkpoint pins old history (see restoreAfter).
      for (const [ch, r] of Object.entries(refs)) {
        if (r[1] === next || next - r[1] < this.#restoreAfter) continue;
        const holder = await this.#versionBody(docId, r[1]);
        const blob = holder?.blobs[ch];
        if (blob === undefined) continue;
        // An empty channel is marked empty here again; a value is stored here in full.
        own[ch] = blob === null ? null : await this.#full(docId, blob, ch);
        refs[ch] = [r[0], next];
      }
      const latest: [string, number] = base.latest && base.latest[0] > id ? base.latest : [id, next];
      const body: CheckpointBody = {
        thread_id: thread,
        checkpoint_ns: ns,
        checkpoint_id: id,
        parent_checkpoint_id: parentId ?? null,
        checkpoint: cp,
        metadata: md,
        blobs: own,
        refs,
        latest,
        step: typeof metadata?.step === 'number' ? metadata.step : null,
        source: typeof metadata?.source === 'string' ? metadata.source : null,
        nodes: changedNodes(base.seen, checkpoint.versions_seen),
      };
      try {
        const r = await this.instance.docs.commit({
          kind: THREAD_KIND,
          id: docId,
          expected_version: base.version,
          body: body as unknown as JsonObject,
          write_id: checkpointWriteId(id),
          actor: this.#actor,
          actor_kind: this.#actorKind,
          reason: `checkpoint ${id}${body.source ? ` (${body.source}, step ${body.step})` : ''}`,
        });
        if (!r.replayed) {
          this.#bodies.set(`${docId}\u0000${r.version}`, body);
          // The full bytes of each value just stored: the next delta is computed against them without a walk.
          for (const [ch, d] of Object.entries(dumped)) {
            if (d && 'bytes' in d) this.#rememberBytes(`${docId}\u0000${r.version}\u0000${ch}`, d.bytes);
          }
        }
        this.#remember(docId, id, {
          version: r.version,
          refs: r.replayed ? ((r.body as unknown as CheckpointBody).refs ?? refs) : refs,
          latest: r.replayed ? ((r.body as unknown as CheckpointBody).latest ?? latest) : latest,
          seen: checkpoint.versions_seen ?? null,
        });
        return configOf(thread, ns, id);
      } catch (err) {
        if (!isAgentStateError(err, 'STATE_CONFLICT')) throw err;
        if ((err.details as { write_id?: unknown }).write_id != null) {
          // This checkpoint id is stored already: the same checkpoint again is fine, another one is not.
          const prior = await this.#findCheckpoint(docId, id);
          if (
            prior &&
            canonical([
              prior.body.checkpoint,
              prior.body.metadata,
              await this.#fullBlobs(docId, prior.body.blobs),
            ]) === canonical([cp, md, fullBlobs()])
          ) {
            return configOf(thread, ns, id);
          }
          throw new StateConflictError(
            `checkpoint ${id} is already stored in thread ${thread} with other content; a checkpoint is never overwritten`,
            { thread_id: thread, checkpoint_ns: ns, checkpoint_id: id, rule: 'checkpoints-are-immutable' },
          );
        }
        if (extending) {
          this.#rejected.add(id);
          const head = await this.instance.docs.find(THREAD_KIND, docId);
          throw new ThreadConflictError({
            threadId: thread,
            checkpointNs: ns,
            expected: parentId ?? null,
            actual: head && isCheckpoint(head.body) ? (head.body.checkpoint_id as string) : null,
          });
        }
        if (attempt >= RETRIES) throw err;
      }
    }
  }

  /**
   * Stores the pending writes of task `taskId` for the checkpoint the config names (`checkpoint_id` is
   * required). Special writes (error, interrupt, resume, scheduled) replace their slot; a task's regular
   * writes never overwrite what is stored at their (task, index). The writes of a checkpoint that `put`
   * refused for a conflict are refused too (STATE_CONFLICT).
   */
  override async putWrites(
    config: RunnableConfig,
    writes: PendingWrite[],
    taskId: string,
    taskPath = '',
  ): Promise<void> {
    const c = config.configurable;
    if (!c)
      throw new InvalidInputError('putWrites: config.configurable is missing', { field: 'configurable' });
    const thread = threadIdOf(c.thread_id, 'putWrites');
    const ns =
      c.checkpoint_ns === undefined || c.checkpoint_ns === null
        ? ''
        : textOf(c.checkpoint_ns, 'checkpoint_ns', 'putWrites');
    if (typeof c.checkpoint_id !== 'string' || c.checkpoint_id === '') {
      throw new InvalidInputError('putWrites: config.configurable.checkpoint_id must be a non-empty string', {
        field: 'checkpoint_id',
      });
    }
    const id = textOf(c.checkpoint_id, 'checkpoint_id', 'putWrites');
    textOf(taskId, 'taskId', 'putWrites');
    if (this.#rejected.has(id)) {
      throw new StateConflictError(
        `checkpoint ${id} was refused (another run extended thread ${thread}): its writes are not stored`,
        {
          thread_id: thread,
          checkpoint_ns: ns,
          checkpoint_id: id,
          rule: 'one-run-per-thread',
        },
      );
    }
    if (writes.length === 0) return;
    const rows: WriteRow[] = await Promise.all(
      writes.map(
        async ([ch, v], i) =>
          [taskId, WRITES_IDX_MAP[ch] ?? i, ch, await dump(this.serde, v), taskPath] as WriteRow,
      ),
    );
    // Special writes (error, interrupt, resume, scheduled) replace their slot; a task's regular writes never
    // overwrite what is stored at their (task, index).
    const replace = writes.every(([ch]) => ch in WRITES_IDX_MAP);
    const docId = writesDocId(thread, ns, id);
    for (let attempt = 1; ; attempt++) {
      const doc = await this.instance.docs.find(WRITES_KIND, docId);
      const stored = doc && doc.body.deleted !== true ? (doc.body.writes as unknown as WriteRow[]) : [];
      const merged = stored.slice();
      let changed = false;
      for (const row of rows) {
        const at = merged.findIndex((w) => w[0] === row[0] && w[1] === row[1]);
        if (at === -1) {
          merged.push(row);
          changed = true;
        } else if (replace && canonical(merged[at]) !== canonical(row)) {
          merged[at] = row;
          changed = true;
        }
      }
      if (!changed) return;
      try {
        await this.instance.docs.commit({
          kind: WRITES_KIND,
          id: docId,
          expected_version: doc?.version ?? 0,
          body: {
            thread_id: thread,
            checkpoint_ns: ns,
            checkpoint_id: id,
            writes: merged as unknown as Json,
          },
          actor: this.#actor,
          actor_kind: this.#actorKind,
          reason: `writes of task ${taskId}`,
        });
        return;
      } catch (err) {
        // Tasks of one step write concurrently: merge again on the newer version (none is lost).
        if (!isAgentStateError(err, 'STATE_CONFLICT') || attempt >= RETRIES * 3) throw err;
      }
    }
  }

  /** Tombstones a document and drops its history (the audit events stay: they hold ids, not values). */
  async #erase(kind: string, id: string, body: JsonObject): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      const doc = await this.instance.docs.find(kind, id);
      if (!doc) return;
      if (doc.body.deleted !== true) {
        try {
          await this.instance.docs.commit({
            kind,
            id,
            expected_version: doc.version,
            body: { ...body, deleted: true },
            actor: this.#actor,
            actor_kind: this.#actorKind,
            reason: 'thread deleted',
          });
        } catch (err) {
          if (!isAgentStateError(err, 'STATE_CONFLICT') || attempt >= RETRIES) throw err;
          continue;
        }
      }
      await this.instance.docs.prune({ kind, id, keep: 1 });
      return;
    }
  }

  /**
   * Copies every checkpoint (and its pending writes) of a thread, every namespace, into a new thread, in
   * order, so the copy branches, resumes and lists as the original. STATE_CONFLICT when the target exists.
   * @example await saver.copyThread('support-42', 'support-42-experiment');
   */
  async copyThread(sourceThreadId: string, targetThreadId: string): Promise<{ checkpoints: number }> {
    const source = threadIdOf(sourceThreadId, 'copyThread');
    const target = threadIdOf(targetThreadId, 'copyThread');
    for (const ns of await this.#namespacesOf(target)) {
      const head = await this.instance.docs.find(THREAD_KIND, threadDocId(target, ns));
      if (head && isCheckpoint(head.body)) {
        throw new StateConflictError(`copyThread: thread ${target} already has checkpoints`, {
          thread_id: target,
          rule: 'copy-into-new-thread',
        });
      }
    }
    let checkpoints = 0;
    for (const ns of await this.#namespacesOf(source)) {
      const docId = threadDocId(source, ns);
      const versions: Array<{ version: number; body: CheckpointBody }> = [];
      for await (const v of this.#versionsOf(docId)) versions.push(v);
      for (const { version, body } of versions.reverse()) {
        const tuple = await this.#tuple(docId, version, body);
        // The values this checkpoint stored itself; the others it shares with its parent, as in the source.
        const own: ChannelVersions = {};
        for (const [ch, [v, at]] of Object.entries(body.refs)) if (at === version) own[ch] = v;
        const parent = body.parent_checkpoint_id;
        const config = await this.put(
          {
            configurable: {
              thread_id: target,
              checkpoint_ns: ns,
              ...(parent ? { checkpoint_id: parent } : {}),
            },
          },
          tuple.checkpoint,
          tuple.metadata ?? { source: 'update', step: -1, parents: {} },
          own,
        );
        const rows = await this.#writeRows(source, ns, body.checkpoint_id);
        const byTask = new Map<string, WriteRow[]>();
        for (const r of rows) {
          const k = JSON.stringify([r[0], r[4]]);
          byTask.set(k, [...(byTask.get(k) ?? []), r]);
        }
        for (const group of byTask.values()) {
          group.sort((a, b) => a[1] - b[1]);
          const writes: PendingWrite[] = await Promise.all(
            group.map(async (r) => [r[2], await load(this.serde, r[3])] as PendingWrite),
          );
          await this.putWrites(config, writes, group[0]![0], group[0]![4]);
        }
        checkpoints++;
      }
    }
    return { checkpoints };
  }

  /**
   * Keeps the newest `keep` checkpoints of each namespace of a thread, and every older one they still
   * need: the versions holding their channel values, and for a channel a checkpoint does not store (a
   * delta channel between snapshots) the ancestors back to the one that does, with their pending writes.
   * What is older than all of that is removed, with its pending writes.
   * @example await saver.prune('support-42', { keep: 20 });
   */
  async prune(threadId: string, options: { keep: number }): Promise<{ removed: number }> {
    const thread = threadIdOf(threadId, 'prune');
    if (!Number.isSafeInteger(options?.keep) || options.keep < 1) {
      throw new InvalidInputError('prune: keep must be a whole number >= 1', { field: 'keep' });
    }
    let removed = 0;
    for (const ns of await this.#namespacesOf(thread)) {
      const docId = threadDocId(thread, ns);
      const head = await this.instance.docs.find(THREAD_KIND, docId);
      if (!head || !isCheckpoint(head.body)) continue;
      const all: Array<{ version: number; body: CheckpointBody }> = [];
      for await (const v of this.#versionsOf(docId)) all.push(v);
      if (all.length <= options.keep) continue;
      // The kept checkpoints and what they need; an older checkpoint left above the floor whose values
      // went with the pruned versions reads as pruned (getTuple undefined, skipped by list).
      let floor = all[options.keep - 1]!.version;
      const need = (v: number) => {
        floor = Math.min(floor, v);
      };
      for (const { body } of all.slice(0, options.keep)) {
        for (const [ch, [, at]] of Object.entries(body.refs))
          for (const v of await this.#chain(docId, at, ch)) need(v);
        // Channels this checkpoint has a version of but no stored value: walk up to where it is stored.
        const cp = (await load(this.serde, body.checkpoint)) as Checkpoint;
        const missing = new Set(Object.keys(cp.channel_versions ?? {}).filter((ch) => !body.refs[ch]));
        let parent = body.parent_checkpoint_id;
        while (missing.size > 0 && parent) {
          const a = await this.#findCheckpoint(docId, parent);
          if (!a) break;
          need(a.version);
          for (const [ch, [, at]] of Object.entries(a.body.refs)) {
            for (const v of await this.#chain(docId, at, ch)) need(v);
            missing.delete(ch);
          }
          parent = a.body.parent_checkpoint_id;
        }
      }
      const gone = all.filter((v) => v.version < floor);
      for (const { body } of gone) {
        await this.#erase(WRITES_KIND, writesDocId(thread, ns, body.checkpoint_id), {
          thread_id: thread,
          checkpoint_ns: ns,
          checkpoint_id: body.checkpoint_id,
          writes: [],
        });
      }
      await this.instance.docs.prune({ kind: THREAD_KIND, id: docId, keep: head.version - floor + 1 });
      for (const key of [...this.#bodies.keys()]) {
        const [d, v] = key.split('\u0000') as [string, string];
        if (d === docId && Number(v) < floor) this.#bodies.delete(key);
      }
      removed += gone.length;
    }
    return { removed };
  }

  /**
   * Deletes a thread in every namespace: its checkpoints, their pending writes and its namespace list are
   * committed as deleted and their history pruned to that version (the log keeps their events).
   */
  override async deleteThread(threadId: string): Promise<void> {
    const thread = threadIdOf(threadId, 'deleteThread');
    for (const ns of await this.#namespacesOf(thread)) {
      const docId = threadDocId(thread, ns);
      const ids = new Set<string>();
      for await (const { body } of this.#versionsOf(docId)) ids.add(body.checkpoint_id);
      for (const id of ids) {
        await this.#erase(WRITES_KIND, writesDocId(thread, ns, id), {
          thread_id: thread,
          checkpoint_ns: ns,
          checkpoint_id: id,
          writes: [],
        });
      }
      await this.#erase(THREAD_KIND, docId, { thread_id: thread, checkpoint_ns: ns });
      this.#forgetDocument(docId);
      this.#namespaces.delete(`${thread}\u0000${ns}`);
    }
    await this.#erase(NAMESPACES_KIND, joinId([thread]), { thread_id: thread, namespaces: [] });
  }
}
