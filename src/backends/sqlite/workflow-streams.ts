// Workflow stream SQL for SQLite (the byte streams of a Workflow SDK World, workflow_stream_chunks): appends
// and closes in one BEGIN IMMEDIATE transaction each, which serializes every writer of the file, so the next
// index is one past the stream's last row as the transaction reads it. PostgreSQL's workflow-streams.ts has
// the same names.
import type { StreamChunkRow, StreamState, WorkflowStreamBackend } from '../../core/backend.js';
import { chunkBytes, streamClosed, streamStateOf } from '../shared.js';
import type { SqliteConnection } from './connection.js';

type LastRow = { chunk_index: number; eof: boolean };

/** The last row of stream `name` (its newest chunk, or its close), or null when it has none. */
function lastRow(conn: SqliteConnection, name: string): LastRow | null {
  const row = conn
    .stmt(
      'SELECT chunk_index, eof FROM workflow_stream_chunks WHERE name = ? ORDER BY chunk_index DESC LIMIT 1',
    )
    .get(name) as { chunk_index: number; eof: number } | undefined;
  return row ? { chunk_index: row.chunk_index, eof: row.eof === 1 } : null;
}

/** Bytes as the driver binds a BLOB: a Buffer over the same memory (no copy). */
function blob(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/**
 * Wakes this process's listeners of the file (a live reader of a stream among them) after a stream write
 * committed. Hints may come for any write, so the hint names the log's head as it is; other processes'
 * listeners are not woken (their watch hints only when the log grew) and find the chunks by polling.
 */
function hintWrite(conn: SqliteConnection): void {
  if (conn.hints.listeners === 0) return;
  const head = conn.read(
    () =>
      conn.stmt('SELECT position FROM events ORDER BY position DESC LIMIT 1').get() as
        | { position: number }
        | undefined,
  );
  conn.hints.appended(head?.position ?? 0);
}

const INSERT = `INSERT INTO workflow_stream_chunks (name, chunk_index, run_id, data, eof, created_at)
  VALUES (?, ?, ?, ?, ?, ?)`;

// The operations of WorkflowStreamBackend (src/core/workflow/backend.ts).

export async function appendStreamChunks(
  conn: SqliteConnection,
  q: { run_id: string; name: string; chunks: Uint8Array[]; now: number },
): Promise<StreamState> {
  const state = conn.write(() => {
    const last = lastRow(conn, q.name);
    if (last?.eof) throw streamClosed(q.name);
    let next = last === null ? 0 : last.chunk_index + 1;
    for (const chunk of q.chunks) conn.stmt(INSERT).run(q.name, next++, q.run_id, blob(chunk), 0, q.now);
    return { tail: next - 1, done: false };
  });
  hintWrite(conn);
  return state;
}

export async function closeStream(
  conn: SqliteConnection,
  q: { run_id: string; name: string; now: number },
): Promise<StreamState> {
  let wrote = false;
  const state = conn.write(() => {
    const last = lastRow(conn, q.name);
    if (last?.eof) return streamStateOf(last);
    const index = last === null ? 0 : last.chunk_index + 1;
    conn.stmt(INSERT).run(q.name, index, q.run_id, Buffer.alloc(0), 1, q.now);
    wrote = true;
    return streamStateOf({ chunk_index: index, eof: true });
  });
  if (wrote) hintWrite(conn);
  return state;
}

export async function readStreamChunks(
  conn: SqliteConnection,
  q: { name: string; from: number; limit: number },
): Promise<StreamChunkRow[]> {
  const rows = conn.read(
    () =>
      conn
        .stmt(
          `SELECT chunk_index, data, eof FROM workflow_stream_chunks
           WHERE name = ? AND chunk_index >= ? ORDER BY chunk_index LIMIT ?`,
        )
        .all(q.name, q.from, q.limit) as Array<{ chunk_index: number; data: Uint8Array; eof: number }>,
  );
  return rows.map((r) => ({ index: r.chunk_index, data: chunkBytes(r.data), eof: r.eof === 1 }));
}

export async function streamInfo(conn: SqliteConnection, name: string): Promise<StreamState> {
  return streamStateOf(conn.read(() => lastRow(conn, name)));
}

export async function listRunStreams(conn: SqliteConnection, runId: string): Promise<string[]> {
  const rows = conn.read(
    () =>
      conn
        .stmt('SELECT name FROM workflow_stream_chunks WHERE run_id = ? AND chunk_index = 0 ORDER BY name')
        .all(runId) as Array<{ name: string }>,
  );
  return rows.map((r) => r.name);
}

export async function listRunStreamStates(
  conn: SqliteConnection,
  q: { run_id: string; limit: number },
): Promise<Array<StreamState & { name: string }>> {
  // Each stream of the run by its row at index 0, then its last row by the primary key: one seek per stream.
  const rows = conn.read(
    () =>
      conn
        .stmt(
          `SELECT s.name AS name, l.chunk_index AS chunk_index, l.eof AS eof
           FROM workflow_stream_chunks AS s
           JOIN workflow_stream_chunks AS l ON l.name = s.name AND l.chunk_index =
             (SELECT MAX(m.chunk_index) FROM workflow_stream_chunks AS m WHERE m.name = s.name)
           WHERE s.run_id = ? AND s.chunk_index = 0 ORDER BY s.name LIMIT ?`,
        )
        .all(q.run_id, q.limit) as Array<{ name: string; chunk_index: number; eof: number }>,
  );
  return rows.map((r) => ({
    name: r.name,
    ...streamStateOf({ chunk_index: r.chunk_index, eof: r.eof === 1 }),
  }));
}

/** The WorkflowStreamBackend of one SQLite store: the operations above, on its connection. */
export function createWorkflowStreamBackend(conn: SqliteConnection): WorkflowStreamBackend {
  return {
    append: (q) => appendStreamChunks(conn, q),
    close: (q) => closeStream(conn, q),
    read: (q) => readStreamChunks(conn, q),
    info: (name) => streamInfo(conn, name),
    names: (runId) => listRunStreams(conn, runId),
    states: (q) => listRunStreamStates(conn, q),
  };
}
