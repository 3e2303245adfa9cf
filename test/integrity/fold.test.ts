// What verify's fold of the log reads, event by event, on SQLite and PostgreSQL: an instance with every kind of
// event the fold reads (documents with a no-op, limits, work items through every transition, durable runs
// with steps, a sleep, a wait and a signal, a reset, batch events) verifies clean; then a forger with write
// access rewrites one thing in the log — one field of one event, an event dropped, repeated or appended —
// and recomputes every hash after it, as anyone who can write the storage can. Each forgery gets exactly
// the problems it must: the chain names the missing or repeated position, a head kept elsewhere names the
// rewritten event, a stream's numbering names its gap, malformed data is reported as such (and folds
// nothing), and a field the fold takes from an event shows as that item's row differing in that field.
import { describe, expect, it } from 'vitest';
import type { DumpRecord, StoredEvent } from '../../src/core/backend.js';
import { checkRecords, IntegrityChecker } from '../../src/core/integrity/verify.js';
import type { IntegrityProblem, JsonObject } from '../../src/core/types.js';
import { createWorldStorage } from '../../src/workflow-world/storage.js';
import { backendsForThisFile } from '../helpers/backends.js';
import {
  appendEvent,
  eventOf,
  eventsOf,
  forgeData,
  itemRow,
  type RichIds,
  rechain,
  recordsOf,
  richInstance,
} from '../helpers/integrity-b.js';

const backends = await backendsForThisFile();

/** event_malformed at `e`. */
const malformed = (e: StoredEvent, message: string): IntegrityProblem => ({
  problem: 'event_malformed',
  table: 'events',
  key: `#${e.position}`,
  message,
});

/** row_differs of work item `id` in `field`. */
const differs = (id: string, field: string, expected: unknown, actual: unknown) => ({
  problem: 'row_differs',
  table: 'work_items',
  key: id,
  field,
  expected,
  actual,
  message: `work_items ${id}: ${field} is ${JSON.stringify(actual)}, the log says ${JSON.stringify(expected)}`,
});

/** The batch entry of item `id` in a batch event's data. */
const entryOf = (d: JsonObject, id: string): JsonObject =>
  (d.items as JsonObject[]).find((x) => x.id === id) as JsonObject;

