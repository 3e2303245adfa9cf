// verify's row checks, one row field at a time: a rich, honest instance on every backend is dumped once, and
// each test changes one thing in a copy of its records and asserts that checkRecords reports exactly that
// (kind, table, key, field, expected, actual and the message an operator reads). Limits against
// work_limit_set/removed, work items against their fold, documents and their kept history against
// state_committed (retention removes the oldest versions only), blocker edges against blocked_by, and
// PostgreSQL's head and stream counters against the log.
import { beforeAll, describe, expect, it } from 'vitest';
import type { HistoryRowDump } from '../../src/core/backend.js';
import { GENESIS_HASH } from '../../src/core/hash.js';
import { checkRecords } from '../../src/core/integrity/verify.js';
import { contentHash } from '../../src/core/json.js';
import type { IntegrityProblem } from '../../src/core/types.js';
import { backendsForThisFile } from '../helpers/backends.js';
import { rechain } from '../helpers/forge.js';
import { NAMES, type Rec, type Rich, richRecords } from '../helpers/integrity-c.js';

const backends = await backendsForThisFile();

type RowOf<T extends Rec['t']> = Extract<Rec, { t: T }>['row'];

/** The row of the first record of type `t` that `pick` accepts. */
function rowOf<T extends Rec['t']>(rs: Rec[], t: T, pick: (row: RowOf<T>) => boolean = () => true): RowOf<T> {
  const r = rs.find((x) => x.t === t && pick(x.row as RowOf<T>));
  if (!r) throw new Error(`no ${t} record`);
  return r.row as RowOf<T>;
}

/** Removes the records of type `t` that `pick` accepts (at least one). */
function drop<T extends Rec['t']>(rs: Rec[], t: T, pick: (row: RowOf<T>) => boolean): void {
  const before = rs.length;
  for (let i = rs.length - 1; i >= 0; i--) {
    const r = rs[i]!;
    if (r.t === t && pick(r.row as RowOf<T>)) rs.splice(i, 1);
  }
  if (rs.length === before) throw new Error(`no ${t} record to drop`);
}

const problemsOf = async (rs: Rec[]): Promise<IntegrityProblem[]> => (await checkRecords(rs)).problems;
const iso = (ms: number) => new Date(ms).toISOString();
const short = (hash: string) => `${hash.slice(0, 16)}…`;
const doc = (id: string) => `json/${id}`;

