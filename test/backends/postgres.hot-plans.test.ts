// The hot statements' plans do not depend on what the planner knows (issue 41): on a work_items table it has
// never analyzed (autovacuum off, so it never will here), holding 10, 10,000 and 1,000,000 items,
// - the claim walks the ready index in claim order and stops at its batch: the plan that chooses the items
//   (the claim_ready function, as auto_explain logs it when it runs) is an Index Scan of work_items_ready
//   with no Sort, reading no more rows than it takes; and a claim through the library runs that function;
// - the library's resolve of 500 (one statement with its event), heartbeat of 500 and release find each item
//   by its primary key, one lookup per item, and never scan the table: each statement is captured as the
//   library sends it (text and parameters) and run under EXPLAIN ANALYZE, rolled back; the claim statement
//   around claim_ready updates the items it chose by their primary key (from 10,000 items on; a table of a
//   few hundred rows may be read whole into a hash join).
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Instance, openInstance } from '../../src/instance/instance.js';
import { adminQuery, PG_URL, postgresForThisFile } from '../helpers/postgres.js';
import { tempDir } from '../helpers/tmp.js';

const schema = await postgresForThisFile();
const NOW = 1_800_000_000_000;

/** Inserts `n` pending items of instance `inst` in one statement (priorities 0–4, one created_at per item). */
async function fill(inst: string, n: number): Promise<void> {
  await adminQuery(
    `INSERT INTO "${schema}".work_items (instance, id, title, priority, created_at, updated_at)
     SELECT $1, 'wi_' || lpad(g::text, 8, '0'), 'item ' || g, g % 5, $2::bigint + g, $2::bigint + g
     FROM generate_series(1, $3) AS g`,
    [inst, NOW - 10_000_000, n],
  );
}

/** The plan claim_ready ran with (auto_explain, logged to this client), and how many rows it returned. */
async function claimPlan(inst: string, limit: number): Promise<{ plan: string; rows: number }> {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  const logs: string[] = [];
  client.on('notice', (m) => logs.push(m.message ?? ''));
  try {
    await client.query("LOAD 'auto_explain'");
    await client.query(
      'SET auto_explain.log_min_duration = 0; SET auto_explain.log_nested_statements = on; SET auto_explain.log_analyze = on; SET client_min_messages = log',
    );
    await client.query('BEGIN');
    const r = await client.query(`SELECT * FROM "${schema}".claim_ready($1, $2, $3, NULL, 'lock')`, [
      inst,
      NOW,
      limit,
    ]);
    await client.query('ROLLBACK');
    const plan = logs.find((l) => l.includes('FROM work_items AS w')) ?? logs.join('\n');
    return { plan, rows: r.rowCount ?? 0 };
  } finally {
    await client.end();
  }
}

/** A statement as the library sent it. */
interface Sent {
  text: string;
  values: unknown[];
}

/**
 * Runs `call` with the first statement whose text matches `match` stopped before it reaches the server (the
 * call fails and rolls back, so the rows stay as they were); returns that statement.
 */
async function capture(match: RegExp, call: () => Promise<unknown>): Promise<Sent> {
  const proto = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const original = proto.query;
  let sent: Sent | undefined;
  proto.query = function (this: unknown, config: unknown, ...rest: unknown[]) {
    const q = config as { text?: string; values?: unknown[] } | string;
    const text = typeof q === 'string' ? q : q?.text;
    if (sent === undefined && typeof text === 'string' && match.test(text)) {
      sent = { text, values: (typeof q === 'string' ? rest[0] : q.values) as unknown[] };
      const refused = new Error('captured by the test');
      // pg-pool passes a callback; a client checked out for a transaction is asked for a promise.
      const callback = [config, ...rest].find((a) => typeof a === 'function') as
        | ((err: Error) => void)
        | undefined;
      if (callback) {
        process.nextTick(() => callback(refused));
        return undefined;
      }
      return Promise.reject(refused);
    }
    return original.call(this, config, ...rest);
  };
  try {
    await call().catch(() => undefined);
  } finally {
    proto.query = original;
  }
  if (!sent) throw new Error(`no statement matching ${match} was sent`);
  return sent;
}