describe.each(backends)('$name: the fold of the log', (b) => {
  // One honest instance per backend; each test forges a fresh copy of its records.
  let base: DumpRecord[] = [];
  let ids: RichIds;
  const fresh = async (): Promise<DumpRecord[]> => {
    if (base.length === 0) {
      const made = await richInstance(b);
      ids = made.ids;
      base = await recordsOf(made.inst);
      await made.inst.close();
    }
    return structuredClone(base);
  };

  it('an instance with every kind of event verifies clean, counting what it checked', async () => {
    const rs = await fresh();
    const events = eventsOf(rs);
    expect(new Set(events.map((e) => e.type))).toEqual(
      new Set([
        'state_committed',
        'work_limit_set',
        'work_limit_removed',
        'work_item_enqueued',
        'work_item_claimed',
        'work_item_annotated',
        'work_step_completed',
        'work_step_failed',
        'work_step_slept',
        'work_step_waiting',
        'work_step_waited',
        'work_step_reset',
        'work_item_resolved',
        'work_item_reclaimed',
        'work_items_reclaimed',
        'work_item_retried',
        'work_item_reopened',
        'work_item_cancelled',
        'work_item_parked',
        'work_item_unparked',
        'work_item_released',
        'work_item_signaled',
        'work_items_enqueued',
        'work_items_claimed',
        'work_items_resolved',
        'work_item_replayed',
      ]),
    );
    const r = await checkRecords(rs);
    expect(r.problems).toEqual([]);
    expect(r).toMatchObject({
      ok: true,
      events: events.length,
      head: events.at(-1)!.hash,
      checked: { events: events.length, work_items: 16, documents: 1, history: 3, workflow_runs: 0 },
    });
    const checker = new IntegrityChecker();
    for (const e of rs) checker.add(e);
    expect(checker.events).toBe(events.length);
  });

  describe('the chain', () => {
    it('an event removed (the rest re-chained) is named by the position missing', async () => {
      const rs = await fresh();
      const gone = eventOf(rs, 'work_item_replayed', ids.held);
      rs.splice(
        rs.findIndex((r) => r.t === 'event' && r.row === gone),
        1,
      );
      rechain(rs);
      const next = gone.position + 1;
      const r = await checkRecords(rs);
      expect(r.problems).toEqual([
        {
          problem: 'chain_broken',
          table: 'events',
          key: `#${next}`,
          message: `the event chain is broken at event #${next}: position ${gone.position} is missing (next is ${next})`,
        },
      ]);
      expect(r.broken).toEqual({
        position: next,
        reason: `position ${gone.position} is missing (next is ${next})`,
      });
      expect(r.events).toBe(gone.position - 1);
      expect(r.checked.events).toBe(eventsOf(rs).length);
    });

    it('an event repeated at the end is named as coming again, and its stream number as a gap', async () => {
      const rs = await fresh();
      const last = eventsOf(rs).at(-1)!;
      rs.push({ t: 'event', row: { ...last } });
      const r = await checkRecords(rs);
      expect(r.problems).toEqual([
        {
          problem: 'chain_broken',
          table: 'events',
          key: `#${last.position}`,
          message: `the event chain is broken at event #${last.position}: position ${last.position} comes again after ${last.position}`,
        },
        {
          problem: 'stream_seq_gap',
          table: 'events',
          key: `#${last.position}`,
          field: 'stream_seq',
          expected: last.stream_seq + 1,
          actual: last.stream_seq,
          message: `event #${last.position} is number ${last.stream_seq} of stream ${last.stream}, whose previous event is number ${last.stream_seq}`,
        },
      ]);
      expect(r.events).toBe(last.position);
    });

    it('a head kept elsewhere names the event rewritten up to it, with both hashes', async () => {
      const rs = await fresh();
      const at = eventOf(rs, 'work_limit_removed', null);
      const kept = 'ab'.repeat(32);
      const r = await checkRecords(rs, { head: { position: at.position, hash: kept } });
      expect(r.problems).toEqual([
        {
          problem: 'head_mismatch',
          table: 'events',
          key: `#${at.position}`,
          field: 'hash',
          expected: kept,
          actual: at.hash,
          message: `event #${at.position} is not the one the given head names: its hash is ${at.hash.slice(0, 16)}…, the head says ${kept.slice(0, 16)}… (the log was rewritten up to there)`,
        },
      ]);
      expect(r.expected_head).toEqual({ position: at.position, hash: kept, matches: false });
    });

    it("an event renumbered in its stream is a gap in the stream's numbering", async () => {
      const rs = await fresh();
      const e = eventOf(rs, 'work_limit_removed', null);
      e.stream_seq = 5;
      rechain(rs);
      expect((await checkRecords(rs)).problems).toEqual([
        {
          problem: 'stream_seq_gap',
          table: 'events',
          key: `#${e.position}`,
          field: 'stream_seq',
          expected: 2,
          actual: 5,
          message: `event #${e.position} is number 5 of stream work_limit:gone+é, whose previous event is number 1`,
        },
      ]);
    });
  });

  describe('which events are folded', () => {
    it('without the rows, the data of events is not read: malformed data is no problem', async () => {
      const rs = await fresh();
      eventOf(rs, 'work_item_replayed', ids.held).data = 'not json';
      rechain(rs);
      const r = await checkRecords(rs, { rows: false });
      expect(r.problems).toEqual([]);
      expect(r.ok).toBe(true);
      // With them, it is.
      const e = eventOf(rs, 'work_item_replayed', ids.held);
      expect((await checkRecords(rs)).problems).toEqual([
        malformed(e, `event #${e.position} (work_item_replayed) has no data object`),
      ]);
    });

    it('data that is JSON but no object is malformed, and folds nothing', async () => {
      const rs = await fresh();
      const e = eventOf(rs, 'work_item_replayed', ids.sleeper);
      for (const text of ['null', '[1]', '"x"']) {
        e.data = text;
        rechain(rs);
        expect((await checkRecords(rs)).problems).toEqual([
          malformed(e, `event #${e.position} (work_item_replayed) has no data object`),
        ]);
      }
    });

    it('an item event naming no item is about none: appended, it changes nothing', async () => {
      const rs = await fresh();
      appendEvent(rs, { type: 'work_item_claimed', work_item_id: null, data: { worker: 'x', attempt: 1 } });
      appendEvent(rs, { type: 'work_item_replayed', work_item_id: null, data: { status: 'pending' } });
      appendEvent(rs, {
        type: 'work_step_completed',
        work_item_id: null,
        data: {
          seq: 9,
          name: 'n',
          occurrence: 1,
          attempt: 3,
          worker: 'w|1',
          result: 1,
          started_at: '2026-03-01T00:00:00.000Z',
          duration_ms: 0,
          tries: 1,
        },
      });
      const r = await checkRecords(rs);
      expect(r.problems).toEqual([]);
      expect(r.checked.events).toBe(eventsOf(rs).length);
    });

    it('a batch event that names an item of its own is no batch: appended, it changes nothing', async () => {
      const rs = await fresh();
      appendEvent(rs, {
        type: 'work_items_claimed',
        work_item_id: ids.done,
        stream: 'work_items',
        data: { items: [{ id: ids.done, worker: 'x', attempt: 9 }] },
      });
      expect((await checkRecords(rs)).problems).toEqual([]);
    });

    it('a batch event without a list of distinct items is malformed, and folds nothing', async () => {
      const rs = await fresh();
      const batches = [
        { items: [] },
        { items: 'x' },
        {
          items: [
            { id: ids.backoff, status: 'done' },
            { id: ids.backoff, status: 'done' },
          ],
        },
      ].map((data) =>
        appendEvent(rs, { type: 'work_items_resolved', work_item_id: null, stream: 'work_items', data }),
      );
      expect((await checkRecords(rs)).problems).toEqual(
        batches.map((e) =>
          malformed(e, `event #${e.position} (work_items_resolved) names no list of distinct work items`),
        ),
      );
    });

    it('events of a Workflow World with no check loaded leave the World unchecked, not passed', async () => {
      const rs = await fresh();
      appendEvent(rs, {
        type: 'workflow_event',
        work_item_id: null,
        stream: 'workflow_run:wrun_x',
        data: { eventType: 'run_started' },
      });
      // Fed to a checker directly (checkRecords would load the World's check): its events alone.
      const checker = new IntegrityChecker();
      for (const r of rs) checker.add(r);
      const r = checker.finish();
      expect(r.problems).toEqual([]);
      expect(r.checked.workflow_runs).toBeNull();
    });
  });

  describe('documents and limits', () => {
    it('a state_committed naming no kind, no id or no whole version is malformed, and makes no document', async () => {
      const rs = await fresh();
      const good = {
        kind: 'json',
        id: 'other',
        version: 1,
        parent_version: 0,
        content_hash: 'ab'.repeat(32),
      };
      const forged = [{ kind: 5 }, { id: null }, { version: 1.5 }, { version: '1' }].map((bad) =>
        appendEvent(rs, {
          type: 'state_committed',
          work_item_id: null,
          stream: 'doc:json/other',
          data: { ...good, ...bad },
        }),
      );
      expect((await checkRecords(rs)).problems).toEqual(
        forged.map((e) => malformed(e, `event #${e.position} (state_committed) names no document version`)),
      );
    });

    it('one no-op event accounts for one no-op history entry, not two', async () => {
      const rs = await fresh();
      const noop = rs.find((r) => r.t === 'history' && r.row.noop);
      if (noop?.t !== 'history') throw new Error('no no-op entry');
      const twin = structuredClone(noop);
      twin.row.seq = noop.row.seq + 10;
      rs.push(twin);
      const r = await checkRecords(rs);
      expect(r.problems).toEqual([
        {
          problem: 'event_missing',
          table: 'document_history',
          key: `json/plan|ü+1@${twin.row.seq}`,
          message: `document_history json/plan|ü+1@${twin.row.seq}: no state_committed no-op event records this no-op at v2 (by ${twin.row.actor}, ${new Date(twin.row.created_at).toISOString()})`,
        },
      ]);
    });

    it('a limit event naming no key is malformed, and sets no limit', async () => {
      const rs = await fresh();
      const e = appendEvent(rs, {
        type: 'work_limit_set',
        work_item_id: null,
        stream: 'work_limit:5',
        data: { key: 5, max_in_flight: 1, rate: null },
      });
      expect((await checkRecords(rs)).problems).toEqual([
        malformed(e, `event #${e.position} (work_limit_set) names no key`),
      ]);
    });
  });

  describe('records of durable runs', () => {
    const record = (over: JsonObject = {}): JsonObject => ({
      seq: 9,
      name: 'extra',
      occurrence: 1,
      attempt: 3,
      worker: 'w|1',
      result: { é: 1 },
      started_at: '2026-03-01T00:00:00.000Z',
      duration_ms: 0,
      tries: 1,
      actor_kind: 'system',
      ...over,
    });

    it('a record of a run by the holder of its attempt is sound; malformed data is no record', async () => {
      const rs = await fresh();
      appendEvent(rs, {
        type: 'work_step_completed',
        work_item_id: ids.sleeper,
        actor: 'w|1',
        data: record(),
      });
      expect((await checkRecords(rs)).problems).toEqual([]);
      const bad = appendEvent(rs, {
        type: 'work_step_completed',
        work_item_id: ids.sleeper,
        data: record({ seq: 0 }),
      });
      expect((await checkRecords(rs)).problems).toEqual([
        malformed(bad, `event #${bad.position} (work_step_completed) is no record of a run`),
      ]);
    });

    it('a record of an item that is not in flight, or of an item never enqueued, is reported', async () => {
      const rs = await fresh();
      const unfenced = appendEvent(rs, {
        type: 'work_step_completed',
        work_item_id: ids.done,
        data: record({ attempt: 1 }),
      });
      const orphan = appendEvent(rs, {
        type: 'work_step_completed',
        work_item_id: 'wi_nobody|é',
        data: record(),
      });
      expect((await checkRecords(rs)).problems).toEqual([
        {
          problem: 'record_unfenced',
          table: 'events',
          key: `#${unfenced.position}`,
          message: `event #${unfenced.position} (work_step_completed) of work item ${ids.done} records a step of an item that was done, not in flight`,
        },
        {
          problem: 'event_missing',
          table: 'work_items',
          key: 'wi_nobody|é',
          message: `work item wi_nobody|é: work_step_completed at event #${orphan.position} comes before any work_item_enqueued`,
        },
      ]);
    });
  });

  describe('the work-item state machine', () => {
    it('an event of an item never enqueued is reported and folds nothing', async () => {
      const rs = await fresh();
      const e = appendEvent(rs, {
        type: 'work_item_claimed',
        work_item_id: 'wi_nobody|é',
        data: { worker: 'x', attempt: 1 },
      });
      expect((await checkRecords(rs)).problems).toEqual([
        {
          problem: 'event_missing',
          table: 'work_items',
          key: 'wi_nobody|é',
          message: `work item wi_nobody|é: work_item_claimed at event #${e.position} comes before any work_item_enqueued`,
        },
      ]);
    });

    it('a second enqueue of an item is malformed; the first is what the row is checked against', async () => {
      const rs = await fresh();
      const e = appendEvent(rs, {
        type: 'work_item_enqueued',
        work_item_id: ids.done,
        data: { title: 'other', priority: 0 },
      });
      expect((await checkRecords(rs)).problems).toEqual([
        malformed(e, `event #${e.position} enqueues work item ${ids.done} a second time`),
      ]);
    });

    it('max_attempts is checked only when the enqueue recorded it beside payload_hash', async () => {
      // Recorded without max_attempts: unchecked.
      let rs = await fresh();
      forgeData(rs, eventOf(rs, 'work_item_enqueued', ids.done), (d) => {
        delete d.max_attempts;
      });
      itemRow(rs, ids.done).max_attempts = 9;
      expect((await checkRecords(rs)).problems).toEqual([]);
      // Without payload_hash (an older event): unchecked even when the event names one.
      rs = await fresh();
      forgeData(rs, eventOf(rs, 'work_item_enqueued', ids.done), (d) => {
        delete d.payload_hash;
      });
      itemRow(rs, ids.done).max_attempts = 9;
      expect((await checkRecords(rs)).problems).toEqual([]);
    });

    it("a claim's attempt is the item's attempts; an older claim without one counts one more", async () => {
      let rs = await fresh();
      forgeData(rs, eventOf(rs, 'work_item_claimed', ids.backoff), (d) => {
        d.attempt = 7;
      });
      expect((await checkRecords(rs)).problems).toEqual([differs(ids.backoff, 'attempts', 7, 1)]);
      rs = await fresh();
      forgeData(rs, eventOf(rs, 'work_item_claimed', ids.backoff), (d) => {
        delete d.attempt;
      });
      expect((await checkRecords(rs)).problems).toEqual([]);
    });

    it("a reclaim's status and attempt are the item's; a status it does not name is malformed", async () => {
      const reclaimed = () => eventOf(rs, 'work_items_reclaimed', ids.expired);
      let rs = await fresh();
      forgeData(rs, reclaimed(), (d) => {
        entryOf(d, ids.expired).attempt = 5;
      });
      expect((await checkRecords(rs)).problems).toEqual([differs(ids.expired, 'attempts', 5, 1)]);
      rs = await fresh();
      forgeData(rs, reclaimed(), (d) => {
        delete entryOf(d, ids.expired).attempt;
      });
      expect((await checkRecords(rs)).problems).toEqual([]);
      rs = await fresh();
      forgeData(rs, reclaimed(), (d) => {
        entryOf(d, ids.expired).status = 'gone';
      });
      const e = reclaimed();
      expect((await checkRecords(rs)).problems).toEqual([
        malformed(e, `event #${e.position} (work_item_reclaimed) names no status`),
        differs(ids.expired, 'status', 'in_flight', 'pending'),
        differs(ids.expired, 'lease_owner', 'w|2', null),
      ]);
    });

    it('notes that are no object are malformed, and merge nothing', async () => {
      const rs = await fresh();
      const e = eventOf(rs, 'work_item_annotated', ids.done, 1);
      forgeData(rs, e, (d) => {
        d.notes = 'x';
      });
      expect((await checkRecords(rs)).problems).toEqual([
        malformed(e, `event #${e.position} (work_item_annotated) has no notes`),
        differs(ids.done, 'notes', { step: 1, tmp: 'x' }, { step: 1, nested: { a: 1 } }),
      ]);
    });

    it('a park is folded: an item left parked waits for a human', async () => {
      const rs = await fresh();
      itemRow(rs, ids.asking).status = 'pending';
      expect((await checkRecords(rs)).problems).toEqual([
        differs(ids.asking, 'status', 'waiting_human', 'pending'),
      ]);
    });

    it('a status change to a status it does not name is malformed, and changes nothing', async () => {
      const rs = await fresh();
      const e = eventOf(rs, 'work_item_cancelled', ids.cancelled);
      forgeData(rs, e, (d) => {
        d.status = 'gone';
      });
      const row = itemRow(rs, ids.cancelled);
      expect((await checkRecords(rs)).problems).toEqual([
        malformed(e, `event #${e.position} (work_item_cancelled) names no status`),
        differs(ids.cancelled, 'status', 'pending', 'cancelled'),
        differs(ids.cancelled, 'error', null, 'not needed'),
        differs(ids.cancelled, 'resolved_at', null, new Date(row.resolved_at!).toISOString()),
      ]);
    });

    it('retry_at holds back only an attempt sent back to pending by its resolve', async () => {
      // On a resolve that ends the item, or an unpark: nothing.
      const rs = await fresh();
      forgeData(rs, eventOf(rs, 'work_item_resolved', ids.done), (d) => {
        d.retry_at = '2027-01-01T00:00:00.000Z';
      });
      forgeData(rs, eventOf(rs, 'work_item_unparked', ids.parked), (d) => {
        d.retry_at = '2027-01-01T00:00:00.000Z';
      });
      expect((await checkRecords(rs)).problems).toEqual([]);
      // A resolve back to pending: the row's not_before is the retry_at, and without one it is unchanged.
      const back = await fresh();
      forgeData(back, eventOf(back, 'work_item_resolved', ids.backoff), (d) => {
        delete d.retry_at;
      });
      const row = itemRow(back, ids.backoff);
      expect((await checkRecords(back)).problems).toEqual([
        differs(ids.backoff, 'not_before', null, new Date(row.not_before!).toISOString()),
      ]);
    });

    it('only a cancel records the blocker that cascaded it', async () => {
      const rs = await fresh();
      forgeData(rs, eventOf(rs, 'work_item_resolved', ids.done), (d) => {
        d.blocker = ids.blocker;
      });
      forgeData(rs, eventOf(rs, 'work_item_parked', ids.asking), (d) => {
        d.blocker = ids.blocker;
      });
      expect((await checkRecords(rs)).problems).toEqual([]);
      const cascade = await fresh();
      itemRow(cascade, ids.dependant).cascaded_from = ids.blocker;
      expect((await checkRecords(cascade)).problems).toEqual([
        differs(ids.dependant, 'cascaded_from', null, ids.blocker),
      ]);
    });

    it('a retry to a status it does not name is malformed; one of an item not failed or cancelled too', async () => {
      let rs = await fresh();
      const retried = () => eventOf(rs, 'work_item_retried', ids.retried);
      forgeData(rs, retried(), (d) => {
        d.status = 'gone';
      });
      expect((await checkRecords(rs)).problems).toEqual([
        malformed(retried(), `event #${retried().position} (work_item_retried) names no status`),
        differs(ids.retried, 'status', 'failed', 'pending'),
        differs(ids.retried, 'max_attempts', 1, 2),
        differs(ids.retried, 'error', 'boom', null),
        differs(ids.retried, 'resolved_at', new Date(retried().created_at - 1000).toISOString(), null),
      ]);
      rs = await fresh();
      forgeData(rs, eventOf(rs, 'work_item_resolved', ids.retried), (d) => {
        d.status = 'done';
      });
      expect((await checkRecords(rs)).problems).toEqual([
        malformed(
          retried(),
          `event #${retried().position} (work_item_retried) re-opens work item ${ids.retried}, which was done, not failed or cancelled`,
        ),
      ]);
    });

    it('only a retry sets max_attempts, and only where the enqueue recorded it', async () => {
      const rs = await fresh();
      forgeData(rs, eventOf(rs, 'work_item_reopened', ids.dependant), (d) => {
        d.max_attempts = 9;
      });
      expect((await checkRecords(rs)).problems).toEqual([]);
      const old = await fresh();
      forgeData(old, eventOf(old, 'work_item_enqueued', ids.retried), (d) => {
        delete d.payload_hash;
      });
      itemRow(old, ids.retried).max_attempts = 5;
      expect((await checkRecords(old)).problems).toEqual([]);
    });

    it('a signal to an item that has ended is malformed', async () => {
      const rs = await fresh();
      const e = appendEvent(rs, {
        type: 'work_item_signaled',
        work_item_id: ids.done,
        data: { name: 'approved', payload: null, actor_kind: 'system' },
      });
      expect((await checkRecords(rs)).problems).toEqual([
        malformed(
          e,
          `event #${e.position} (work_item_signaled) signals work item ${ids.done}, which was done`,
        ),
      ]);
    });
  });
});

