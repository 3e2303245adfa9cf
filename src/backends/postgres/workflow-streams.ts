// Workflow stream SQL for PostgreSQL (the byte streams of a Workflow SDK World, workflow_stream_chunks, per
// instance): an append or close takes the stream's transaction-level advisory lock, then inserts at one past
// the stream's last row in its next statement (pipelined with COMMIT), whose snapshot sees every write
// committed before the lock was granted. SQLite's workflow-streams.ts has the same names.
import type { StreamChunkRow, StreamState, WorkflowStreamBackend } from '../../core/backend.js';
import { chunkBytes, streamClosed, streamStateOf } from '../shared.js';
import type { PostgresConnection, Tx } from './connection.js';
import type { AppendHint } from './events.js';

/**
 * Takes the advisory lock of stream `name` of this store's instance until the transaction ends. The key is
 * a 64-bit hash of the schema, instance and name: two streams that share one only wait for each other.
 */
async function lockStream(tx: Tx, conn: PostgresConnection, name: string): Promise<void> {
  await tx.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [
    JSON.stringify(['workflow_stream', conn.schema, conn.instance, name]),
  ]);
}

/** The CTE `last`: the stream's last row (its newest chunk, or its close), if any. */
function lastRowCte(conn: PostgresConnection): string {
  return `last AS (
    SELECT chunk_index, eof FROM ${conn.names.workflow_stream_chunks}
    WHERE instance = $1 AND name = $2 ORDER BY chunk_index DESC LIMIT 1)`;
}

