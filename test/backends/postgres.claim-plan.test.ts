// The claim walks the ready index in claim order and stops at its batch, whatever the planner knows (issue
// 41): on a table it has never analyzed (autovacuum off, so it never will here), with 10, 10,000 and 1,000,000
// pending items, the plan that chooses the items (the claim_ready function, as auto_explain logs it when it
// runs) is an Index Scan of work_items_ready with no Sort, reading no more rows than it takes; and a claim
// through the library runs that function.
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
