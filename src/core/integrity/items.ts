// Work items against their events, as verify checks them: each work_item event (and each entry of a batch
// event) folded through its codec (codecs/work-items.ts) into what the item's row must hold, each record of a
// durable run checked as written by the lease holder of its attempt (codecs/run-records.ts), each row
// compared with its fold, and the rows of work_item_blockers with the items' blocked_by.
import type { StoredEvent, WorkItemRowDump } from '../backend.js';
import { holderProblem, readRecord } from '../codecs/run-records.js';
import {
  enqueuedFold,
  type FoldedEvent,
  ITEM_EVENT_CODECS,
  type ItemEventCodec,
  type ItemFold,
} from '../codecs/work-items.js';
import { contentHash } from '../json.js';
import type { Json, JsonObject } from '../types.js';
import { expandBatchEvent } from '../work/batches.js';
import { type Problems, when } from './problems.js';

type StoredItem = Omit<WorkItemRowDump, 'payload'> & { payload_hash: string };

/** The work-item event types: the enqueue that makes an item, and every type with a codec. */
export const ITEM_EVENTS = new Set(['work_item_enqueued', ...ITEM_EVENT_CODECS.keys()]);

/** The work items' check: feed it their events in position order and their rows, then `checkItems`. */
export class ItemCheck {
  readonly #p: Problems;
  readonly #items = new Map<string, ItemFold>();
  readonly #itemRows: StoredItem[] = [];
  /** The rows of work_item_blockers, when the records carry them. */
  #edges: Array<{ blocker: string; item: string }> | null = null;

  /** `problems`: where the check reports. */
  constructor(problems: Problems) {
    this.#p = problems;
  }

  /** Work item rows added so far. */
  get rows(): number {
    return this.#itemRows.length;
  }

  /** One work item row (its payload kept as its hash). */
  row(row: WorkItemRowDump): void {
    const { payload, ...rest } = row;
    this.#itemRows.push({ ...rest, payload_hash: contentHash(payload) });
  }

  /** The rows of work_item_blockers. */
  edgeRows(edges: Array<{ blocker: string; item: string }>): void {
    this.#edges = edges;
  }

  /** A work item's value (payload, result) that hashes to `actual` where the log recorded `expected`. */
  #hashDiffers(key: string, field: string, expected: string, actual: string): void {
    if (expected === actual) return;
    this.#p.report(
      'row_differs',
      'work_items',
      key,
      `work_items ${key}: ${field} hashes to ${actual.slice(0, 16)}…, the log says ${expected.slice(0, 16)}…`,
      { field, expected, actual },
    );
  }

  /** A batch event of work items (`data` its parsed data), in position order. */
  batch(e: StoredEvent, data: JsonObject): void {
    const key = `#${e.position}`;
    // A batch event is, for each item it names, that item's own event at this position.
    const views = expandBatchEvent({ ...e, data });
    if (!Array.isArray(views)) {
      this.#p.report(
        'event_malformed',
        'events',
        key,
        `event #${e.position} (${e.type}) names no list of distinct work items`,
      );
      return;
    }
    for (const v of views) this.event({ ...e, type: v.type, actor: v.actor }, v.work_item_id, v.data);
  }

  /** The item an event of it is about, as folded so far; reported missing when no enqueue came before it. */
  #enqueued(e: StoredEvent, id: string): ItemFold | undefined {
    const s = this.#items.get(id);
    if (!s) {
      this.#p.report(
        'event_missing',
        'work_items',
        id,
        `work item ${id}: ${e.type} at event #${e.position} comes before any work_item_enqueued`,
      );
    }
    return s;
  }

  /** A record of a durable run: its data as recordEvent writes it, by the lease holder of its attempt. */
  record(e: StoredEvent, id: string, d: JsonObject): void {
    const key = `#${e.position}`;
    const r = readRecord({ ...e, data: d, created_at: new Date(e.created_at).toISOString() });
    if (r === null || r === 'malformed') {
      this.#p.report(
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
      this.#p.report(
        'record_unfenced',
        'events',
        key,
        `event #${e.position} (${e.type}) of work item ${id} ${problem}`,
      );
    }
  }

  /** One event of work item `id` (`d` its parsed data), in position order, folded through its codec. */
  event(e: StoredEvent, id: string, d: JsonObject): void {
    const at: FoldedEvent = { type: e.type, position: e.position, item: id, created_at: e.created_at };
    const report = (message: string) =>
      this.#p.report('event_malformed', 'events', `#${e.position}`, message);
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

  /** Every item row against its fold, and every item the log enqueues against a row. */
  checkItems(): void {
    const seen = new Set<string>();
    for (const r of this.#itemRows) {
      seen.add(r.id);
      const s = this.#items.get(r.id);
      if (!s) {
        this.#p.report(
          'event_missing',
          'work_items',
          r.id,
          `work item ${r.id} has no work_item_enqueued event`,
        );
        continue;
      }
      const d = (field: string, expected: Json | undefined, actual: Json | undefined) =>
        this.#p.differs('work_items', r.id, field, expected, actual);
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
        this.#p.report('row_missing', 'work_items', id, `work item ${id} is in the log but has no row`);
      }
    }
  }

  /** The rows of work_item_blockers against the items' blocked_by, when the records carry them. */
  checkEdges(): void {
    if (this.#edges !== null) this.#checkEdges(this.#edges);
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
          this.#p.report(
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
        this.#p.report(
          'event_missing',
          'work_item_blockers',
          k,
          `work_item_blockers says ${k.replace(' <- ', ' is blocked by ')}, which no item's blocked_by says`,
        );
      }
    }
  }
}
