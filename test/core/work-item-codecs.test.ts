// The work-item event codecs (src/core/codecs/work-items.ts) hold their three uses together (issue 44): for
// work_item_claimed, the data the store builds in JavaScript (SQLite, PostgreSQL's full claim), the SQL text
// PostgreSQL's one-statement claim writes from the codec's fields, and the fold verify replays agree byte for
// byte and field for field, over generated values (workers with `|`, `+`, quotes, non-ASCII, years up to
// 9999); and on both backends (PostgreSQL also through PgBouncer in transaction mode) a claim's and a batch
// resolve's events are the codec's data of the rows they left, and verify folds them back.
import fc from 'fast-check';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fieldsSql } from '../../src/backends/postgres/work/claim.js';
import {
  CLAIMED,
  type ClaimedData,
  enqueuedFold,
  fieldsText,
  HOLE,
  ITEM_EVENT_CODECS,
  RESOLVED,
} from '../../src/core/codecs/work-items.js';
import { contentHash } from '../../src/core/json.js';
import { toIso } from '../../src/core/time.js';
import type { WorkItem } from '../../src/core/types.js';
import { ITEM_TYPE_OF_BATCH } from '../../src/core/work/batches.js';
import { backendsForThisFile } from '../helpers/backends.js';
import { PG_URL } from '../helpers/postgres.js';

const backends = await backendsForThisFile({ pooled: true });
const seed = process.env.FC_SEED ? { seed: Number(process.env.FC_SEED) } : {};

/** Workers as real systems name them, and worse: separators, quotes, backslashes, non-ASCII, controls. */
const worker = fc.oneof(
  fc.string({ minLength: 1, maxLength: 40, unit: 'grapheme' }),
  fc.constantFrom('planner|ü+1', 'a"b\\c', 'tab\there', 'emoji 🚀/w-2', 'nul\u0001x', "o'neil"),
);
/** Lease ends from 1970 to the last millisecond of year 9999 (toIso's four-digit years). */
const leaseMs = fc.integer({ min: 0, max: 253_402_300_799_999 });
const claimed = fc.record({ worker, attempt: fc.integer({ min: 1, max: 1_000_000 }), leaseMs });

const data = (c: { worker: string; attempt: number; leaseMs: number }): ClaimedData => ({
  worker: c.worker,
  attempt: c.attempt,
  lease_expires_at: toIso(c.leaseMs),
});

describe('work_item_claimed: build, SQL text and fold agree', () => {
  it('the codec’s text in parts is JSON.stringify’s text of its data, with a hole filled or not', () => {
    fc.assert(
      fc.property(claimed, (c) => {
        const text = JSON.stringify(CLAIMED.data(data(c)));
        const whole = fieldsText(CLAIMED.fields, {
          worker: c.worker,
          attempt: c.attempt,
          lease_expires_at: c.leaseMs,
        });
        expect(`{${whole.join('')}}`).toBe(text);
        const holed = fieldsText(CLAIMED.fields, {
          worker: c.worker,
          attempt: HOLE,
          lease_expires_at: c.leaseMs,
        });
        expect(holed[1]).toEqual({ hole: 'attempt', key: ',"attempt":' });
        expect(`{${holed[0]}${(holed[1] as { key: string }).key}${c.attempt}${holed[2]}}`).toBe(text);
      }),
      { numRuns: 300, ...seed },
    );
  });

  it('a time given as text (a resolve’s retry_at) is written as given, one given as epoch ms as toIso writes it', () => {
    const values = { status: 'pending', worker: 'w|1', attempt: 2, error: 'boom "x"' } as const;
    const retry = '2026-12-07T01:02:03.004Z';
    const text = JSON.stringify(RESOLVED.data({ ...values, retry_at: retry }));
    const parts = fieldsText(RESOLVED.fields, {
      ...values,
      retry_at: retry,
      result_hash: undefined,
      duration_ms: undefined,
    });
    expect(`{${parts.join('')}}`).toBe(text);
    const fromMs = fieldsText(RESOLVED.fields, {
      ...values,
      retry_at: Date.parse(retry),
      result_hash: undefined,
      duration_ms: undefined,
    });
    expect(`{${fromMs.join('')}}`).toBe(text);
  });

  it('fieldsSql takes only plain JSON keys (they are written into the SQL text as they are)', () => {
    for (const key of ['bad"key', "o'neil", 'Upper', 'x;DROP', 'a-b']) {
      expect(() => fieldsSql([[key, 'string']], { [key]: 'c' }), key).toThrow(
        `field ${key} is no plain JSON key`,
      );
    }
    expect(fieldsSql([['a_b', 'integer']], { a_b: 'c.n' })).toBe(`'"a_b":' || c.n`);
  });

  it('every item type a batch event holds has a codec verify folds it with', () => {
    for (const type of Object.values(ITEM_TYPE_OF_BATCH)) {
      expect(type === 'work_item_enqueued' || ITEM_EVENT_CODECS.has(type), type).toBe(true);
    }
  });

  it('folding its data gives the item the claim left: in flight, held by the worker, on the attempt', () => {
    fc.assert(
      fc.property(claimed, fc.integer({ min: 0, max: 2 ** 40 }), (c, at) => {
        const s = enqueuedFold(
          { type: 'work_item_enqueued', position: 1, item: 'x', created_at: 0 },
          {
            title: 't',
            priority: 0,
          },
        );
        const reports: string[] = [];
        const e = { type: CLAIMED.type, position: 2, item: 'x', created_at: at };
        ITEM_EVENT_CODECS.get(CLAIMED.type)!.fold(s, e, CLAIMED.data(data(c)), (m) => reports.push(m));
        expect(reports).toEqual([]);
        expect(s).toMatchObject({
          status: 'in_flight',
          lease_owner: c.worker,
          attempts: c.attempt,
          claimed_at: at,
        });
      }),
      { numRuns: 200, ...seed },
    );
  });

  const pgOnly = backends.some((b) => b.name === 'postgres') ? describe : describe.skip;
  pgOnly('on PostgreSQL', () => {
    let client: pg.Client;
    beforeAll(async () => {
      client = new pg.Client({ connectionString: PG_URL });
      await client.connect();
    });
    afterAll(() => client.end());

    it('the SQL text made from the codec’s fields writes the same bytes as the codec', async () => {
      const sql = `SELECT ${fieldsSql(CLAIMED.fields, {
        worker: '$1::text',
        attempt: '$2::bigint',
        lease_expires_at: '$3::bigint',
      })} AS t`;
      // PostgreSQL text holds no NUL: a worker with one is refused before any claim (names are checked).
      const values = fc.sample(
        claimed.filter((c) => !c.worker.includes('\u0000')),
        { numRuns: 300, ...seed },
      );
      for (const c of values) {
        const { rows } = await client.query<{ t: string }>(sql, [c.worker, c.attempt, c.leaseMs]);
        expect(`{${rows[0]!.t}}`, JSON.stringify(c)).toBe(JSON.stringify(CLAIMED.data(data(c))));
      }
    });
  });
});

