// Keyed-limit SQL for SQLite: the limits claims respect (work_limits), each change with its event in one
// BEGIN IMMEDIATE transaction. The claim reads them in claim.ts.
import type { LimitBackend, LimitChange, LimitRow } from '../../../core/backend.js';
import { limitEvent } from '../../../core/codecs/limits.js';
import { noLimit } from '../../../core/work/limits.js';
import type { SqliteConnection } from '../connection.js';
import { writeEvents } from '../events.js';

const LIMIT_COLS = 'key, max_in_flight, rate_count, rate_period_ms, created_at, updated_at';

/** The limit of `key` as stored now, or null. */
export function getLimit(conn: SqliteConnection, key: string): LimitRow | null {
  return (
    (conn.stmt(`SELECT ${LIMIT_COLS} FROM work_limits WHERE key = ?`).get(key) as LimitRow | undefined) ??
    null
  );
}

// The operations of LimitBackend (src/core/work/backend.ts); PostgreSQL's limits.ts has the same names.

export async function changeLimit(
  conn: SqliteConnection,
  q: LimitChange,
): Promise<{ before: LimitRow | null; after: LimitRow | null }> {
  return conn.write(() => {
    const before = getLimit(conn, q.key);
    let after: LimitRow | null = null;
    if (q.limit) {
      const rate = q.limit.rate;
      // A changed rate starts a new window; an unchanged one keeps counting the claims of the open window.
      after = conn
        .stmt(
          `INSERT INTO work_limits (key, max_in_flight, rate_count, rate_period_ms, created_at, updated_at)
           VALUES (?, ?, ?, ?, ?, ?)
           ON CONFLICT (key) DO UPDATE SET max_in_flight = excluded.max_in_flight,
             window_start = CASE WHEN rate_count IS excluded.rate_count AND rate_period_ms IS excluded.rate_period_ms
               THEN window_start ELSE 0 END,
             window_count = CASE WHEN rate_count IS excluded.rate_count AND rate_period_ms IS excluded.rate_period_ms
               THEN window_count ELSE 0 END,
             rate_count = excluded.rate_count, rate_period_ms = excluded.rate_period_ms,
             updated_at = excluded.updated_at
           RETURNING ${LIMIT_COLS}`,
        )
        .get(
          q.key,
          q.limit.max_in_flight,
          rate?.count ?? null,
          rate?.period_ms ?? null,
          q.now,
          q.now,
        ) as LimitRow;
    } else {
      if (!before) throw noLimit(q.key);
      conn.stmt('DELETE FROM work_limits WHERE key = ?').run(q.key);
    }
    writeEvents(conn, [limitEvent(q)]);
    return { before, after };
  });
}

export async function listLimits(conn: SqliteConnection): Promise<LimitRow[]> {
  return conn.read(() => conn.stmt(`SELECT ${LIMIT_COLS} FROM work_limits ORDER BY key`).all() as LimitRow[]);
}

/** The LimitBackend of one SQLite store: the operations above, on its connection. */
export function createLimitBackend(conn: SqliteConnection): LimitBackend {
  return {
    change: (q) => changeLimit(conn, q),
    list: () => listLimits(conn),
  };
}