describe.each(backends)('$name: the events of a Workflow World', (b) => {
  it('are folded by the World check once it is loaded, and by nothing else', async () => {
    let now = Date.UTC(2026, 0, 15, 12);
    const inst = await b.open(undefined, { clock: () => now });
    const s = createWorldStorage(inst);
    // wrun_ and a ULID of the clock's time.
    const crockford = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
    let time = '';
    for (let t = now, i = 0; i < 10; i++, t = Math.floor(t / 32)) time = crockford[t % 32]! + time;
    const run = `wrun_${time}A000000000000001`;
    const ev = async (req: Record<string, unknown>) => {
      now += 10;
      return s.events.create(run, req as never);
    };
    await ev({
      eventType: 'run_created',
      eventData: { deploymentId: 'dpl|1', workflowName: 'workflow//ƒ|1', input: new Uint8Array([1]) },
    });
    await ev({ eventType: 'run_started' });
    await ev({
      eventType: 'step_created',
      correlationId: 'step_ü|1',
      eventData: { stepName: 'step//add', input: new Uint8Array([2]) },
    });
    await ev({ eventType: 'step_started', correlationId: 'step_ü|1' });
    await ev({
      eventType: 'step_completed',
      correlationId: 'step_ü|1',
      eventData: { result: new Uint8Array([3]) },
    });
    await ev({ eventType: 'run_completed', eventData: { output: new Uint8Array([4]) } });
    const rs = await recordsOf(inst);
    await inst.close();
    const r = await checkRecords(rs);
    expect(r.problems).toEqual([]);
    expect(r.checked.workflow_runs).toBe(1);
  });
});
