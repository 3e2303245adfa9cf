// Versioned-document SQL for SQLite: the compare-and-swap commit (one conditional statement) with its
// history entry, events and effects in one BEGIN IMMEDIATE transaction.
import type { DocumentBackend, DocumentWrite } from '../../core/backend.js';
import { documentFromRow, historyFromRow } from '../../core/rows.js';
import type { ActorKind, DocumentRecord, HistoryEntry, JsonObject } from '../../core/types.js';
import { versionConflict } from '../../errors.js';
import type { SqliteConnection } from './connection.js';
import { writeEvents } from './events.js';
import { enqueueRows } from './work/enqueue.js';
import { setStatusRow } from './work/status.js';

interface DocRow {
  kind: string;
  id: string;
  version: number;
  body: string;
  content_hash: string;
  forked_from: string | null;
  created_at: number;
  updated_at: number;
}

interface HistoryRow {
  seq: number;
  version: number;
  parent_version: number;
  noop: number;
  body: string | null;
  content_hash: string;
  actor: string;
  actor_kind: ActorKind;
  provenance: string | null;
  write_id: string | null;
  request_hash: string;
  reason: string | null;
  override: string | null;
  created_at: number;
}

const parse = <T>(s: string | null): T | null => (s === null ? null : (JSON.parse(s) as T));

function toDocument(r: DocRow): DocumentRecord {
  return documentFromRow({
    ...r,
    body: JSON.parse(r.body) as JsonObject,
    forked_from: parse(r.forked_from),
  });
}

function toEntry(r: HistoryRow): HistoryEntry {
  return historyFromRow({
    ...r,
    noop: r.noop === 1,
    body: null,
    provenance: parse(r.provenance),
    override: parse(r.override),
  });
}

const HISTORY_COLS =
  'seq, version, parent_version, noop, body, content_hash, actor, actor_kind, provenance, write_id, request_hash, reason, override, created_at';

// The commit's statements, built once: conn.stmt looks a statement up by its text, and a text rebuilt
// from a template on every call has to be hashed again every time.
const SELECT_HEAD = 'SELECT version, content_hash FROM documents WHERE kind = ? AND id = ?';
const INSERT_DOCUMENT = `INSERT INTO documents (kind, id, version, body, content_hash, forked_from, created_at, updated_at)
  VALUES (?, ?, 1, ?, ?, ?, ?, ?) ON CONFLICT (kind, id) DO NOTHING`;
// Both tests are needed: a store that remembers the version it committed writes without reading first, and
// after A→B→A (another handle writes version 2, then a version 3 with version 1's body) the content hash
// alone matches; with the history pruned, nothing else would stop the stale write (conformance: A→B→A).
const UPDATE_DOCUMENT = `UPDATE documents SET version = version + 1, body = ?, content_hash = ?, updated_at = ?
  WHERE kind = ? AND id = ? AND version = ? AND content_hash = ?`;