describe.each(backends.map((b) => [b.name, b] as const))(
  'work_item_claimed through the store on %s',
  (_, b) => {
    it('a claim’s event is the codec’s data of the row it left, and verify folds it back', async () => {
      const inst = await b.open();
      try {
        const workers = ['planner|ü+1', 'a"b\\c', "o'neil/w-2", 'emoji 🚀'];
        for (const w of workers) await inst.work.enqueue({ title: `for ${w}` });
        const held: WorkItem[] = [];
        for (const w of workers) held.push((await inst.work.claim({ worker: w, lease_ms: 600_000 }))!);
        // A batch too (PostgreSQL's one statement when it pays): its entries are the same data.
        for (let k = 0; k < 3; k++) await inst.work.enqueue({ title: `batch ${k}` });
        held.push(...(await inst.work.claimMany({ worker: 'batch|ü', lease_ms: 600_000, limit: 3 })));
        const events = await inst.events.read({ type: CLAIMED.type, limit: 100 });
        const batch = await inst.events.read({ type: 'work_items_claimed', limit: 100 });
        const seen = new Map<string, unknown>();
        for (const e of events) seen.set(e.work_item_id!, e.data);
        for (const e of batch) {
          const d = e.data as { items: Array<{ id: string } & Record<string, unknown>> };
          for (const { id, actor: _a, actor_kind: _k, ...rest } of d.items) seen.set(id, rest);
        }
        for (const item of held) {
          const want = CLAIMED.data({
            worker: item.lease_owner!,
            attempt: item.attempts,
            lease_expires_at: item.lease_expires_at,
          });
          const got = seen.get(item.id) as Record<string, unknown>;
          expect({
            worker: got.worker,
            attempt: got.attempt,
            lease_expires_at: got.lease_expires_at,
          }).toEqual(want);
        }
        expect((await inst.events.verify()).ok).toBe(true);
      } finally {
        await inst.close();
      }
    });

    it('a batch of resolves (one statement on PostgreSQL) writes each entry as the codec’s data', async () => {
      const inst = await b.open();
      try {
        for (let k = 0; k < 4; k++) await inst.work.enqueue({ title: `r${k}` });
        const held = await inst.work.claimMany({ worker: 'w|ü+1', lease_ms: 600_000, limit: 4 });
        const results = [{ answer: 'a"b\\c 🚀' }, null, [1, 'two', { three: null }], 'plain'];
        const done = await inst.work.resolveMany(
          held.map((h, k) => ({
            id: h.id,
            status: 'done' as const,
            worker: 'w|ü+1',
            attempt: h.attempts,
            result: results[k]!,
          })),
        );
        const [batch] = await inst.events.read({ type: 'work_items_resolved', limit: 10 });
        const entries = (batch!.data as { items: Array<Record<string, unknown>> }).items;
        expect(entries.map((e) => e.id)).toEqual(done.map((d) => d.id));
        for (const [k, item] of done.entries()) {
          const { id: _id, actor: _a, actor_kind: _k, ...got } = entries[k]!;
          const result = results[k]!;
          const want = RESOLVED.data({
            status: 'done',
            worker: 'w|ü+1',
            attempt: item.attempts,
            ...(result === null ? {} : { result_hash: contentHash(result) }),
            duration_ms: Date.parse(item.resolved_at!) - Date.parse(item.claimed_at!),
          });
          // Byte for byte: the entry's text is the codec's.
          expect(JSON.stringify(got)).toBe(JSON.stringify(want));
        }
        expect((await inst.events.verify()).ok).toBe(true);
      } finally {
        await inst.close();
      }
    });
  },
);
