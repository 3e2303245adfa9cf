// Portable dump and load for PostgreSQL: every row of one instance verbatim (event data text and hashes
// untouched) from one snapshot, loaded in one transaction with the event head, stream counters and history
// seqs rebuilt.
import type { CounterRecord, DumpOptions, DumpRecord } from '../../core/backend.js';
import { GENESIS_HASH } from '../../core/hash.js';
import { InvalidInputError, storeClosedError } from '../../errors.js';
import { DUMP_COLUMNS, dumpRecords, dumpTables, WORKFLOW_DUMP } from '../shared.js';
import { type PostgresConnection, recordset, type Tx } from './connection.js';
import type { PgClient } from './driver.js';

/** Rows, and JSON characters, per INSERT statement when loading (PostgreSQL caps a value at 1 GB). */
const CHUNK_ROWS = 2000;
const CHUNK_CHARS = 32 * 1024 * 1024;

const ITEM_COLS = DUMP_COLUMNS.work_items.join(', ');
/** Event data as the text it was hashed with (json keeps it byte for byte). */
const EVENT_COLS = DUMP_COLUMNS.events.map((c) => (c === 'data' ? 'data::text AS data' : c)).join(', ');
const DOC_COLS = DUMP_COLUMNS.documents.join(', ');
const HISTORY_COLS = DUMP_COLUMNS.document_history.join(', ');
const LIMIT_COLS = DUMP_COLUMNS.work_limits.join(', ');

/**
 * Every row of the instance, read on one connection inside a REPEATABLE READ READ ONLY transaction: one
 * consistent snapshot, so rows and events agree even while other writers commit. With `counters`, the
 * instance's event head and stream counters follow, from the same snapshot.
 */
export async function* dumpRows(
  conn: PostgresConnection,
  options: DumpOptions = {},
): AsyncIterable<DumpRecord | CounterRecord> {
  const t = conn.names;
  if (conn.closed) throw storeClosedError();
  let client: PgClient;
  try {
    client = await conn.pool.connect();
  } catch (err) {
    throw conn.mapError(err);
  }
  let broken: unknown = null;
  const onError = (err: Error) => {
    broken = err;
  };
  client.on('error', onError);
  const query = async <R>(sql: string, params: unknown[]): Promise<R[]> => {
    try {
      return (await client.query<R>(conn.statement(sql, params))).rows;
    } catch (err) {
      broken = broken ?? err;
      throw conn.mapError(err);
    }
  };
  try {
    try {
      await client.query(conn.shared.begin('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY'));
    } catch (err) {
      broken = err;
      throw conn.mapError(err);
    }
    yield* dumpRecords(
      {
        items: (after, limit) =>
          query(
            `SELECT ${ITEM_COLS} FROM ${t.work_items} WHERE instance = $1 AND id > $2 ORDER BY id LIMIT $3`,
            [conn.instance, after, limit],
          ),
        events: (after, limit) =>
          query(
            `SELECT ${EVENT_COLS} FROM ${t.events} WHERE instance = $1 AND position > $2 ORDER BY position LIMIT $3`,
            [conn.instance, after, limit],
          ),
        documents: () =>
          query(`SELECT ${DOC_COLS} FROM ${t.documents} WHERE instance = $1 ORDER BY kind, id`, [
            conn.instance,
          ]),
        history: (doc) =>
          query(
            `SELECT ${HISTORY_COLS} FROM ${t.document_history} WHERE instance = $1 AND kind = $2 AND id = $3 ORDER BY seq`,
            [conn.instance, doc.kind, doc.id],
          ),
        limits: () =>
          query(`SELECT ${LIMIT_COLS} FROM ${t.work_limits} WHERE instance = $1 ORDER BY key`, [
            conn.instance,
          ]),
        counters: async () => {
          const heads = await query<{ position: number; hash: string }>(
            `SELECT position, hash FROM ${t.event_heads} WHERE instance = $1`,
            [conn.instance],
          );
          const streams = await query<{ stream: string; seq: number }>(
            `SELECT stream, seq FROM ${t.event_streams} WHERE instance = $1 ORDER BY stream`,
            [conn.instance],
          );
          const edges = await query<{ blocker: string; item: string }>(
            `SELECT blocker, item FROM ${t.work_item_blockers} WHERE instance = $1 ORDER BY blocker, item`,
            [conn.instance],
          );
          return [
            ...heads.map((row) => ({ t: 'event_head' as const, row })),
            ...streams.map((row) => ({ t: 'event_stream' as const, row })),
            { t: 'blocker_edges', row: { edges } },
          ];
        },
        workflow: (table, after, limit) => {
          const keys = WORKFLOW_DUMP.find((w) => w.table === table)!.keys.join(', ');
          const from =
            after === null ? '' : `AND (${keys}) > (${after.map((_, i) => `$${i + 3}`).join(', ')})`;
          return query(
            `SELECT ${DUMP_COLUMNS[table].join(', ')} FROM ${t[table]} WHERE instance = $1 ${from}
             ORDER BY ${keys} LIMIT $2`,
            [conn.instance, limit, ...(after ?? [])],
          );
        },
      },
      options,
    );
  } finally {
    if (broken === null) {
      try {
        await client.query('COMMIT');
      } catch (err) {
        broken = err;
      }
    }
    client.removeListener('error', onError);
    // A connection in an unknown state is destroyed, never handed to the next caller.
    client.release(broken !== null ? true : undefined);
  }
}

