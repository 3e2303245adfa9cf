// Portable dump and load for SQLite: every row verbatim (event data text and hashes untouched), read in
// one snapshot.
import type {
  CounterRecord,
  DocumentRowDump,
  DumpOptions,
  DumpRecord,
  HistoryRowDump,
  LimitRowDump,
  WorkItemRowDump,
} from '../../core/backend.js';
import { InvalidInputError } from '../../errors.js';
import { DUMP_COLUMNS, dumpRecords, WORKFLOW_DUMP } from '../shared.js';
import { mapSqliteError, type SqliteConnection } from './connection.js';
import { openSqlite, type SqliteDatabase, type SqliteStatement } from './driver.js';

const parse = <T>(s: string | null): T | null => (s === null ? null : (JSON.parse(s) as T));

type Raw = Record<string, unknown>;

function itemRow(r: Raw): WorkItemRowDump {
  return {
    ...(r as unknown as WorkItemRowDump),
    payload: JSON.parse(r.payload as string),
    notes: JSON.parse(r.notes as string),
    result: JSON.parse(r.result as string),
    blocked_by: JSON.parse(r.blocked_by as string),
  };
}

/**
 * Every row, read on a read-only connection of its own inside one read transaction: a consistent snapshot
 * (WAL) however long the reader takes, while this connection keeps serving writes. With `counters`, the
 * rows of work_item_blockers follow (the log is its own head here: no head or stream rows).
 */
export async function* dumpRows(
  conn: SqliteConnection,
  options: DumpOptions = {},
): AsyncIterable<DumpRecord | CounterRecord> {
  // A closed store refuses like every other call (STORAGE_UNAVAILABLE, closed), before a reader opens.
  conn.stmt('SELECT 1');
  let db: SqliteDatabase;
  try {
    db = (await openSqlite(conn.path, { readonly: true, busyTimeoutMs: 15_000 })).db;
  } catch (err) {
    throw mapSqliteError(err, conn.path);
  }
  const statements = new Map<string, SqliteStatement>();
  /** The rows of `sql`, as the caller types them (Raw unless the context says what they are). */
  const all = <R = Raw>(sql: string, ...params: unknown[]): R[] => {
    try {
      let st = statements.get(sql);
      if (!st) {
        st = db.prepare(sql);
        statements.set(sql, st);
      }
      return st.all(...params) as R[];
    } catch (err) {
      throw mapSqliteError(err, conn.path);
    }
  };
  try {
    db.exec('BEGIN');
    yield* dumpRecords(
      {
        items: (after, limit) =>
          all('SELECT * FROM work_items WHERE id > ? ORDER BY id LIMIT ?', after, limit).map(itemRow),
        events: (after, limit) =>
          all('SELECT * FROM events WHERE position > ? ORDER BY position LIMIT ?', after, limit),
        documents: () =>
          all('SELECT * FROM documents ORDER BY kind, id').map((d) => ({
            ...(d as unknown as DocumentRowDump),
            body: JSON.parse(d.body as string),
            forked_from: parse(d.forked_from as string | null),
          })),
        history: (doc) =>
          all('SELECT * FROM document_history WHERE kind = ? AND id = ? ORDER BY seq', doc.kind, doc.id).map(
            (h) => ({
              ...(h as unknown as HistoryRowDump),
              noop: h.noop === 1,
              body: parse(h.body as string | null),
              provenance: parse(h.provenance as string | null),
              override: parse(h.override as string | null),
            }),
          ),
        limits: () => all<LimitRowDump>(`SELECT ${LIMIT_COLS.join(', ')} FROM work_limits ORDER BY key`),
        counters: () => {
          const edges = all<{ blocker: string; item: string }>(
            'SELECT blocker, item FROM work_item_blockers ORDER BY blocker, item',
          );
          return [{ t: 'blocker_edges', row: { edges } }];
        },
        workflow: (table, after, limit) => {
          const keys = WORKFLOW_DUMP.find((w) => w.table === table)!.keys.join(', ');
          const from = after === null ? '' : `WHERE (${keys}) > (${after.map(() => '?').join(', ')})`;
          return all(
            `SELECT ${DUMP_COLUMNS[table].join(', ')} FROM ${table} ${from} ORDER BY ${keys} LIMIT ?`,
            ...(after ?? []),
            limit,
          );
        },
      },
      options,
    );
  } finally {
    statements.clear();
    try {
      db.exec('COMMIT');
    } catch {
      // A read transaction ends with the connection anyway.
    }
    db.close();
  }
}