for (const b of backends) {
  describe(`row checks on ${b.name}`, () => {
    let rich: Rich;
    beforeAll(async () => {
      const inst = await b.open();
      try {
        rich = await richRecords(inst);
      } finally {
        await inst.close();
      }
    });
    /** A deep copy of the honest records, for one test to change. */
    const fresh = (): Rec[] => structuredClone(rich.records);
    const item = (rs: Rec[], id: string) => rowOf(rs, 'work_item', (r) => r.id === id);
    const history = (rs: Rec[], id: string, seq: number) =>
      rowOf(rs, 'history', (r) => r.id === id && r.seq === seq) as HistoryRowDump;

    it('the honest records have no problem, retention and a removed limit included', async () => {
      const r = await checkRecords(fresh());
      expect(r.problems).toEqual([]);
      expect(r).toMatchObject({ ok: true, checked: { work_items: 8, documents: 3, history: 8 } });
      expect(r.checked.counters).toBe(b.name !== 'sqlite');
    });

    describe('limits', () => {
      it('a limit row the log does not set (its limit was removed) has no work_limit_set event', async () => {
        const rs = fresh();
        const kept = rowOf(rs, 'limit', (r) => r.key === NAMES.limitNoRate);
        rs.push({ t: 'limit', row: { ...kept, key: NAMES.limitRemoved } });
        expect(await problemsOf(rs)).toEqual([
          {
            problem: 'event_missing',
            table: 'work_limits',
            key: NAMES.limitRemoved,
            message: `limit ${NAMES.limitRemoved} has no work_limit_set event`,
          },
        ]);
      });

      it('a rate other than the last work_limit_set says is reported by field, key and value', async () => {
        const rs = fresh();
        rowOf(rs, 'limit', (r) => r.key === NAMES.limitKept).rate_count = 31;
        expect(await problemsOf(rs)).toEqual([
          {
            problem: 'row_differs',
            table: 'work_limits',
            key: NAMES.limitKept,
            field: 'rate',
            expected: { count: 30, period_ms: 1000 },
            actual: { count: 31, period_ms: 1000 },
            message: `work_limits ${NAMES.limitKept}: rate is {"count":31,"period_ms":1000}, the log says {"count":30,"period_ms":1000}`,
          },
        ]);
        // A row without a rate where the log set one, and a cap changed.
        const other = fresh();
        Object.assign(
          rowOf(other, 'limit', (r) => r.key === NAMES.limitKept),
          {
            rate_count: null,
            rate_period_ms: null,
          },
        );
        rowOf(other, 'limit', (r) => r.key === NAMES.limitNoRate).max_in_flight = 6;
        expect((await problemsOf(other)).map((p) => [p.table, p.key, p.field, p.expected, p.actual])).toEqual(
          [
            ['work_limits', NAMES.limitNoRate, 'max_in_flight', 5, 6],
            ['work_limits', NAMES.limitKept, 'rate', { count: 30, period_ms: 1000 }, null],
          ],
        );
      });

      it('a limit the log sets with no row is reported missing', async () => {
        const rs = fresh();
        drop(rs, 'limit', (r) => r.key === NAMES.limitNoRate);
        expect(await problemsOf(rs)).toEqual([
          {
            problem: 'row_missing',
            table: 'work_limits',
            key: NAMES.limitNoRate,
            message: `limit ${NAMES.limitNoRate} is in the log but has no row`,
          },
        ]);
      });
    });

    describe('work items', () => {
      it('an item row with no events, and an item of the log with no row', async () => {
        const rs = fresh();
        const stray = 'wi_stray|+é';
        rs.push({ t: 'work_item', row: { ...item(rs, rich.ids.plain), id: stray } });
        expect(await problemsOf(rs)).toEqual([
          {
            problem: 'event_missing',
            table: 'work_items',
            key: stray,
            message: `work item ${stray} has no work_item_enqueued event`,
          },
        ]);
        const gone = fresh();
        drop(gone, 'work_item', (r) => r.id === rich.ids.plain);
        expect(await problemsOf(gone)).toEqual([
          {
            problem: 'row_missing',
            table: 'work_items',
            key: rich.ids.plain,
            message: `work item ${rich.ids.plain} is in the log but has no row`,
          },
        ]);
      });

      it('the lease owner of an item in flight is checked', async () => {
        const rs = fresh();
        item(rs, rich.ids.leased).lease_owner = 'thief|ü';
        expect(await problemsOf(rs)).toEqual([
          {
            problem: 'row_differs',
            table: 'work_items',
            key: rich.ids.leased,
            field: 'lease_owner',
            expected: NAMES.worker,
            actual: 'thief|ü',
            message: `work_items ${rich.ids.leased}: lease_owner is "thief|ü", the log says "${NAMES.worker}"`,
          },
        ]);
      });

      it('a row put back to pending while the log says in flight loses its owner: both reported', async () => {
        const rs = fresh();
        Object.assign(item(rs, rich.ids.leased), { status: 'pending', lease_owner: null });
        expect((await problemsOf(rs)).map((p) => [p.key, p.field, p.expected, p.actual])).toEqual([
          [rich.ids.leased, 'status', 'in_flight', 'pending'],
          [rich.ids.leased, 'lease_owner', NAMES.worker, null],
        ]);
      });

      it('a row in flight that the log leaves pending names an owner no claim gave: both reported', async () => {
        const rs = fresh();
        Object.assign(item(rs, rich.ids.plain), { status: 'in_flight', lease_owner: 'thief|ü' });
        expect((await problemsOf(rs)).map((p) => [p.key, p.field, p.expected, p.actual])).toEqual([
          [rich.ids.plain, 'status', 'pending', 'in_flight'],
          [rich.ids.plain, 'lease_owner', null, 'thief|ü'],
        ]);
      });

      it('outside a lease the owner is not compared (it names only the holder of a live lease)', async () => {
        const rs = fresh();
        item(rs, rich.ids.done).lease_owner = 'someone else';
        item(rs, rich.ids.dropped).lease_owner = null;
        expect(await problemsOf(rs)).toEqual([]);
      });

      it('on_blocker_failure, with a row from before the column read as wait', async () => {
        const rs = fresh();
        item(rs, rich.ids.plain).on_blocker_failure = 'cascade';
        expect(await problemsOf(rs)).toEqual([
          {
            problem: 'row_differs',
            table: 'work_items',
            key: rich.ids.plain,
            field: 'on_blocker_failure',
            expected: 'wait',
            actual: 'cascade',
            message: `work_items ${rich.ids.plain}: on_blocker_failure is "cascade", the log says "wait"`,
          },
        ]);
        const older = fresh();
        for (const id of [rich.ids.plain, rich.ids.done]) {
          const row = item(older, id) as Partial<RowOf<'work_item'>>;
          delete row.on_blocker_failure;
        }
        expect(await problemsOf(older)).toEqual([]);
        // The dependant that does cascade is still checked.
        const cascading = fresh();
        delete (item(cascading, rich.ids.cascaded) as Partial<RowOf<'work_item'>>).on_blocker_failure;
        expect((await problemsOf(cascading)).map((p) => [p.field, p.expected, p.actual])).toEqual([
          ['on_blocker_failure', 'cascade', 'wait'],
        ]);
      });

      it('cascaded_from names the blocker whose failure cancelled the item', async () => {
        const rs = fresh();
        item(rs, rich.ids.cascaded).cascaded_from = null;
        expect(await problemsOf(rs)).toEqual([
          {
            problem: 'row_differs',
            table: 'work_items',
            key: rich.ids.cascaded,
            field: 'cascaded_from',
            expected: rich.ids.failed,
            actual: null,
            message: `work_items ${rich.ids.cascaded}: cascaded_from is null, the log says "${rich.ids.failed}"`,
          },
        ]);
      });

      it('claimed_at and resolved_at are the times of the claim and of the ending', async () => {
        const rs = fresh();
        const row = item(rs, rich.ids.done);
        const { claimed_at, resolved_at } = row as { claimed_at: number; resolved_at: number };
        Object.assign(row, { claimed_at: claimed_at + 1, resolved_at: resolved_at - 1 });
        expect(await problemsOf(rs)).toEqual([
          {
            problem: 'row_differs',
            table: 'work_items',
            key: rich.ids.done,
            field: 'claimed_at',
            expected: iso(claimed_at),
            actual: iso(claimed_at + 1),
            message: `work_items ${rich.ids.done}: claimed_at is "${iso(claimed_at + 1)}", the log says "${iso(claimed_at)}"`,
          },
          {
            problem: 'row_differs',
            table: 'work_items',
            key: rich.ids.done,
            field: 'resolved_at',
            expected: iso(resolved_at),
            actual: iso(resolved_at - 1),
            message: `work_items ${rich.ids.done}: resolved_at is "${iso(resolved_at - 1)}", the log says "${iso(resolved_at)}"`,
          },
        ]);
      });

      it('concurrency_key, traceparent and created_at are those of the enqueue', async () => {
        const rs = fresh();
        const row = item(rs, rich.ids.done);
        const created = row.created_at;
        Object.assign(row, {
          concurrency_key: NAMES.limitNoRate,
          traceparent: null,
          created_at: created + 1,
        });
        expect((await problemsOf(rs)).map((p) => [p.table, p.key, p.field, p.expected, p.actual])).toEqual([
          ['work_items', rich.ids.done, 'concurrency_key', NAMES.limitKept, NAMES.limitNoRate],
          [
            'work_items',
            rich.ids.done,
            'traceparent',
            '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
            null,
          ],
          ['work_items', rich.ids.done, 'created_at', iso(created), iso(created + 1)],
        ]);
      });

      it('not_before is checked against an enqueue that records it, and left alone before payload_hash', async () => {
        const rs = fresh();
        item(rs, rich.ids.leased).not_before = Date.parse('2021-01-01T00:00:00.000Z');
        expect((await problemsOf(rs)).map((p) => [p.field, p.expected, p.actual])).toEqual([
          ['not_before', '2020-01-01T00:00:00.000Z', '2021-01-01T00:00:00.000Z'],
        ]);
        rechain(rs, (e) => {
          if (e.type !== 'work_item_enqueued' || e.work_item_id !== rich.ids.leased) return;
          const { payload_hash: _h, max_attempts: _m, not_before: _b, ...rest } = JSON.parse(e.data);
          e.data = JSON.stringify(rest);
        });
        expect(await problemsOf(rs)).toEqual([]);
      });
    });

    describe('documents', () => {
      const plan = doc(NAMES.doc);
      const note = doc(NAMES.docOne);

      it('a body that does not hash to its content_hash', async () => {
        const rs = fresh();
        const row = rowOf(rs, 'document', (r) => r.id === NAMES.docOne);
        row.body = { only: false, é: '|+' };
        const actual = contentHash(row.body);
        expect(await problemsOf(rs)).toEqual([
          {
            problem: 'content_hash_mismatch',
            table: 'documents',
            key: note,
            field: 'body',
            expected: row.content_hash,
            actual,
            message: `documents ${note}: the body hashes to ${short(actual)}, not to its content_hash ${short(row.content_hash)}`,
          },
        ]);
      });

      it('a body and content_hash that agree, but not with the log', async () => {
        const rs = fresh();
        const row = rowOf(rs, 'document', (r) => r.id === NAMES.docOne);
        const logged = row.content_hash;
        row.body = { only: false };
        row.content_hash = contentHash(row.body);
        expect(await problemsOf(rs)).toEqual([
          {
            problem: 'row_differs',
            table: 'documents',
            key: note,
            field: 'content_hash',
            expected: logged,
            actual: row.content_hash,
            message: `documents ${note}: content_hash is "${row.content_hash}", the log says "${logged}"`,
          },
        ]);
      });

      it('version and updated_at are those of the latest committed version', async () => {
        const rs = fresh();
        const row = rowOf(rs, 'document', (r) => r.id === NAMES.doc);
        const updated = row.updated_at;
        Object.assign(row, { version: 3, updated_at: updated + 5 });
        expect(await problemsOf(rs)).toEqual([
          {
            problem: 'row_differs',
            table: 'documents',
            key: plan,
            field: 'version',
            expected: 4,
            actual: 3,
            message: `documents ${plan}: version is 3, the log says 4`,
          },
          {
            problem: 'row_differs',
            table: 'documents',
            key: plan,
            field: 'updated_at',
            expected: iso(updated),
            actual: iso(updated + 5),
            message: `documents ${plan}: updated_at is "${iso(updated + 5)}", the log says "${iso(updated)}"`,
          },
        ]);
      });

      it('created_at is the time of v1', async () => {
        const rs = fresh();
        const row = rowOf(rs, 'document', (r) => r.id === NAMES.doc);
        const created = row.created_at;
        row.created_at = created - 1000;
        expect(await problemsOf(rs)).toEqual([
          {
            problem: 'row_differs',
            table: 'documents',
            key: plan,
            field: 'created_at',
            expected: iso(created),
            actual: iso(created - 1000),
            message: `documents ${plan}: created_at is "${iso(created - 1000)}", the log says "${iso(created)}"`,
          },
        ]);
      });

      it('a document row no event commits', async () => {
        const rs = fresh();
        const stray = 'stray|é';
        rs.push({
          t: 'document',
          row: { ...rowOf(rs, 'document', (r) => r.id === NAMES.docOne), id: stray },
        });
        expect(await problemsOf(rs)).toEqual([
          {
            problem: 'event_missing',
            table: 'documents',
            key: doc(stray),
            message: `document ${doc(stray)} has no state_committed event`,
          },
        ]);
      });

      it('a document whose only events are no-ops has no version the log commits', async () => {
        const rs = fresh();
        rechain(rs, (e) => {
          if (e.stream !== `doc:${note}`) return;
          e.data = JSON.stringify({ ...JSON.parse(e.data), noop: true });
        });
        expect(await problemsOf(rs)).toEqual([
          {
            problem: 'event_missing',
            table: 'documents',
            key: note,
            message: `document ${note} has no state_committed event`,
          },
        ]);
      });

      it('a log that lacks v1 leaves created_at unchecked and reports the history row of v1', async () => {
        const rs = fresh();
        rechain(rs, (e) => {
          if (e.stream !== `doc:${plan}` || e.stream_seq !== 1) return;
          e.data = JSON.stringify({ ...JSON.parse(e.data), noop: true });
        });
        expect(await problemsOf(rs)).toEqual([
          {
            problem: 'event_missing',
            table: 'document_history',
            key: `${plan}@1`,
            message: `document_history ${plan}@1: no state_committed event records v1`,
          },
        ]);
      });

      it('a document with no history left lacks its current version', async () => {
        const rs = fresh();
        drop(rs, 'history', (r) => r.id === NAMES.docOne);
        expect(await problemsOf(rs)).toEqual([
          {
            problem: 'history_gap',
            table: 'document_history',
            key: `${note}@v1`,
            message: `document_history of ${note} lacks v1, though it is the current version`,
          },
        ]);
      });

      it('a document of the log with no row, its history still there', async () => {
        const rs = fresh();
        drop(rs, 'document', (r) => r.id === NAMES.docOne);
        expect(await problemsOf(rs)).toEqual([
          {
            problem: 'row_missing',
            table: 'documents',
            key: note,
            message: `document ${note} is in the log but has no row`,
          },
        ]);
      });

      it('history of a document that has neither a row nor an event', async () => {
        const rs = fresh();
        const ghost = 'ghost|é+';
        rs.push({ t: 'history', row: { ...history(rs, NAMES.docOne, 1), id: ghost } });
        expect(await problemsOf(rs)).toEqual([
          {
            problem: 'event_missing',
            table: 'document_history',
            key: doc(ghost),
            message: `history of ${doc(ghost)} has no document and no event`,
          },
        ]);
      });
    });

    describe('document history', () => {
      const plan = doc(NAMES.doc);

      it('a kept body that does not hash to its content_hash', async () => {
        const rs = fresh();
        const h = history(rs, NAMES.doc, 2);
        h.body = { x: 99 };
        const actual = contentHash(h.body);
        expect(await problemsOf(rs)).toEqual([
          {
            problem: 'content_hash_mismatch',
            table: 'document_history',
            key: `${plan}@2`,
            field: 'body',
            expected: h.content_hash,
            actual,
            message: `document_history ${plan}@2 (v2): the body hashes to ${short(actual)}, not to its content_hash ${short(h.content_hash)}`,
          },
        ]);
      });

      it('an entry that is no no-op but has no body', async () => {
        const rs = fresh();
        history(rs, NAMES.doc, 2).body = null;
        expect(await problemsOf(rs)).toEqual([
          {
            problem: 'row_differs',
            table: 'document_history',
            key: `${plan}@2`,
            field: 'body',
            message: `document_history ${plan}@2 (v2) has no body`,
          },
        ]);
      });

      it("an entry's actor other than its event's", async () => {
        const rs = fresh();
        history(rs, NAMES.doc, 1).actor = 'b|ü';
        expect(await problemsOf(rs)).toEqual([
          {
            problem: 'row_differs',
            table: 'document_history',
            key: `${plan}@1`,
            field: 'actor',
            expected: 'a|é',
            actual: 'b|ü',
            message: `document_history ${plan}@1: actor is "b|ü", the log says "a|é"`,
          },
        ]);
      });

      it("an entry's created_at other than its event's time", async () => {
        const rs = fresh();
        const h = history(rs, NAMES.doc, 2);
        const at = h.created_at;
        h.created_at = at - 1;
        expect(await problemsOf(rs)).toEqual([
          {
            problem: 'row_differs',
            table: 'document_history',
            key: `${plan}@2`,
            field: 'created_at',
            expected: iso(at),
            actual: iso(at - 1),
            message: `document_history ${plan}@2: created_at is "${iso(at - 1)}", the log says "${iso(at)}"`,
          },
        ]);
      });

      it('an entry for a version no event records', async () => {
        const rs = fresh();
        rs.push({ t: 'history', row: { ...history(rs, NAMES.doc, 5), seq: 6, version: 7 } });
        expect(await problemsOf(rs)).toEqual([
          {
            problem: 'event_missing',
            table: 'document_history',
            key: `${plan}@6`,
            message: `document_history ${plan}@6: no state_committed event records v7`,
          },
        ]);
      });

      it('a no-op entry no no-op event records', async () => {
        const rs = fresh();
        const noop = history(rs, NAMES.doc, 3);
        noop.reason = 'another reason';
        expect(await problemsOf(rs)).toEqual([
          {
            problem: 'event_missing',
            table: 'document_history',
            key: `${plan}@3`,
            message: `document_history ${plan}@3: no state_committed no-op event records this no-op at v2 (by ${noop.actor}, ${iso(noop.created_at)})`,
          },
        ]);
      });

      it('one no-op event accounts for one entry only', async () => {
        const rs = fresh();
        const noop = history(rs, NAMES.doc, 3);
        rs.push({ t: 'history', row: { ...noop, seq: 6 } });
        expect(await problemsOf(rs)).toEqual([
          {
            problem: 'event_missing',
            table: 'document_history',
            key: `${plan}@6`,
            message: `document_history ${plan}@6: no state_committed no-op event records this no-op at v2 (by ${noop.actor}, ${iso(noop.created_at)})`,
          },
        ]);
      });

      it("a no-op entry's content_hash is that of the version it left unchanged", async () => {
        const rs = fresh();
        const v1 = history(rs, NAMES.doc, 1).content_hash;
        const noop = history(rs, NAMES.doc, 3);
        const v2 = noop.content_hash;
        noop.content_hash = v1;
        expect(await problemsOf(rs)).toEqual([
          {
            problem: 'row_differs',
            table: 'document_history',
            key: `${plan}@3`,
            field: 'content_hash',
            expected: v2,
            actual: v1,
            message: `document_history ${plan}@3: content_hash is "${v1}", the log says "${v2}"`,
          },
        ]);
      });

      it('a no-op entry at a version the log never had', async () => {
        const rs = fresh();
        const noop = history(rs, NAMES.doc, 3);
        noop.version = 9;
        expect(await problemsOf(rs)).toEqual([
          {
            problem: 'event_missing',
            table: 'document_history',
            key: `${plan}@3`,
            message: `document_history ${plan}@3: no state_committed no-op event records this no-op at v9 (by ${noop.actor}, ${iso(noop.created_at)})`,
          },
        ]);
      });

      it('the current version missing from the history', async () => {
        const rs = fresh();
        drop(rs, 'history', (r) => r.id === NAMES.doc && r.version === 4);
        expect(await problemsOf(rs)).toEqual([
          {
            problem: 'history_gap',
            table: 'document_history',
            key: `${plan}@v4`,
            message: `document_history of ${plan} lacks v4, though it is the current version`,
          },
        ]);
      });

      it('a version missing between kept ones: retention removes the oldest only', async () => {
        const rs = fresh();
        drop(rs, 'history', (r) => r.id === NAMES.doc && r.version === 3);
        expect(await problemsOf(rs)).toEqual([
          {
            problem: 'history_gap',
            table: 'document_history',
            key: `${plan}@v3`,
            message: `document_history of ${plan} lacks v3, though v1 is kept`,
          },
        ]);
        // The oldest ones removed, as retention does: no gap; a no-op at the oldest kept version stays valid.
        for (const upTo of [1, 2]) {
          const pruned = fresh();
          drop(pruned, 'history', (r) => r.id === NAMES.doc && r.version <= upTo && !(upTo === 1 && r.noop));
          expect(await problemsOf(pruned), `v1-v${upTo} removed`).toEqual([]);
        }
      });

      it('a no-op kept below the oldest kept version', async () => {
        const rs = fresh();
        drop(rs, 'history', (r) => r.id === NAMES.doc && r.version <= 2 && !r.noop);
        expect(await problemsOf(rs)).toEqual([
          {
            problem: 'history_gap',
            table: 'document_history',
            key: `${plan}@3`,
            message: `document_history ${plan}@3: a no-op at v2 is kept, but v2 itself is gone`,
          },
        ]);
      });
    });

    describe('blocker edges', () => {
      it('an edge blocked_by implies is missing', async () => {
        const rs = fresh();
        const edges = rowOf(rs, 'blocker_edges').edges;
        const at = edges.findIndex((e) => e.blocker === rich.ids.failed && e.item === rich.ids.blocked);
        edges.splice(at, 1);
        expect(await problemsOf(rs)).toEqual([
          {
            problem: 'row_missing',
            table: 'work_item_blockers',
            key: `${rich.ids.blocked} <- ${rich.ids.failed}`,
            message: `work item ${rich.ids.blocked} is blocked by ${rich.ids.failed}, but work_item_blockers has no row for it`,
          },
        ]);
      });

      it('an edge no blocked_by says', async () => {
        const rs = fresh();
        rowOf(rs, 'blocker_edges').edges.push({ blocker: rich.ids.plain, item: rich.ids.leased });
        expect(await problemsOf(rs)).toEqual([
          {
            problem: 'event_missing',
            table: 'work_item_blockers',
            key: `${rich.ids.leased} <- ${rich.ids.plain}`,
            message: `work_item_blockers says ${rich.ids.leased} is blocked by ${rich.ids.plain}, which no item's blocked_by says`,
          },
        ]);
      });

      it('a blocked_by that is no list of ids implies no edge (the row differs, nothing more)', async () => {
        for (const bad of [null, [7], 'wi_x']) {
          const rs = fresh();
          (item(rs, rich.ids.plain) as { blocked_by: unknown }).blocked_by = bad;
          expect(await problemsOf(rs), JSON.stringify(bad)).toEqual([
            {
              problem: 'row_differs',
              table: 'work_items',
              key: rich.ids.plain,
              field: 'blocked_by',
              expected: [],
              actual: bad,
              message: `work_items ${rich.ids.plain}: blocked_by is ${JSON.stringify(bad)}, the log says []`,
            },
          ]);
        }
      });
    });

    describe.runIf(b.name === 'postgres')('counters', () => {
      const last = (rs: Rec[]) => {
        const events = rs.filter((r) => r.t === 'event');
        const e = events[events.length - 1]!;
        if (e.t !== 'event') throw new Error('no event');
        return { position: e.row.position, hash: e.row.hash };
      };

      it('no head row while the log has events', async () => {
        const rs = fresh();
        drop(rs, 'event_head', () => true);
        expect(await problemsOf(rs)).toEqual([
          {
            problem: 'counter_mismatch',
            table: 'event_heads',
            key: 'head',
            message: `there is no event head row, but the log ends at #${last(rs).position}`,
          },
        ]);
      });

      it('an empty log needs no head row, and its head row names position 0', async () => {
        const rs: Rec[] = [{ t: 'event_stream', row: { stream: `doc:${doc('never')}`, seq: 0 } }];
        expect(await checkRecords(rs)).toMatchObject({ ok: true, problems: [], checked: { counters: true } });
        const empty: Rec[] = [{ t: 'event_head', row: { position: 0, hash: GENESIS_HASH } }];
        expect(await checkRecords(empty)).toMatchObject({
          ok: true,
          problems: [],
          checked: { counters: true },
        });
      });

      it('a head row behind the log, or naming another hash', async () => {
        const rs = fresh();
        const end = last(rs);
        const head = rowOf(rs, 'event_head');
        head.position = end.position - 1;
        expect(await problemsOf(rs)).toEqual([
          {
            problem: 'counter_mismatch',
            table: 'event_heads',
            key: 'head',
            field: 'position',
            expected: `${end.position}:${end.hash}`,
            actual: `${end.position - 1}:${end.hash}`,
            message: `the event head row says #${end.position - 1} (${short(end.hash)}), the log ends at #${end.position} (${short(end.hash)})`,
          },
        ]);
        const other = fresh();
        const forged = 'f'.repeat(64);
        rowOf(other, 'event_head').hash = forged;
        expect(await problemsOf(other)).toEqual([
          {
            problem: 'counter_mismatch',
            table: 'event_heads',
            key: 'head',
            field: 'position',
            expected: `${end.position}:${end.hash}`,
            actual: `${end.position}:${forged}`,
            message: `the event head row says #${end.position} (${short(forged)}), the log ends at #${end.position} (${short(end.hash)})`,
          },
        ]);
      });

      it('a stream counter above the log (events removed), below it, and for a stream the log lacks', async () => {
        const stream = `doc:${doc(NAMES.doc)}`;
        const expectOne = async (seq: number, message: string) => {
          const rs = fresh();
          rowOf(rs, 'event_stream', (r) => r.stream === stream).seq = seq;
          expect(await problemsOf(rs)).toEqual([
            {
              problem: 'counter_mismatch',
              table: 'event_streams',
              key: stream,
              field: 'seq',
              expected: 5,
              actual: seq,
              message,
            },
          ]);
        };
        await expectOne(
          6,
          `the counter of stream ${stream} says 6 events, the log holds 5: events were removed`,
        );
        await expectOne(4, `the counter of stream ${stream} says 4 events, the log holds 5`);
        const rs = fresh();
        const ghost = `doc:${doc('ghost|é')}`;
        rs.push({ t: 'event_stream', row: { stream: ghost, seq: 2 } });
        expect(await problemsOf(rs)).toEqual([
          {
            problem: 'counter_mismatch',
            table: 'event_streams',
            key: ghost,
            field: 'seq',
            expected: 0,
            actual: 2,
            message: `the counter of stream ${ghost} says 2 events, the log holds 0: events were removed`,
          },
        ]);
      });

      it('a stream of the log with no counter row', async () => {
        const rs = fresh();
        const stream = `doc:${doc(NAMES.doc)}`;
        drop(rs, 'event_stream', (r) => r.stream === stream);
        expect(await problemsOf(rs)).toEqual([
          {
            problem: 'counter_mismatch',
            table: 'event_streams',
            key: stream,
            field: 'seq',
            expected: 5,
            actual: null,
            message: `stream ${stream} has 5 events but no counter row`,
          },
        ]);
      });
    });
  });
}