/** The plan `s` runs with (EXPLAIN ANALYZE, rolled back), its parameters as sent. */
async function explain(s: Sent): Promise<string> {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    await client.query('BEGIN');
    const r = await client.query<{ 'QUERY PLAN': string }>(
      `EXPLAIN (ANALYZE, COSTS OFF) ${s.text}`,
      s.values,
    );
    await client.query('ROLLBACK');
    return r.rows.map((x) => x['QUERY PLAN']).join('\n');
  } finally {
    await client.end();
  }
}

/**
 * Every scan of work_items in `plan` is a primary-key lookup per item, `loops` of them: an Index Scan of
 * work_items_pkey returning the one row, or a Bitmap Heap Scan returning it over a Bitmap Index Scan of it
 * (which also finds the item's older versions no vacuum has removed yet: a few, one per update of the item);
 * never a scan of the table.
 */
function expectLookups(plan: string, loops: number, what: string): void {
  expect(plan, what).not.toMatch(/Seq Scan on work_items/);
  const scans = [
    ...plan.matchAll(
      /(Index Scan using|Bitmap Index Scan on) (\w+)(?: on work_items\b)?[^\n]*rows=(\d+) loops=(\d+)/g,
    ),
  ].filter((m) => m[1] === 'Bitmap Index Scan on' || m[0].includes(' on work_items'));
  const heap = [...plan.matchAll(/Bitmap Heap Scan on work_items\b[^\n]*rows=(\d+) loops=(\d+)/g)];
  expect(scans.length, what).toBeGreaterThan(0);
  for (const [, how, index, rows, n] of scans) {
    const most = how === 'Index Scan using' ? 1 : 4;
    expect([index, Number(rows) <= most, Number(n)], `${what}: ${how} ${index}`).toEqual([
      'work_items_pkey',
      true,
      loops,
    ]);
  }
  for (const [, rows, n] of heap)
    expect([Number(rows), Number(n)], `${what}: bitmap heap scan`).toEqual([1, loops]);
}

/**
 * The library's resolve, heartbeat and release of 500 items of a new instance of its own, at whatever size
 * the table has now: the plan of each statement, by name.
 */