const ITEM_COLS = DUMP_COLUMNS.work_items;
const EVENT_COLS = DUMP_COLUMNS.events;
const DOC_COLS = DUMP_COLUMNS.documents;
const HISTORY_COLS = DUMP_COLUMNS.document_history;
const LIMIT_COLS = DUMP_COLUMNS.work_limits;
const CHUNK_COLS = DUMP_COLUMNS.workflow_stream_chunks;
const WORKFLOW_TABLE = {
  workflow_run: 'workflow_runs',
  workflow_step: 'workflow_steps',
  workflow_hook: 'workflow_hooks',
  workflow_wait: 'workflow_waits',
} as const;

const insertSql = (table: string, cols: readonly string[]) =>
  `INSERT INTO ${table} (${cols.join(', ')}) VALUES (${cols.map(() => '?').join(', ')})`;
const json = (v: unknown) => (v === null || v === undefined ? null : JSON.stringify(v));

export function loadRows(conn: SqliteConnection, records: DumpRecord[]): void {
  conn.write(() => {
    const counts = conn
      .stmt(
        `SELECT (SELECT COUNT(*) FROM work_items) + (SELECT COUNT(*) FROM events) + (SELECT COUNT(*) FROM documents)
           + (SELECT COUNT(*) FROM work_limits) + (SELECT COUNT(*) FROM workflow_runs)
           + (SELECT COUNT(*) FROM workflow_steps) + (SELECT COUNT(*) FROM workflow_hooks)
           + (SELECT COUNT(*) FROM workflow_waits) + (SELECT COUNT(*) FROM workflow_stream_chunks) AS n`,
      )
      .get() as { n: number };
    if (counts.n > 0)
      throw new InvalidInputError('the target instance is not empty: import only into a new instance');
    for (const r of records) {
      switch (r.t) {
        case 'work_item': {
          const w = r.row;
          conn.stmt(insertSql('work_items', ITEM_COLS)).run(
            ...ITEM_COLS.map((c) =>
              c === 'payload' || c === 'notes' || c === 'result' || c === 'blocked_by'
                ? JSON.stringify(w[c] ?? null)
                : // A dump written before the blocker-failure policy existed: every item waited.
                  c === 'on_blocker_failure'
                  ? (w[c] ?? 'wait')
                  : c === 'cascaded_from' || c === 'concurrency_key' || c === 'traceparent'
                    ? (w[c] ?? null)
                    : w[c],
            ),
          );
          break;
        }
        case 'event':
          conn.stmt(insertSql('events', EVENT_COLS)).run(...EVENT_COLS.map((c) => r.row[c]));
          conn.noteAppended(r.row.position);
          break;
        case 'document': {
          const d = r.row;
          conn
            .stmt(insertSql('documents', DOC_COLS))
            .run(...DOC_COLS.map((c) => (c === 'body' || c === 'forked_from' ? json(d[c]) : d[c])));
          break;
        }
        case 'limit':
          conn
            .stmt(insertSql('work_limits', LIMIT_COLS))
            .run(...LIMIT_COLS.map((c) => r.row[c] ?? (c.startsWith('window_') ? 0 : null)));
          break;
        case 'workflow_run':
        case 'workflow_step':
        case 'workflow_hook':
        case 'workflow_wait': {
          const table = WORKFLOW_TABLE[r.t];
          const row = r.row as unknown as Record<string, unknown>;
          conn.stmt(insertSql(table, DUMP_COLUMNS[table])).run(...DUMP_COLUMNS[table].map((c) => row[c]));
          break;
        }
        case 'workflow_chunk': {
          const c = r.row;
          conn
            .stmt(insertSql('workflow_stream_chunks', CHUNK_COLS))
            .run(c.name, c.chunk_index, c.run_id, Buffer.from(c.data, 'base64'), c.eof ? 1 : 0, c.created_at);
          break;
        }
        case 'history': {
          const h = r.row;
          conn
            .stmt(insertSql('document_history', HISTORY_COLS))
            .run(
              ...HISTORY_COLS.map((c) =>
                c === 'noop'
                  ? h.noop
                    ? 1
                    : 0
                  : c === 'body' || c === 'provenance' || c === 'override'
                    ? json(h[c])
                    : h[c],
              ),
            );
          break;
        }
      }
    }
  });
}
