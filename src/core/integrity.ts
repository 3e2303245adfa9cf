// The integrity checker: from every record of an instance (as a backend's dump yields them) it checks the
// event hash chain, each document and kept history entry against its state_committed events, each work item
// against the fold of its events, a Workflow World's runs, steps, hooks and waits against the fold of its
// events (workflow-integrity.ts, loaded when there are any), and the rows that name event positions against
// the real head. A pure function of the records, so verify (on every backend) and instance import judge alike.

import { InvalidInputError } from '../errors.js';
import type {
  CounterRecord,
  DocumentRowDump,
  DumpRecord,
  HistoryRowDump,
  LimitRowDump,
  StoredEvent,
  WorkItemRowDump,
} from './backend.js';
import { holderProblem, RUN_RECORD_TYPES, readRecord } from './codecs/run-records.js';
import {
  enqueuedFold,
  type FoldedEvent,
  ITEM_EVENT_CODECS,
  type ItemEventCodec,
  type ItemFold,
} from './codecs/work-items.js';
import { WORKFLOW_EVENT } from './codecs/workflow-events/codec.js';
import { computeEventHash, GENESIS_HASH } from './hash.js';
import { canonicalJson, contentHash } from './json.js';
import { toIso } from './time.js';
import type { IntegrityProblem, IntegrityProblemKind, Json, JsonObject, VerifyResult } from './types.js';
import { expandBatchEvent, ITEM_TYPE_OF_BATCH } from './work-rules.js';
import type { WorkflowFold } from './workflow-integrity.js';

/** An event position and its hash, as `verify`, `instance export` and the dashboard stamp print it. */
export interface HeadAnchor {
  position: number;
  hash: string;
}

const ANCHOR = /^(\d{1,16}):([0-9a-f]{64})$/;

/**
 * Reads a head given as `position:hash` (or as an object); INVALID_INPUT otherwise.
 * @example parseHeadAnchor('24:03cd644d99e3428a…') // { position: 24, hash: '03cd644d99e3428a…' }
 */
export function parseHeadAnchor(value: string | HeadAnchor): HeadAnchor {
  const m = typeof value === 'string' ? ANCHOR.exec(value.trim()) : null;
  const position = m ? Number(m[1]) : typeof value === 'object' && value !== null ? value.position : NaN;
  const hash = m ? m[2]! : typeof value === 'object' && value !== null ? value.hash : '';
  if (
    !Number.isSafeInteger(position) ||
    position < 0 ||
    typeof hash !== 'string' ||
    !/^[0-9a-f]{64}$/.test(hash) ||
    (position === 0 && hash !== GENESIS_HASH)
  ) {
    throw new InvalidInputError(
      `head must be position:hash as verify, instance export or the dashboard print it (e.g. 24:03cd…, 64 hex digits), got ${JSON.stringify(typeof value === 'string' ? value.slice(0, 100) : value)}`,
      { field: 'head' },
    );
  }
  return { position, hash };
}

/** `position:hash`, or null for an empty log. */
export function formatHeadAnchor(head: HeadAnchor | null): string | null {
  return head === null || head.position === 0 ? null : `${head.position}:${head.hash}`;
}

/** Everything a dump or a verify snapshot yields. */
export type InstanceRecord = DumpRecord | CounterRecord;

/** Whether `r` belongs to a Workflow SDK World (its events or its rows), which only the World's fold checks. */
const isWorkflowRecord = (r: InstanceRecord): boolean =>
  r.t === 'event' ? r.row.type === WORKFLOW_EVENT : r.t.startsWith('workflow_') && r.t !== 'workflow_chunk';

/** What an `IntegrityChecker` checks besides the hash chain, and how many problems it keeps. */
export interface IntegrityOptions {
  /** A head seen earlier: the log must still hold that event unchanged. */
  head?: HeadAnchor | null;
  /** The records include the mutable rows (work items, documents, history): check them against the log. @default true */
  rows?: boolean;
  /** Problems kept in the result (`problem_count` counts all). @default 1000 */
  maxProblems?: number;
}

/** What a non-noop state_committed event says about one version. */
interface VersionEvent {
  content_hash: Json | undefined;
  actor: string | null;
  actor_kind: Json | undefined;
  parent_version: Json | undefined;
  write_id: Json;
  reason: Json;
  created_at: number;
}

