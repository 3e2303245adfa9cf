// Keyed-limit SQL for PostgreSQL: the limits claims respect (work_limits), each change with its event in
// one transaction. The claim locks and reads them in claim.ts.
import type { LimitBackend, LimitChange, LimitRow } from '../../../core/backend.js';
import { limitEvent } from '../../../core/codecs/limits.js';
import { noLimit } from '../../../core/work/limits.js';
import type { PostgresConnection, Tx } from '../connection.js';
import { type AppendHint, writeEvents } from '../events.js';

const LIMIT_COLS = 'key, max_in_flight, rate_count, rate_period_ms, created_at, updated_at';

/** The limit of `key` as stored now (read by `run`: a transaction, or the pool), or null. */
export async function getLimit(
  conn: PostgresConnection,
  key: string,
  run: Pick<Tx, 'query'> | PostgresConnection = conn,
): Promise<LimitRow | null> {
  const res = await run.query<LimitRow>(
    `SELECT ${LIMIT_COLS} FROM ${conn.names.work_limits} WHERE instance = $1 AND key = $2`,
    [conn.instance, key],
  );
  return res.rows[0] ?? null;
}

// The operations of LimitBackend (src/core/work/backend.ts); SQLite's limits.ts has the same names.

export async function changeLimit(
  conn: PostgresConnection,
  hint: AppendHint | null,
  q: LimitChange,
): Promise<{ before: LimitRow | null; after: LimitRow | null }> {
  const t = conn.names;
  return conn.transaction(async (tx) => {
    // Locked first: a claim counting against this key waits until the change commits, and sees it.
    const before =
      (
        await tx.query<LimitRow>(
          `SELECT ${LIMIT_COLS} FROM ${t.work_limits} WHERE instance = $1 AND key = $2 FOR UPDATE`,
          [conn.instance, q.key],
        )
      ).rows[0] ?? null;
    let after: LimitRow | null = null;
    if (q.limit) {
      const rate = q.limit.rate;
      // A changed rate starts a new window; an unchanged one keeps counting the claims of the open window.
      const same = `${t.work_limits}.rate_count IS NOT DISTINCT FROM excluded.rate_count
               AND ${t.work_limits}.rate_period_ms IS NOT DISTINCT FROM excluded.rate_period_ms`;
      const res = await tx.query<LimitRow>(
        `INSERT INTO ${t.work_limits} (instance, key, max_in_flight, rate_count, rate_period_ms, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $6)
         ON CONFLICT (instance, key) DO UPDATE SET max_in_flight = excluded.max_in_flight,
           window_start = CASE WHEN ${same} THEN ${t.work_limits}.window_start ELSE 0 END,
           window_count = CASE WHEN ${same} THEN ${t.work_limits}.window_count ELSE 0 END,
           rate_count = excluded.rate_count, rate_period_ms = excluded.rate_period_ms,
           updated_at = excluded.updated_at
         RETURNING ${LIMIT_COLS}`,
        [conn.instance, q.key, q.limit.max_in_flight, rate?.count ?? null, rate?.period_ms ?? null, q.now],
      );
      after = res.rows[0] ?? null;
    } else {
      if (!before) throw noLimit(q.key);
      await tx.query(`DELETE FROM ${t.work_limits} WHERE instance = $1 AND key = $2`, [conn.instance, q.key]);
    }
    await writeEvents(tx, conn, [limitEvent(q)], { commit: true, hint });
    return { before, after };
  });
}

export async function listLimits(conn: PostgresConnection): Promise<LimitRow[]> {
  const res = await conn.query<LimitRow>(
    `SELECT ${LIMIT_COLS} FROM ${conn.names.work_limits} WHERE instance = $1 ORDER BY key`,
    [conn.instance],
  );
  return res.rows;
}

/** The LimitBackend of one PostgreSQL store: the operations above, on its connection and NOTIFY hint. */
export function createLimitBackend(conn: PostgresConnection, hint: AppendHint | null): LimitBackend {
  return {
    change: (q) => changeLimit(conn, hint, q),
    list: () => listLimits(conn),
  };
}