async function hotPlans(
  name: string,
): Promise<Record<'claim' | 'resolve' | 'heartbeat' | 'release', string>> {
  const inst = await openInstance({ dir: tempDir(), url: `${PG_URL}?schema=${schema}`, name });
  try {
    await inst.work.enqueueMany(Array.from({ length: 501 }, (_, k) => ({ title: `hot ${k}` })));
    const claim = await capture(/claim_ready\(/, () =>
      inst.work.claimMany({ worker: 'hot', limit: 500, lease_ms: 600_000 }),
    );
    const held = await inst.work.claimMany({ worker: 'hot', limit: 500, lease_ms: 600_000 });
    expect(held).toHaveLength(500);
    const resolve = await capture(/\bUPDATE\b[\s\S]*_entries AS/, () =>
      inst.work.resolveMany(
        held.map((h) => ({ id: h.id, worker: 'hot', status: 'done' as const, attempt: h.attempts })),
      ),
    );
    const heartbeat = await capture(/lease_expires_at = x\.expires/, () =>
      inst.work.heartbeatMany(
        held.map((h) => ({ id: h.id, worker: 'hot', attempt: h.attempts, lease_ms: 600_000 })),
      ),
    );
    const release = await capture(/max_attempts = w\.max_attempts \+ 1/, () =>
      inst.work.release({ id: held[0]!.id, worker: 'hot' }),
    );
    // Nothing captured reached the store: the items are still held (the claim's plan is explained now,
    // with 1 item left to take).
    expect((await inst.work.counts()).in_flight).toBe(500);
    return {
      resolve: await explain(resolve),
      heartbeat: await explain(heartbeat),
      release: await explain(release),
      claim: await explain(claim),
    };
  } finally {
    await inst.close();
  }
}

describe.skipIf(schema === null)('the claim plan on a table the planner has never analyzed', () => {
  let inst: Instance;
  beforeAll(async () => {
    inst = await openInstance({ dir: tempDir(), url: `${PG_URL}?schema=${schema}`, name: 'plan' });
    await adminQuery(`ALTER TABLE "${schema}".work_items SET (autovacuum_enabled = false)`);
  });
  afterAll(async () => {
    await inst?.close();
  });

  for (const n of [10, 10_000, 1_000_000]) {
    it(`${n.toLocaleString('en')} pending: an index walk in claim order that stops at the batch`, async () => {
      const key = `plan-${n}`;
      await fill(key, n);
      const [stats] = await adminQuery<{ analyzed: boolean; reltuples: number }>(
        `SELECT (s.last_analyze IS NOT NULL OR s.last_autoanalyze IS NOT NULL) AS analyzed, c.reltuples
         FROM pg_class AS c JOIN pg_stat_user_tables AS s ON s.relid = c.oid
         WHERE s.schemaname = $1 AND s.relname = 'work_items'`,
        [schema],
      );
      expect(stats!.analyzed).toBe(false);
      const limit = Math.min(500, n);
      const { plan, rows } = await claimPlan(key, 500);
      expect(rows).toBe(limit);
      expect(plan).toMatch(/Index Scan using work_items_ready on work_items w/);
      expect(plan).not.toMatch(/\bSort\b/);
      // The walk read what it returned, not every pending item.
      const scanned = /Index Scan using work_items_ready[^\n]*actual time=[\d.]+\.\.[\d.]+ rows=(\d+)/.exec(
        plan,
      );
      expect(Number(scanned?.[1])).toBe(limit);
      const plans = await hotPlans(`hot-${n}`);
      expect(plans.heartbeat).toContain('json_to_recordset');
      for (const [statement, loops] of [
        ['resolve', 500],
        ['heartbeat', 500],
        ['release', 1],
      ] as const) {
        if (process.env.SHOW_PLAN) console.log(`${statement} at ${n}:\n${plans[statement]}`);
        expectLookups(plans[statement], loops, `${statement} at ${n}`);
      }
      // The claim's update finds the item claim_ready chose by its primary key (a table of a few hundred rows
      // may instead be read whole into a hash join: 0.2 ms at 10); the sweep of expired leases before it
      // walks the lease index.
      if (process.env.SHOW_PLAN) console.log(`claim at ${n}:\n${plans.claim}`);
      expect(plans.claim).toContain('Function Scan on claim_ready');
      const used = [
        ...plans.claim.matchAll(
          /(?:Index Scan using|Index Only Scan using|Bitmap Index Scan on) (work_items\w*)/g,
        ),
      ].map((m) => m[1]);
      expect(used).toContain('work_items_leases');
      if (n >= 10_000) {
        expect(plans.claim).not.toMatch(/Seq Scan on work_items/);
        expect(new Set(used)).toEqual(new Set(['work_items_leases', 'work_items_pkey']));
      }
    }, 300_000);
  }

  it('a claim through the library chooses its items with claim_ready', async () => {
    await inst.work.enqueueMany([{ title: 'a' }, { title: 'b' }]);
    const [def] = await adminQuery<{ def: string }>(
      `SELECT pg_get_functiondef(p.oid) AS def FROM pg_proc AS p JOIN pg_namespace AS n ON n.oid = p.pronamespace
       WHERE n.nspname = $1 AND p.proname = 'claim_ready'`,
      [schema],
    );
    // Replaced by one that refuses, the claim fails with its message; restored, it claims.
    await adminQuery(
      `CREATE OR REPLACE FUNCTION "${schema}".claim_ready(p_instance text, p_now bigint, p_limit bigint, p_kind text, p_not_kind text)
       RETURNS TABLE (id text, priority integer, created_at bigint, inst text, concurrency_key text)
       LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'claim_ready was called'; END $$`,
    );
    try {
      await expect(inst.work.claimMany({ worker: 'w', limit: 2, lease_ms: 60_000 })).rejects.toThrow(
        /claim_ready was called/,
      );
    } finally {
      await adminQuery(def!.def);
    }
    const claimed = await inst.work.claimMany({ worker: 'w', limit: 2, lease_ms: 60_000 });
    expect(claimed.map((w) => w.title).sort()).toEqual(['a', 'b']);
  });
});