interface DocumentLog {
  versions: Map<number, VersionEvent>;
  /** No-op events not yet matched to a history row, by their recorded fields. */
  noops: Map<string, number>;
  latest: number;
}

/** A work item as its events fold it; undefined/null fields the events did not record are unchecked. */

type StoredDocument = Omit<DocumentRowDump, 'body'> & { body_hash: string };
type StoredHistory = Omit<HistoryRowDump, 'body'> & { body_hash: string | null };
type StoredItem = Omit<WorkItemRowDump, 'payload'> & { payload_hash: string };

/** The work-item event types: the enqueue that makes an item, and every type with a codec. */
const ITEM_EVENTS = new Set(['work_item_enqueued', ...ITEM_EVENT_CODECS.keys()]);

const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);
const docKey = (kind: string, id: string) => `${kind}/${id}`;

function show(v: Json | undefined): string {
  if (v === undefined) return 'absent';
  const text = JSON.stringify(v);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

/** Epoch ms as an ISO time for messages (the dump stores numbers). */
// Stryker disable next-line LogicalOperator: toIso maps null and undefined to null itself, so what this test lets through to it changes nothing
const when = (ms: number | null | undefined): Json => (ms === null || ms === undefined ? null : toIso(ms));

/**
 * Checks the records of one instance. Feed it with `add` (events in position order; the other records in
 * any order), then call `finish`.
 *
 * What it cannot see: a lease's expiry and `updated_at` (heartbeats write no event), a work item's payload,
 * max_attempts and not_before when its enqueued event predates `payload_hash`, a history entry's
 * provenance, override and request hash, a document's `forked_from`, history removed from the oldest end
 * (retention does that), a World hook's owner fields, and a World's stream chunks (in no event). A World's
 * tables are checked only once `loadWorkflowCheck` has loaded their check. A log rewritten from its first changed event on, hashes included, is
 * consistent: only a head kept elsewhere (`head`) shows it.
 */
export class IntegrityChecker {
  readonly #anchor: HeadAnchor | null;
  readonly #rows: boolean;
  readonly #max: number;
  readonly #problems: IntegrityProblem[] = [];
  #count = 0;

  // The chain.
  #expected = 1;
  #prev = GENESIS_HASH;
  #verified = 0;
  #verifiedHash: string | null = null;
  #broken: { position: number; reason: string } | null = null;
  #scanned = 0;
  #last: HeadAnchor | null = null;
  #anchorSeen = false;
  #anchorMatches = false;
  readonly #streams = new Map<string, number>();

  // What the log says.
  readonly #docs = new Map<string, DocumentLog>();
  readonly #items = new Map<string, ItemFold>();
  /** Each limited key's limit, as its last work_limit_set says (removed ones gone). */
  readonly #limits = new Map<string, { max_in_flight: Json; rate: Json }>();

  // What the rows hold.
  readonly #itemRows: StoredItem[] = [];
  readonly #docRows: StoredDocument[] = [];
  readonly #historyRows: StoredHistory[] = [];
  readonly #limitRows: LimitRowDump[] = [];
  #counterHead: HeadAnchor | null = null;
  readonly #counterStreams: Array<{ stream: string; seq: number }> = [];
  #hasCounters = false;
  /** The rows of work_item_blockers, when the records carry them. */
  #edges: Array<{ blocker: string; item: string }> | null = null;
  /** The fold of a Workflow World's events, once loaded (`loadWorkflowCheck`). */
  #world: WorkflowFold | null = null;
  /** World records came that no fold checked. */
  #worldUnchecked = false;

  constructor(options: IntegrityOptions = {}) {
    this.#anchor = options.head ?? null;
    this.#rows = options.rows ?? true;
    this.#max = options.maxProblems ?? 1000;
  }

  /** Events checked so far. */
  get events(): number {
    return this.#scanned;
  }

  /**
   * Loads the check of a Workflow SDK World's tables (its runs, steps, hooks and waits against its
   * `workflow_event` events, replayed through the World's rules), which needs @workflow/world, an optional
   * peer dependency. Call it before adding the first World record (`checkRecords` does); without it, or
   * without the package, World records are left unchecked (`checked.workflow_runs` is null). Returns whether
   * the check is loaded.
   */
  async loadWorkflowCheck(): Promise<boolean> {
    if (this.#world !== null) return true;
    if (!this.#rows) return false;
    let mod: typeof import('./workflow-integrity.js');
    try {
      mod = await import('./workflow-integrity.js');
    } catch (err) {
      const code = (err as NodeJS.ErrnoException | null)?.code;
      if (
        (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') &&
        String((err as Error).message).includes('@workflow/world')
      )
        return false;
      throw err;
    }
    this.#world = new mod.WorkflowFold({
      report: (problem, table, key, message, extra) => this.#report(problem, table, key, message, extra),
      differs: (table, key, field, expected, actual) => this.#differs(table, key, field, expected, actual),
    });
    return true;
  }

  #report(
    problem: IntegrityProblemKind,
    table: IntegrityProblem['table'],
    key: string,
    message: string,
    extra: Pick<IntegrityProblem, 'field' | 'expected' | 'actual'> = {},
  ): void {
    this.#count += 1;
    if (this.#problems.length < this.#max) this.#problems.push({ problem, table, key, ...extra, message });
  }

  /** Reports `field` of a row when it differs from what the log says (compared as canonical JSON). */
  #differs(
    table: IntegrityProblem['table'],
    key: string,
    field: string,
    expected: Json | undefined,
    actual: Json | undefined,
  ): void {
    if (canonicalJson(expected ?? null) === canonicalJson(actual ?? null)) return;
    this.#report(
      'row_differs',
      table,
      key,
      `${table} ${key}: ${field} is ${show(actual)}, the log says ${show(expected)}`,
      {
        field,
        expected: expected ?? null,
        actual: actual ?? null,
      },
    );
  }

  /** A work item's value (payload, result) that hashes to `actual` where the log recorded `expected`. */
  #hashDiffers(key: string, field: string, expected: string, actual: string): void {
    if (expected === actual) return;
    this.#report(
      'row_differs',
      'work_items',
      key,
      `work_items ${key}: ${field} hashes to ${actual.slice(0, 16)}…, the log says ${expected.slice(0, 16)}…`,
      { field, expected, actual },
    );
  }

  /** Feeds one record: events in position order, the other records in any order. */
  add(r: InstanceRecord): void {
    switch (r.t) {
      case 'event':
        this.#event(r.row);
        break;
      case 'work_item': {
        const { payload, ...rest } = r.row;
        this.#itemRows.push({ ...rest, payload_hash: contentHash(payload) });
        break;
      }
      case 'document': {
        const { body, ...rest } = r.row;
        this.#docRows.push({ ...rest, body_hash: contentHash(body) });
        break;
      }
      case 'history': {
        const { body, ...rest } = r.row;
        this.#historyRows.push({ ...rest, body_hash: body === null ? null : contentHash(body) });
        break;
      }
      case 'limit':
        this.#limitRows.push(r.row);
        break;
      case 'event_head':
        this.#hasCounters = true;
        this.#counterHead = { position: r.row.position, hash: r.row.hash };
        break;
      case 'event_stream':
        this.#hasCounters = true;
        this.#counterStreams.push(r.row);
        break;
      case 'blocker_edges':
        this.#edges = r.row.edges;
        break;
      case 'workflow_run':
      case 'workflow_step':
      case 'workflow_hook':
      case 'workflow_wait':
        if (!this.#rows) break;
        if (this.#world) this.#world.row(r);
        else this.#worldUnchecked = true;
        break;
      // Stream chunks are in no event: nothing to check them against.
    }
  }

  #event(e: StoredEvent): void {
    this.#scanned += 1;
    const key = `#${e.position}`;
    const chain = (reason: string) => {
      this.#broken ??= { position: e.position, reason };
      this.#report(
        'chain_broken',
        'events',
        key,
        `the event chain is broken at event #${e.position}: ${reason}`,
      );
    };
    const intact = this.#broken === null;
    if (e.position !== this.#expected) {
      chain(
        e.position > this.#expected
          ? `position ${this.#expected} is missing (next is ${e.position})`
          : `position ${e.position} comes again after ${this.#expected - 1}`,
      );
    } else if (e.prev_hash !== this.#prev) {
      chain('prev_hash does not match the hash of the previous event');
    }
    if (computeEventHash(e.prev_hash, e) !== e.hash) chain('hash does not match the event content');
    if (intact && this.#broken === null) {
      this.#verified += 1;
      this.#verifiedHash = e.hash;
    }
    this.#expected = Math.max(this.#expected, e.position + 1);
    this.#prev = e.hash;
    this.#last = { position: e.position, hash: e.hash };

    if (this.#anchor !== null && e.position === this.#anchor.position) {
      this.#anchorSeen = true;
      this.#anchorMatches = e.hash === this.#anchor.hash;
      if (!this.#anchorMatches) {
        this.#report(
          'head_mismatch',
          'events',
          key,
          `event #${e.position} is not the one the given head names: its hash is ${e.hash.slice(0, 16)}…, the head says ${this.#anchor.hash.slice(0, 16)}… (the log was rewritten up to there)`,
          { field: 'hash', expected: this.#anchor.hash, actual: e.hash },
        );
      }
    }

    const seq = this.#streams.get(e.stream) ?? 0;
    if (e.stream_seq !== seq + 1) {
      this.#report(
        'stream_seq_gap',
        'events',
        key,
        `event #${e.position} is number ${e.stream_seq} of stream ${e.stream}, whose previous event is number ${seq}`,
        { field: 'stream_seq', expected: seq + 1, actual: e.stream_seq },
      );
    }
    this.#streams.set(e.stream, Math.max(seq, e.stream_seq));

    if (!this.#rows) return;
    const isItem = e.work_item_id !== null && ITEM_EVENTS.has(e.type);
    const isBatch = e.work_item_id === null && ITEM_TYPE_OF_BATCH[e.type] !== undefined;
    const isLimit = e.type === 'work_limit_set' || e.type === 'work_limit_removed';
    const isRecord = e.work_item_id !== null && RUN_RECORD_TYPES.includes(e.type);
    const isWorld = e.type === WORKFLOW_EVENT;
    if (e.type !== 'state_committed' && !isItem && !isBatch && !isLimit && !isRecord && !isWorld) return;
    if (isWorld && this.#world === null) {
      this.#worldUnchecked = true;
      return;
    }
    let data: unknown;
    try {
      data = JSON.parse(e.data);
    } catch {
      data = undefined;
    }
    if (!isObject(data)) {
      this.#report('event_malformed', 'events', key, `event #${e.position} (${e.type}) has no data object`);
      return;
    }
    if (e.type === 'state_committed') this.#stateCommitted(e, data);
    else if (isWorld) this.#world?.event(e, data);
    else if (isLimit) this.#limitEvent(e, data);
    else if (isRecord) this.#runRecord(e, e.work_item_id as string, data);
    else if (isBatch) {
      // A batch event is, for each item it names, that item's own event at this position.
      const views = expandBatchEvent({ ...e, data });
      if (!Array.isArray(views)) {
        this.#report(
          'event_malformed',
          'events',
          key,
          `event #${e.position} (${e.type}) names no list of distinct work items`,
        );
        return;
      }
      for (const v of views) this.#itemEvent({ ...e, type: v.type, actor: v.actor }, v.work_item_id, v.data);
    } else this.#itemEvent(e, e.work_item_id as string, data);
  }

  #stateCommitted(e: StoredEvent, d: JsonObject): void {
    if (typeof d.kind !== 'string' || typeof d.id !== 'string' || !Number.isSafeInteger(d.version)) {
      this.#report(
        'event_malformed',
        'events',
        `#${e.position}`,
        `event #${e.position} (state_committed) names no document version`,
      );
      return;
    }
    const key = docKey(d.kind, d.id);
    let doc = this.#docs.get(key);
    if (!doc) {
      doc = { versions: new Map(), noops: new Map(), latest: 0 };
      this.#docs.set(key, doc);
    }
    const version = d.version as number;
    if (d.noop === true) {
      const k = noopKey(version, d.parent_version, e.actor, d.actor_kind, d.reason, e.created_at);
      doc.noops.set(k, (doc.noops.get(k) ?? 0) + 1);
      return;
    }
    doc.versions.set(version, {
      content_hash: d.content_hash,
      actor: e.actor,
      actor_kind: d.actor_kind,
      parent_version: d.parent_version,
      write_id: d.write_id ?? null,
      reason: d.reason ?? null,
      created_at: e.created_at,
    });
    doc.latest = Math.max(doc.latest, version);
  }

  /** work_limit_set / work_limit_removed: the key's limit as the log says it is now. */
  #limitEvent(e: StoredEvent, d: JsonObject): void {
    if (typeof d.key !== 'string') {
      this.#report(
        'event_malformed',
        'events',
        `#${e.position}`,
        `event #${e.position} (${e.type}) names no key`,
      );
      return;
    }
    if (e.type === 'work_limit_removed') this.#limits.delete(d.key);
    else this.#limits.set(d.key, { max_in_flight: d.max_in_flight ?? null, rate: d.rate ?? null });
  }

  /** The item an event of it is about, as folded so far; reported missing when no enqueue came before it. */
  #enqueued(e: StoredEvent, id: string): ItemFold | undefined {
    const s = this.#items.get(id);
    if (!s) {
      this.#report(
        'event_missing',
        'work_items',
        id,
        `work item ${id}: ${e.type} at event #${e.position} comes before any work_item_enqueued`,
      );
    }
    return s;
  }

  /** A record of a durable run: its data as recordEvent writes it, by the lease holder of its attempt. */
  #runRecord(e: StoredEvent, id: string, d: JsonObject): void {
    const key = `#${e.position}`;
    const r = readRecord({ ...e, data: d, created_at: new Date(e.created_at).toISOString() });
    if (r === null || r === 'malformed') {
      this.#report(
        'event_malformed',
        'events',
        key,
        `event #${e.position} (${e.type}) is no record of a run`,
      );
      return;
    }
    const s = this.#enqueued(e, id);
    if (!s) return;
    const problem = holderProblem(r, s);
    if (problem !== null) {
      this.#report(
        'record_unfenced',
        'events',
        key,
        `event #${e.position} (${e.type}) of work item ${id} ${problem}`,
      );
    }
  }

  #itemEvent(e: StoredEvent, id: string, d: JsonObject): void {
    const at: FoldedEvent = { type: e.type, position: e.position, item: id, created_at: e.created_at };
    const report = (message: string) => this.#report('event_malformed', 'events', `#${e.position}`, message);
    if (e.type === 'work_item_enqueued') {
      if (this.#items.has(id)) {
        report(`event #${e.position} enqueues work item ${id} a second time`);
        return;
      }
      this.#items.set(id, enqueuedFold(at, d));
      return;
    }
    const s = this.#enqueued(e, id);
    if (!s) return;
    // Every type routed here has a codec (ITEM_EVENTS is made of them; a batch's entries are item types with
    // codecs, which test/core/work-item-codecs.test.ts holds).
    (ITEM_EVENT_CODECS.get(e.type) as ItemEventCodec).fold(s, at, d, report);
  }

  /** The verdict over everything added. */
  finish(): VerifyResult {
    if (this.#anchor !== null && this.#anchor.position > 0 && !this.#anchorSeen) {
      const end = this.#last?.position ?? 0;
      this.#report(
        'head_mismatch',
        'events',
        `#${this.#anchor.position}`,
        `event #${this.#anchor.position}, the given head, is not in the log, which ends at #${end}: events were removed`,
        { field: 'position', expected: this.#anchor.position, actual: end },
      );
    } else if (
      this.#anchorMatches &&
      this.#broken !== null &&
      this.#broken.position <= this.#anchor!.position
    ) {
      // The event at the head is unchanged, but the chain leading to it is not the one it pinned.
      this.#anchorMatches = false;
      this.#report(
        'head_mismatch',
        'events',
        `#${this.#anchor!.position}`,
        `the chain is broken at event #${this.#broken.position}, before the given head #${this.#anchor!.position}: the events up to it are not the ones it pinned`,
        { field: 'position', expected: this.#anchor!.position, actual: this.#broken.position },
      );
    }
    let workflowRuns: number | null = 0;
    if (this.#rows) {
      this.#checkItems();
      this.#checkLimits();
      this.#checkDocuments();
      if (this.#edges !== null) this.#checkEdges(this.#edges);
      if (this.#world) workflowRuns = this.#world.finish();
      else if (this.#worldUnchecked) workflowRuns = null;
    }
    if (this.#hasCounters) this.#checkCounters();
    const anchorOk = this.#anchor === null || this.#anchor.position === 0 || this.#anchorMatches;
    return {
      ok: this.#count === 0,
      events: this.#verified,
      head: this.#verifiedHash,
      ...(this.#broken ? { broken: this.#broken } : {}),
      anchor: this.#verifiedHash === null ? null : `${this.#verified}:${this.#verifiedHash}`,
      problems: this.#problems,
      problem_count: this.#count,
      checked: {
        events: this.#scanned,
        work_items: this.#itemRows.length,
        documents: this.#docRows.length,
        history: this.#historyRows.length,
        counters: this.#hasCounters,
        workflow_runs: workflowRuns,
      },
      ...(this.#anchor
        ? { expected_head: { position: this.#anchor.position, hash: this.#anchor.hash, matches: anchorOk } }
        : {}),
    };
  }

  /** Every limit row against its key's last limit event, and every limit the log sets against a row. */
  #checkLimits(): void {
    const seen = new Set<string>();
    for (const r of this.#limitRows) {
      seen.add(r.key);
      const s = this.#limits.get(r.key);
      if (!s) {
        this.#report('event_missing', 'work_limits', r.key, `limit ${r.key} has no work_limit_set event`);
        continue;
      }
      const rate = r.rate_count === null ? null : { count: r.rate_count, period_ms: r.rate_period_ms };
      this.#differs('work_limits', r.key, 'max_in_flight', s.max_in_flight, r.max_in_flight);
      this.#differs('work_limits', r.key, 'rate', s.rate, rate);
    }
    for (const key of this.#limits.keys()) {
      if (!seen.has(key))
        this.#report('row_missing', 'work_limits', key, `limit ${key} is in the log but has no row`);
    }
  }

  #checkItems(): void {
    const seen = new Set<string>();
    for (const r of this.#itemRows) {
      seen.add(r.id);
      const s = this.#items.get(r.id);
      if (!s) {
        this.#report(
          'event_missing',
          'work_items',
          r.id,
          `work item ${r.id} has no work_item_enqueued event`,
        );
        continue;
      }
      const d = (field: string, expected: Json | undefined, actual: Json | undefined) =>
        this.#differs('work_items', r.id, field, expected, actual);
      for (const f of [
        'title',
        'kind',
        'priority',
        'blocked_by',
        'idempotency_key',
        'status',
        'attempts',
      ] as const)
        d(f, s[f], r[f]);
      if (s.max_attempts !== null) d('max_attempts', s.max_attempts, r.max_attempts);
      if (s.status === 'in_flight' || r.status === 'in_flight')
        d('lease_owner', s.lease_owner, r.lease_owner);
      for (const f of ['error', 'notes'] as const) d(f, s[f], r[f]);
      if (s.result_hash === null) d('result', s.result, r.result);
      else this.#hashDiffers(r.id, 'result', s.result_hash, contentHash(r.result ?? null));
      d('on_blocker_failure', s.on_blocker_failure, r.on_blocker_failure ?? 'wait');
      d('cascaded_from', s.cascaded_from, r.cascaded_from ?? null);
      d('concurrency_key', s.concurrency_key, r.concurrency_key ?? null);
      d('traceparent', s.traceparent, r.traceparent ?? null);
      if (s.payload_hash !== null) this.#hashDiffers(r.id, 'payload', s.payload_hash, r.payload_hash);
      if (s.not_before !== undefined) d('not_before', when(s.not_before), when(r.not_before));
      d('created_at', when(s.created_at), when(r.created_at));
      d('claimed_at', when(s.claimed_at), when(r.claimed_at));
      d('resolved_at', when(s.resolved_at), when(r.resolved_at));
    }
    for (const id of this.#items.keys()) {
      if (!seen.has(id)) {
        this.#report('row_missing', 'work_items', id, `work item ${id} is in the log but has no row`);
      }
    }
  }

  #checkDocuments(): void {
    const history = new Map<string, StoredHistory[]>();
    for (const h of this.#historyRows) {
      const k = docKey(h.kind, h.id);
      const list = history.get(k);
      if (list) list.push(h);
      else history.set(k, [h]);
    }
    const seen = new Set<string>();
    for (const r of this.#docRows) {
      const key = docKey(r.kind, r.id);
      seen.add(key);
      if (r.body_hash !== r.content_hash) {
        this.#report(
          'content_hash_mismatch',
          'documents',
          key,
          `documents ${key}: the body hashes to ${r.body_hash.slice(0, 16)}…, not to its content_hash ${r.content_hash.slice(0, 16)}…`,
          { field: 'body', expected: r.content_hash, actual: r.body_hash },
        );
      }
      const log = this.#docs.get(key);
      const latest = log?.versions.get(log.latest);
      if (!log || !latest) {
        this.#report('event_missing', 'documents', key, `document ${key} has no state_committed event`);
        continue;
      }
      const d = (field: string, expected: Json | undefined, actual: Json | undefined) =>
        this.#differs('documents', key, field, expected, actual);
      d('version', log.latest, r.version);
      d('content_hash', latest.content_hash, r.content_hash);
      d('updated_at', when(latest.created_at), when(r.updated_at));
      const first = log.versions.get(1);
      if (first) d('created_at', when(first.created_at), when(r.created_at));
      this.#checkHistory(key, log, log.latest, history.get(key) ?? []);
    }
    for (const key of this.#docs.keys()) {
      if (!seen.has(key))
        this.#report('row_missing', 'documents', key, `document ${key} is in the log but has no row`);
    }
    for (const key of history.keys()) {
      if (!seen.has(key) && !this.#docs.has(key)) {
        this.#report(
          'event_missing',
          'document_history',
          key,
          `history of ${key} has no document and no event`,
        );
      }
    }
  }

  #checkHistory(key: string, log: DocumentLog, current: number, rows: StoredHistory[]): void {
    const kept = new Set<number>();
    for (const h of rows) {
      const hk = `${key}@${h.seq}`;
      if (h.body_hash !== null && h.body_hash !== h.content_hash) {
        this.#report(
          'content_hash_mismatch',
          'document_history',
          hk,
          `document_history ${hk} (v${h.version}): the body hashes to ${h.body_hash.slice(0, 16)}…, not to its content_hash ${h.content_hash.slice(0, 16)}…`,
          { field: 'body', expected: h.content_hash, actual: h.body_hash },
        );
      }
      const ev = log.versions.get(h.version);
      if (h.noop) {
        const k = noopKey(h.version, h.parent_version, h.actor, h.actor_kind, h.reason, h.created_at);
        const left = log.noops.get(k) ?? 0;
        if (left === 0) {
          this.#report(
            'event_missing',
            'document_history',
            hk,
            `document_history ${hk}: no state_committed no-op event records this no-op at v${h.version} (by ${h.actor}, ${when(h.created_at)})`,
          );
        } else log.noops.set(k, left - 1);
        if (ev) this.#differs('document_history', hk, 'content_hash', ev.content_hash, h.content_hash);
        continue;
      }
      kept.add(h.version);
      if (!ev) {
        this.#report(
          'event_missing',
          'document_history',
          hk,
          `document_history ${hk}: no state_committed event records v${h.version}`,
        );
        continue;
      }
      if (h.body_hash === null) {
        this.#report(
          'row_differs',
          'document_history',
          hk,
          `document_history ${hk} (v${h.version}) has no body`,
          {
            field: 'body',
          },
        );
      }
      const d = (field: string, expected: Json | undefined, actual: Json | undefined) =>
        this.#differs('document_history', hk, field, expected, actual);
      for (const f of [
        'content_hash',
        'actor',
        'actor_kind',
        'parent_version',
        'write_id',
        'reason',
      ] as const)
        d(f, ev[f], h[f]);
      d('created_at', when(ev.created_at), when(h.created_at));
    }
    // Retention removes the oldest versions only: what is kept runs without a gap up to the current one.
    let oldest = current;
    for (const v of kept) if (v < oldest) oldest = v;
    for (let v = oldest; v <= current; v++) {
      if (!kept.has(v)) {
        this.#report(
          'history_gap',
          'document_history',
          `${key}@v${v}`,
          `document_history of ${key} lacks v${v}, though ${v === current ? 'it is the current version' : `v${oldest} is kept`}`,
        );
      }
    }
    for (const h of rows) {
      if (h.noop && h.version < oldest) {
        this.#report(
          'history_gap',
          'document_history',
          `${key}@${h.seq}`,
          `document_history ${key}@${h.seq}: a no-op at v${h.version} is kept, but v${h.version} itself is gone`,
        );
      }
    }
  }

  /**
   * work_item_blockers holds blocked_by read backwards, one row per (blocker, item): what blocked-on-failure
   * and the cascade of a failure follow. A row missing hides an item blocked on a failure (and keeps it
   * from being cancelled with its blocker); a row too many reports one that is not.
   */
  #checkEdges(edges: Array<{ blocker: string; item: string }>): void {
    const key = (blocker: string, item: string) => `${item} <- ${blocker}`;
    const stored = new Set(edges.map((e) => key(e.blocker, e.item)));
    const expected = new Set<string>();
    for (const r of this.#itemRows) {
      for (const b of Array.isArray(r.blocked_by) ? r.blocked_by : []) {
        if (typeof b !== 'string') continue;
        const k = key(b, r.id);
        expected.add(k);
        if (!stored.has(k)) {
          this.#report(
            'row_missing',
            'work_item_blockers',
            k,
            `work item ${r.id} is blocked by ${b}, but work_item_blockers has no row for it`,
          );
        }
      }
    }
    for (const k of stored) {
      if (!expected.has(k)) {
        this.#report(
          'event_missing',
          'work_item_blockers',
          k,
          `work_item_blockers says ${k.replace(' <- ', ' is blocked by ')}, which no item's blocked_by says`,
        );
      }
    }
  }

  #checkCounters(): void {
    const last = this.#last ?? { position: 0, hash: GENESIS_HASH };
    const head = this.#counterHead;
    if (head === null) {
      if (last.position > 0) {
        this.#report(
          'counter_mismatch',
          'event_heads',
          'head',
          `there is no event head row, but the log ends at #${last.position}`,
        );
      }
    } else if (head.position !== last.position || head.hash !== last.hash) {
      this.#report(
        'counter_mismatch',
        'event_heads',
        'head',
        `the event head row says #${head.position} (${head.hash.slice(0, 16)}…), the log ends at #${last.position} (${last.hash.slice(0, 16)}…)`,
        { field: 'position', expected: formatHeadAnchor(last), actual: formatHeadAnchor(head) },
      );
    }
    const counted = new Set<string>();
    for (const c of this.#counterStreams) {
      counted.add(c.stream);
      const seq = this.#streams.get(c.stream) ?? 0;
      if (c.seq !== seq) {
        this.#report(
          'counter_mismatch',
          'event_streams',
          c.stream,
          `the counter of stream ${c.stream} says ${c.seq} events, the log holds ${seq}${c.seq > seq ? ': events were removed' : ''}`,
          { field: 'seq', expected: seq, actual: c.seq },
        );
      }
    }
    for (const [stream, seq] of this.#streams) {
      if (!counted.has(stream)) {
        this.#report(
          'counter_mismatch',
          'event_streams',
          stream,
          `stream ${stream} has ${seq} events but no counter row`,
          {
            field: 'seq',
            expected: seq,
            actual: null,
          },
        );
      }
    }
  }
}