/** Bytes as pg binds a bytea: a Buffer over the same memory (no copy). */
function blob(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

type WriteRow = {
  last_index: number | null;
  last_eof: boolean | null;
  wrote: number | null;
  head: number | null;
};

// The operations of WorkflowStreamBackend (src/core/workflow/backend.ts).

export async function appendStreamChunks(
  conn: PostgresConnection,
  hint: AppendHint | null,
  q: { run_id: string; name: string; chunks: Uint8Array[]; now: number },
): Promise<StreamState> {
  const t = conn.names;
  const row = await conn.transaction(async (tx) => {
    await lockStream(tx, conn, q.name);
    const res = await tx.queryAndCommit<WriteRow>(
      `WITH ${lastRowCte(conn)},
       ins AS (
         INSERT INTO ${t.workflow_stream_chunks} (instance, name, chunk_index, run_id, data, eof, created_at)
         SELECT $1, $2, COALESCE((SELECT chunk_index FROM last), -1) + c.n, $3, c.data, false, $5
         FROM unnest($4::bytea[]) WITH ORDINALITY AS c(data, n)
         WHERE NOT COALESCE((SELECT eof FROM last), false)
         RETURNING chunk_index)
       SELECT (SELECT chunk_index FROM last) AS last_index, (SELECT eof FROM last) AS last_eof,
         (SELECT max(chunk_index) FROM ins) AS wrote,
         (SELECT position FROM ${t.event_heads} WHERE instance = $1) AS head`,
      [conn.instance, q.name, q.run_id, q.chunks.map(blob), q.now],
    );
    return res.rows[0] as WriteRow;
  });
  // Refused after the fact: the statement inserted nothing into a closed stream, and committed nothing.
  if (row.last_eof === true) throw streamClosed(q.name);
  if (row.wrote !== null) hint?.appended(Number(row.head ?? 0));
  const tail = row.wrote ?? row.last_index;
  return streamStateOf(tail === null ? null : { chunk_index: tail, eof: false });
}

export async function closeStream(
  conn: PostgresConnection,
  hint: AppendHint | null,
  q: { run_id: string; name: string; now: number },
): Promise<StreamState> {
  const t = conn.names;
  const row = await conn.transaction(async (tx) => {
    await lockStream(tx, conn, q.name);
    const res = await tx.queryAndCommit<WriteRow>(
      `WITH ${lastRowCte(conn)},
       ins AS (
         INSERT INTO ${t.workflow_stream_chunks} (instance, name, chunk_index, run_id, data, eof, created_at)
         SELECT $1, $2, COALESCE((SELECT chunk_index FROM last), -1) + 1, $3, ''::bytea, true, $4
         WHERE NOT COALESCE((SELECT eof FROM last), false)
         RETURNING chunk_index)
       SELECT (SELECT chunk_index FROM last) AS last_index, (SELECT eof FROM last) AS last_eof,
         (SELECT chunk_index FROM ins) AS wrote,
         (SELECT position FROM ${t.event_heads} WHERE instance = $1) AS head`,
      [conn.instance, q.name, q.run_id, q.now],
    );
    return res.rows[0] as WriteRow;
  });
  if (row.wrote !== null) {
    hint?.appended(Number(row.head ?? 0));
    return streamStateOf({ chunk_index: row.wrote, eof: true });
  }
  // Closed already: as it was.
  return streamStateOf({ chunk_index: row.last_index as number, eof: true });
}

export async function readStreamChunks(
  conn: PostgresConnection,
  q: { name: string; from: number; limit: number },
): Promise<StreamChunkRow[]> {
  const res = await conn.query<{ chunk_index: number; data: Uint8Array; eof: boolean }>(
    `SELECT chunk_index, data, eof FROM ${conn.names.workflow_stream_chunks}
     WHERE instance = $1 AND name = $2 AND chunk_index >= $3 ORDER BY chunk_index LIMIT $4`,
    [conn.instance, q.name, q.from, q.limit],
  );
  return res.rows.map((r) => ({ index: r.chunk_index, data: chunkBytes(r.data), eof: r.eof }));
}

export async function streamInfo(conn: PostgresConnection, name: string): Promise<StreamState> {
  const res = await conn.query<{ chunk_index: number; eof: boolean }>(
    `SELECT chunk_index, eof FROM ${conn.names.workflow_stream_chunks}
     WHERE instance = $1 AND name = $2 ORDER BY chunk_index DESC LIMIT 1`,
    [conn.instance, name],
  );
  return streamStateOf(res.rows[0] ?? null);
}

export async function listRunStreams(conn: PostgresConnection, runId: string): Promise<string[]> {
  const res = await conn.query<{ name: string }>(
    `SELECT name FROM ${conn.names.workflow_stream_chunks}
     WHERE instance = $1 AND run_id = $2 AND chunk_index = 0 ORDER BY name`,
    [conn.instance, runId],
  );
  return res.rows.map((r) => r.name);
}

export async function listRunStreamStates(
  conn: PostgresConnection,
  q: { run_id: string; limit: number },
): Promise<Array<StreamState & { name: string }>> {
  // Each stream of the run by its row at index 0 (the partial index), then its last row by the primary key.
  const t = conn.names.workflow_stream_chunks;
  const res = await conn.query<{ name: string; chunk_index: number; eof: boolean }>(
    `SELECT s.name, l.chunk_index, l.eof FROM ${t} AS s
     CROSS JOIN LATERAL (SELECT chunk_index, eof FROM ${t} AS m WHERE m.instance = s.instance AND m.name = s.name
       ORDER BY chunk_index DESC LIMIT 1) AS l
     WHERE s.instance = $1 AND s.run_id = $2 AND s.chunk_index = 0 ORDER BY s.name LIMIT $3`,
    [conn.instance, q.run_id, q.limit],
  );
  return res.rows.map((r) => ({ name: r.name, ...streamStateOf(r) }));
}

/** The WorkflowStreamBackend of one PostgreSQL store: the operations above, on its connection and NOTIFY hint. */
export function createWorkflowStreamBackend(
  conn: PostgresConnection,
  hint: AppendHint | null,
): WorkflowStreamBackend {
  return {
    append: (q) => appendStreamChunks(conn, hint, q),
    close: (q) => closeStream(conn, hint, q),
    read: (q) => readStreamChunks(conn, q),
    info: (name) => streamInfo(conn, name),
    names: (runId) => listRunStreams(conn, runId),
    states: (q) => listRunStreamStates(conn, q),
  };
}