const NEXT_SEQ = 'SELECT MAX(seq) AS s FROM document_history WHERE kind = ? AND id = ?';
const INSERT_HISTORY = `INSERT INTO document_history (kind, id, ${HISTORY_COLS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;

/** The version `kind/id` is at (0: no such document). */
function currentVersion(conn: SqliteConnection, kind: string, id: string): number {
  return (
    (
      conn.stmt('SELECT version FROM documents WHERE kind = ? AND id = ?').get(kind, id) as
        | { version: number }
        | undefined
    )?.version ?? 0
  );
}

function conflict(conn: SqliteConnection, w: DocumentWrite): never {
  throw versionConflict(w.kind, w.id, currentVersion(conn, w.kind, w.id), w.expected_version);
}

/** Removes history older than the newest `keep` versions. Must run inside a write transaction. */
function pruneRows(conn: SqliteConnection, kind: string, id: string, keep: number): number {
  const latest = currentVersion(conn, kind, id);
  if (latest === 0) return 0;
  return conn
    .stmt('DELETE FROM document_history WHERE kind = ? AND id = ? AND version <= ?')
    .run(kind, id, latest - Math.max(1, keep)).changes;
}

// The operations of DocumentBackend (src/core/documents/backend.ts); PostgreSQL's documents.ts has the same names.

export async function get(conn: SqliteConnection, kind: string, id: string): Promise<DocumentRecord | null> {
  const r = conn.read(() => conn.stmt('SELECT * FROM documents WHERE kind = ? AND id = ?').get(kind, id)) as
    | DocRow
    | undefined;
  return r ? toDocument(r) : null;
}

export async function getVersion(
  conn: SqliteConnection,
  kind: string,
  id: string,
  version: number,
): ReturnType<DocumentBackend['getVersion']> {
  return conn.read(() => {
    const r = conn
      .stmt(
        `SELECT ${HISTORY_COLS} FROM document_history WHERE kind = ? AND id = ? AND version = ? AND noop = 0`,
      )
      .get(kind, id, version) as HistoryRow | undefined;
    if (r) return { body: JSON.parse(r.body!) as JsonObject, entry: toEntry(r) };
    const latest = currentVersion(conn, kind, id);
    return version >= 1 && version < latest ? 'pruned' : null;
  });
}

export async function findWrite(
  conn: SqliteConnection,
  kind: string,
  id: string,
  writeId: string,
): ReturnType<DocumentBackend['findWrite']> {
  const r = conn.read(() =>
    conn
      .stmt(`SELECT ${HISTORY_COLS} FROM document_history WHERE kind = ? AND id = ? AND write_id = ?`)
      .get(kind, id, writeId),
  ) as HistoryRow | undefined;
  return r ? { entry: toEntry(r), body: parse<JsonObject>(r.body), request_hash: r.request_hash } : null;
}

export async function commit(conn: SqliteConnection, w: DocumentWrite): Promise<HistoryEntry> {
  return conn.write(() => {
    const version = w.noop ? w.expected_version : w.expected_version + 1;
    const bodyText = w.noop ? null : JSON.stringify(w.body);
    if (w.noop) {
      const cur = conn.stmt(SELECT_HEAD).get(w.kind, w.id) as
        | { version: number; content_hash: string }
        | undefined;
      if (cur?.version !== w.expected_version || cur.content_hash !== w.expected_hash) conflict(conn, w);
    } else if (w.expected_version === 0) {
      const r = conn
        .stmt(INSERT_DOCUMENT)
        .run(
          w.kind,
          w.id,
          bodyText,
          w.content_hash,
          w.forked_from && JSON.stringify(w.forked_from),
          w.now,
          w.now,
        );
      if (r.changes === 0) conflict(conn, w);
    } else {
      const r = conn
        .stmt(UPDATE_DOCUMENT)
        .run(bodyText, w.content_hash, w.now, w.kind, w.id, w.expected_version, w.expected_hash);
      if (r.changes === 0) conflict(conn, w);
    }
    const seq = ((conn.stmt(NEXT_SEQ).get(w.kind, w.id) as { s: number | null }).s ?? 0) + 1;
    const row: HistoryRow = {
      seq,
      version,
      parent_version: w.expected_version,
      noop: w.noop ? 1 : 0,
      body: bodyText,
      content_hash: w.content_hash,
      actor: w.actor,
      actor_kind: w.actor_kind,
      provenance: w.provenance && JSON.stringify(w.provenance),
      write_id: w.write_id,
      request_hash: w.request_hash,
      reason: w.reason,
      override: w.override && JSON.stringify(w.override),
      created_at: w.now,
    };
    conn
      .stmt(INSERT_HISTORY)
      .run(
        w.kind,
        w.id,
        row.seq,
        row.version,
        row.parent_version,
        row.noop,
        row.body,
        row.content_hash,
        row.actor,
        row.actor_kind,
        row.provenance,
        row.write_id,
        row.request_hash,
        row.reason,
        row.override,
        row.created_at,
      );
    // The enqueued items' events first, then the commit's, then the resolved items' (as PostgreSQL).
    const enqueued = w.enqueue.length > 0 ? enqueueRows(conn, w.enqueue).events : [];
    const resolved = w.resolve.flatMap((q) => setStatusRow(conn, q).events);
    writeEvents(conn, [...enqueued, ...w.events, ...resolved]);
    if (w.keep_versions !== null && !w.noop) pruneRows(conn, w.kind, w.id, w.keep_versions);
    return toEntry(row);
  });
}

export async function history(
  conn: SqliteConnection,
  kind: string,
  id: string,
  q: Parameters<DocumentBackend['history']>[2],
): Promise<HistoryEntry[]> {
  const sql = q.reverse
    ? `SELECT ${HISTORY_COLS} FROM document_history WHERE kind = ? AND id = ? AND seq < ? ORDER BY seq DESC LIMIT ?`
    : `SELECT ${HISTORY_COLS} FROM document_history WHERE kind = ? AND id = ? AND seq > ? ORDER BY seq LIMIT ?`;
  const after = q.reverse && q.afterSeq === 0 ? Number.MAX_SAFE_INTEGER : q.afterSeq;
  return conn.read(() => (conn.stmt(sql).all(kind, id, after, q.limit) as HistoryRow[]).map(toEntry));
}

export async function list(
  conn: SqliteConnection,
  kind: string | null,
  limit: number,
  after?: { kind: string; id: string },
): ReturnType<DocumentBackend['list']> {
  const where: string[] = [];
  const params: unknown[] = [];
  if (kind !== null) {
    where.push('kind = ?');
    params.push(kind);
  }
  if (after !== undefined) {
    // After the cursor document by (kind, id), and nothing when it is no document.
    where.push('(kind, id) > (?, ?) AND EXISTS (SELECT 1 FROM documents WHERE kind = ? AND id = ?)');
    params.push(after.kind, after.id, after.kind, after.id);
  }
  params.push(limit);
  const sql = `SELECT * FROM documents ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY kind, id LIMIT ?`;
  const rows = conn.read(() => conn.stmt(sql).all(...params)) as DocRow[];
  return rows.map((r) => {
    const { body: _body, ...rest } = toDocument(r);
    return rest;
  });
}

export async function prune(conn: SqliteConnection, kind: string, id: string, keep: number): Promise<number> {
  return conn.write(() => pruneRows(conn, kind, id, keep));
}

/** The DocumentBackend of one SQLite store: the operations above, on its connection. */
export function createDocumentBackend(conn: SqliteConnection): DocumentBackend {
  return {
    get: (kind, id) => get(conn, kind, id),
    getVersion: (kind, id, version) => getVersion(conn, kind, id, version),
    findWrite: (kind, id, writeId) => findWrite(conn, kind, id, writeId),
    commit: (w) => commit(conn, w),
    history: (kind, id, q) => history(conn, kind, id, q),
    list: (kind, limit, after) => list(conn, kind, limit, after),
    prune: (kind, id, keep) => prune(conn, kind, id, keep),
  };
}