function noopKey(
  version: Json | undefined,
  parent: Json | undefined,
  actor: string | null,
  actorKind: Json | undefined,
  reason: Json | undefined,
  createdAt: number,
): string {
  return JSON.stringify([
    version ?? null,
    parent ?? null,
    actor,
    actorKind ?? null,
    reason ?? null,
    createdAt,
  ]);
}

/**
 * Checks a sequence of records in one pass.
 * @example const r = await checkRecords(backend.dump!({ counters: true })); if (!r.ok) console.log(r.problems);
 */
export async function checkRecords(
  records: AsyncIterable<InstanceRecord> | Iterable<InstanceRecord>,
  options: IntegrityOptions & { onProgress?: (events: number) => void } = {},
): Promise<VerifyResult> {
  const checker = new IntegrityChecker(options);
  let world = false;
  for await (const r of records) {
    if (!world && options.rows !== false && isWorkflowRecord(r)) {
      // Stryker disable next-line BooleanLiteral: a second load returns at once (the check is loaded, or rows are off, or the package is still absent): only more awaits
      world = true;
      await checker.loadWorkflowCheck();
    }
    checker.add(r);
    if (options.onProgress && r.t === 'event' && checker.events % 10_000 === 0)
      options.onProgress(checker.events);
  }
  return checker.finish();
}