const text = (v: unknown) => (v === null || v === undefined ? null : JSON.stringify(v));

async function insertChunks<T>(
  tx: Tx,
  conn: PostgresConnection,
  rows: T[],
  sql: string,
  encode: (row: T) => Record<string, unknown>,
): Promise<void> {
  let batch: string[] = [];
  let chars = 0;
  const flush = async () => {
    if (batch.length === 0) return;
    await tx.query(sql, [conn.instance, `[${batch.join(',')}]`]);
    batch = [];
    chars = 0;
  };
  for (const row of rows) {
    const json = JSON.stringify(encode(row));
    if (batch.length >= CHUNK_ROWS || (batch.length > 0 && chars + json.length > CHUNK_CHARS)) await flush();
    batch.push(json);
    chars += json.length;
  }
  await flush();
}

/** Loads dump records verbatim into an empty instance, in one transaction. */
export async function loadRows(conn: PostgresConnection, records: DumpRecord[]): Promise<void> {
  const t = conn.names;
  const { items, events, docs, history, limits, runs, steps, hooks, waits, chunks } = dumpTables(records);
  await conn.transaction(async (tx) => {
    // The event head first: writers of this instance wait until the load commits (or rolls back).
    await tx.query(
      `INSERT INTO ${t.event_heads} AS h (instance, position, hash) VALUES ($1, 0, '${GENESIS_HASH}')
       ON CONFLICT (instance) DO UPDATE SET position = h.position`,
      [conn.instance],
    );
    const used = await tx.query<{ n: number }>(
      `SELECT (SELECT count(*) FROM ${t.work_items} WHERE instance = $1)
            + (SELECT count(*) FROM ${t.events} WHERE instance = $1)
            + (SELECT count(*) FROM ${t.documents} WHERE instance = $1)
            + (SELECT count(*) FROM ${t.work_limits} WHERE instance = $1)
            + (SELECT count(*) FROM ${t.workflow_runs} WHERE instance = $1)
            + (SELECT count(*) FROM ${t.workflow_steps} WHERE instance = $1)
            + (SELECT count(*) FROM ${t.workflow_hooks} WHERE instance = $1)
            + (SELECT count(*) FROM ${t.workflow_waits} WHERE instance = $1)
            + (SELECT count(*) FROM ${t.workflow_stream_chunks} WHERE instance = $1) AS n`,
      [conn.instance],
    );
    if ((used.rows[0]?.n ?? 0) > 0) {
      throw new InvalidInputError('the target instance is not empty: import only into a new instance');
    }
    await insertChunks(
      tx,
      conn,
      items,
      `INSERT INTO ${t.work_items} (instance, ${ITEM_COLS})
       SELECT $1, id, title, kind, status, priority, payload::jsonb, notes::jsonb, result::jsonb, error, attempts,
         max_attempts, lease_owner, lease_expires_at, claimed_at, blocked_by, not_before, idempotency_key,
         created_at, updated_at, resolved_at, on_blocker_failure, cascaded_from, concurrency_key, traceparent
       FROM ${recordset(
         '$2',
         `id text, title text, kind text, status text, priority int,
         payload text, notes text, result text, error text, attempts int, max_attempts int, lease_owner text,
         lease_expires_at bigint, claimed_at bigint, blocked_by text[], not_before bigint, idempotency_key text,
         created_at bigint, updated_at bigint, resolved_at bigint, on_blocker_failure text, cascaded_from text,
         concurrency_key text, traceparent text`,
       )}`,
      (w) => ({
        ...w,
        // A dump written before the blocker-failure policy existed: every item waited.
        on_blocker_failure: w.on_blocker_failure ?? 'wait',
        cascaded_from: w.cascaded_from ?? null,
        // A dump written before concurrency keys existed: no item had one.
        concurrency_key: w.concurrency_key ?? null,
        // A dump written before items carried a traceparent: none did.
        traceparent: w.traceparent ?? null,
        payload: JSON.stringify(w.payload ?? null),
        notes: JSON.stringify(w.notes ?? {}),
        result: JSON.stringify(w.result ?? null),
      }),
    );
    // data goes in as the exact text it was hashed with (json, unlike jsonb, keeps it byte for byte).
    await insertChunks(
      tx,
      conn,
      events,
      `INSERT INTO ${t.events} (instance, position, stream, stream_seq, type, data, actor, correlation_id,
         causation_id, work_item_id, created_at, prev_hash, hash)
       SELECT $1, position, stream, stream_seq, type, data::json, actor, correlation_id, causation_id,
         work_item_id, created_at, prev_hash, hash
       FROM ${recordset(
         '$2',
         `position bigint, stream text, stream_seq bigint, type text,
         data text, actor text, correlation_id text, causation_id text, work_item_id text, created_at bigint,
         prev_hash text, hash text`,
       )}`,
      (e) => ({ ...e }),
    );
    await insertChunks(
      tx,
      conn,
      docs,
      `INSERT INTO ${t.documents} (instance, ${DOC_COLS}, last_seq)
       SELECT $1, kind, id, version, body::jsonb, content_hash, forked_from::jsonb, created_at, updated_at, 0
       FROM ${recordset(
         '$2',
         `kind text, id text, version int, body text, content_hash text,
         forked_from text, created_at bigint, updated_at bigint`,
       )}`,
      (d) => ({ ...d, body: text(d.body), forked_from: text(d.forked_from) }),
    );
    await insertChunks(
      tx,
      conn,
      history,
      `INSERT INTO ${t.document_history} (instance, ${HISTORY_COLS})
       SELECT $1, kind, id, seq, version, parent_version, noop, body::jsonb, content_hash, actor, actor_kind,
         provenance::jsonb, write_id, request_hash, reason, override::jsonb, created_at
       FROM ${recordset(
         '$2',
         `kind text, id text, seq int, version int, parent_version int,
         noop boolean, body text, content_hash text, actor text, actor_kind text, provenance text, write_id text,
         request_hash text, reason text, override text, created_at bigint`,
       )}`,
      (h) => ({ ...h, body: text(h.body), provenance: text(h.provenance), override: text(h.override) }),
    );
    await insertChunks(
      tx,
      conn,
      limits,
      `INSERT INTO ${t.work_limits} (instance, ${LIMIT_COLS})
       SELECT $1, ${LIMIT_COLS}
       FROM ${recordset(
         '$2',
         `key text, max_in_flight int, rate_count int, rate_period_ms bigint, window_start bigint,
         window_count int, created_at bigint, updated_at bigint`,
       )}`,
      (l) => ({ ...l, window_start: l.window_start ?? 0, window_count: l.window_count ?? 0 }),
    );
    // The Workflow World's rows, verbatim; stream chunks with their bytes from base64.
    await insertChunks(
      tx,
      conn,
      runs,
      `INSERT INTO ${t.workflow_runs} (instance, ${DUMP_COLUMNS.workflow_runs.join(', ')})
       SELECT $1, ${DUMP_COLUMNS.workflow_runs.join(', ')}
       FROM ${recordset('$2', 'run_id text, workflow_name text, status text, created_at bigint, updated_at bigint, body text')}`,
      (r) => ({ ...r }),
    );
    await insertChunks(
      tx,
      conn,
      steps,
      `INSERT INTO ${t.workflow_steps} (instance, ${DUMP_COLUMNS.workflow_steps.join(', ')})
       SELECT $1, ${DUMP_COLUMNS.workflow_steps.join(', ')}
       FROM ${recordset('$2', 'run_id text, step_id text, status text, created_at bigint, updated_at bigint, body text')}`,
      (r) => ({ ...r }),
    );
    await insertChunks(
      tx,
      conn,
      hooks,
      `INSERT INTO ${t.workflow_hooks} (instance, ${DUMP_COLUMNS.workflow_hooks.join(', ')})
       SELECT $1, ${DUMP_COLUMNS.workflow_hooks.join(', ')}
       FROM ${recordset('$2', 'hook_id text, run_id text, token text, created_at bigint, body text')}`,
      (r) => ({ ...r }),
    );
    await insertChunks(
      tx,
      conn,
      waits,
      `INSERT INTO ${t.workflow_waits} (instance, ${DUMP_COLUMNS.workflow_waits.join(', ')})
       SELECT $1, ${DUMP_COLUMNS.workflow_waits.join(', ')}
       FROM ${recordset('$2', 'run_id text, correlation_id text, status text, created_at bigint, updated_at bigint, body text')}`,
      (r) => ({ ...r }),
    );
    await insertChunks(
      tx,
      conn,
      chunks,
      `INSERT INTO ${t.workflow_stream_chunks} (instance, name, chunk_index, run_id, data, eof, created_at)
       SELECT $1, name, chunk_index, run_id, decode(data, 'base64'), eof, created_at
       FROM ${recordset('$2', 'name text, chunk_index int, run_id text, data text, eof boolean, created_at bigint')}`,
      (c) => ({ ...c }),
    );
    // What the writers keep next to the rows: history seqs, stream counters and the chain's head.
    await tx.query(
      `UPDATE ${t.documents} AS d SET last_seq = COALESCE((
         SELECT max(h.seq) FROM ${t.document_history} AS h
         WHERE h.instance = $1 AND h.kind = d.kind AND h.id = d.id), 0)
       WHERE d.instance = $1`,
      [conn.instance],
    );
    await tx.query(
      `INSERT INTO ${t.event_streams} (instance, stream, seq)
       SELECT $1, stream, max(stream_seq) FROM ${t.events} WHERE instance = $1 GROUP BY stream`,
      [conn.instance],
    );
    const last = events[events.length - 1];
    await tx.queryAndCommit(`UPDATE ${t.event_heads} SET position = $2, hash = $3 WHERE instance = $1`, [
      conn.instance,
      last?.position ?? 0,
      last?.hash ?? GENESIS_HASH,
    ]);
  });
}
