// Versioned-document SQL for PostgreSQL: the compare-and-swap commit is one statement, sent on its own
// (conditional write, history entry, retention and its events); a commit whose kind enqueues work items
// appends their events in a second statement pipelined with COMMIT.
import type {
  DocumentBackend,
  DocumentRowDump,
  DocumentWrite,
  HistoryRowDump,
  NewEvent,
} from '../../core/backend.js';
import { documentFromRow, historyFromRow } from '../../core/rows.js';
import type { DocumentRecord, HistoryEntry, JsonObject } from '../../core/types.js';
import { InternalError, StateConflictError, versionConflict } from '../../errors.js';
import { missingBlocker } from '../shared.js';
import type { Names, PostgresConnection, Tx } from './connection.js';
import {
  type AppendHint,
  appendEventsCtes,
  type OneEventField,
  oneEventCtes,
  pendingOne,
  writeEvents,
} from './events.js';
import { enqueueCtes, settleEnqueue } from './work/enqueue.js';
import type { WorkItemRow } from './work/shared.js';
import { setStatusRow } from './work/status.js';

type DocRow = DocumentRowDump;
type HistoryRow = Omit<HistoryRowDump, 'kind' | 'id'>;
const toDocument = documentFromRow;
const toEntry = historyFromRow;

const HISTORY_COLS =
  'seq, version, parent_version, noop, body, content_hash, actor, actor_kind, provenance, write_id, request_hash, reason, override, created_at';
const DOC_COLS = 'kind, id, version, body, content_hash, forked_from, created_at, updated_at';
const LIST_COLS = 'kind, id, version, content_hash, forked_from, created_at, updated_at';

/** A unique index of document_history refused a second row for one version or one write id. */
function isHistoryDuplicate(err: unknown): boolean {
  const e = err as { code?: unknown; constraint?: unknown };
  return (
    // Stryker disable next-line OptionalChaining: equivalent: err is what commit's try threw (a pg error, versionConflict or another Error), never null or undefined
    e?.code === '23505' &&
    (e.constraint === 'document_history_write' ||
      e.constraint === 'document_history_version' ||
      e.constraint === 'document_history_pkey')
  );
}

/** What the text of a commit statement depends on, besides the schema's names. */
interface CommitShape {
  mode: 'noop' | 'insert' | 'update';
  /** Retention runs in the statement. */
  prune: boolean;
}

/** Where a commit statement's parameter values come from. */
interface ValueSource {
  instance: string;
  w: DocumentWrite;
  /** The body's JSON text (null for a no-op, which writes no body). */
  body: string | null;
  /** The one event of a plain commit (null when the statement appends its events otherwise). */
  event: Record<OneEventField, unknown> | null;
}

function shapeOf(w: DocumentWrite): CommitShape {
  return {
    mode: w.noop ? 'noop' : w.expected_version === 0 ? 'insert' : 'update',
    prune: w.keep_versions !== null && !w.noop,
  };
}

/** Reads one parameter's value. */
type ValueOf = (s: ValueSource) => unknown;

/**
 * The conditional write, its history entry and retention, as CTEs `_cas`, `_hist` (and `_prune`). The text
 * is built from `shape` alone: each value is a parameter, named by the function `param` is given to read
 * it from a write, so equal shapes give equal texts and the values bound to them follow the same order.
 */
function commitCtes(t: Names, shape: CommitShape, param: (get: ValueOf) => string): string[] {
  const kind = param((s) => s.w.kind);
  const id = param((s) => s.w.id);
  const expected = param((s) => s.w.expected_version);
  const now = param((s) => s.w.now);
  const where = `instance = $1 AND kind = ${kind} AND id = ${id}`;
  // The version read, and its content: a commit built on a remembered copy must not land on another one.
  const still = () => `version = ${expected} AND content_hash = ${param((s) => s.w.expected_hash)}::text`;
  // Sent once, used by the document row and its history entry (a no-op's entry keeps no body).
  const body = shape.mode === 'noop' ? 'NULL' : param((s) => s.body);
  const hash = param((s) => s.w.content_hash);
  let cas: string;
  if (shape.mode === 'noop') {
    // Nothing changes but the history seq; the row lock and the version test still serialize it.
    cas = `UPDATE ${t.documents} SET last_seq = last_seq + 1 WHERE ${where} AND ${still()}
        RETURNING version, last_seq`;
  } else if (shape.mode === 'insert') {
    cas = `INSERT INTO ${t.documents}
          (instance, kind, id, version, body, content_hash, forked_from, last_seq, created_at, updated_at)
        VALUES ($1, ${kind}, ${id}, 1, ${body}::jsonb, ${hash},
          ${param((s) => s.w.forked_from && JSON.stringify(s.w.forked_from))}::jsonb, 1, ${now}, ${now})
        ON CONFLICT (instance, kind, id) DO NOTHING
        RETURNING version, last_seq`;
  } else {
    cas = `UPDATE ${t.documents} SET version = version + 1, body = ${body}::jsonb,
          content_hash = ${hash}, updated_at = ${now}, last_seq = last_seq + 1
        WHERE ${where} AND ${still()}
        RETURNING version, last_seq`;
  }
  const ctes = [
    `_cas AS (${cas})`,
    `_hist AS (
        INSERT INTO ${t.document_history} (instance, kind, id, ${HISTORY_COLS})
        SELECT $1, ${kind}, ${id}, c.last_seq, c.version, ${expected}, ${param((s) => s.w.noop)},
          ${body}::jsonb, ${hash}, ${param((s) => s.w.actor)},
          ${param((s) => s.w.actor_kind)}, ${param((s) => s.w.provenance && JSON.stringify(s.w.provenance))}::jsonb,
          ${param((s) => s.w.write_id)}, ${param((s) => s.w.request_hash)}, ${param((s) => s.w.reason)},
          ${param((s) => s.w.override && JSON.stringify(s.w.override))}::jsonb, ${now}
        FROM _cas AS c
        RETURNING seq)`,
  ];
  if (shape.prune) {
    // Retention in the same statement; the newest version (this commit) is never removed.
    ctes.push(`_prune AS (
        DELETE FROM ${t.document_history} AS h USING _cas AS c
        WHERE h.instance = $1 AND h.kind = ${kind} AND h.id = ${id}
          AND h.version <= c.version - GREATEST(1, ${param((s) => s.w.keep_versions)}::int))`);
  }
  return ctes;
}

/** The version `kind/id` is at (0: no such document). */
async function currentVersion(conn: PostgresConnection, kind: string, id: string): Promise<number> {
  const res = await conn.query<{ version: number }>(
    `SELECT version FROM ${conn.names.documents} WHERE instance = $1 AND kind = $2 AND id = $3`,
    [conn.instance, kind, id],
  );
  return res.rows[0]?.version ?? 0;
}

/** The history entry a commit wrote: everything but its seq is in the write. */
function entryOf(w: DocumentWrite, seq: number): HistoryEntry {
  return toEntry({
    seq,
    version: w.noop ? w.expected_version : w.expected_version + 1,
    parent_version: w.expected_version,
    noop: w.noop,
    body: null,
    content_hash: w.content_hash,
    actor: w.actor,
    actor_kind: w.actor_kind,
    provenance: w.provenance,
    write_id: w.write_id,
    request_hash: w.request_hash,
    reason: w.reason,
    override: w.override,
    created_at: w.now,
  });
}

/**
 * The commit statement's shapes of each store, built once each (see commitCtes): the text of a plain
 * commit (one event, nothing enqueued or resolved) depends on nothing but its shape (and the store's
 * schema), so it is kept with the functions that read its parameters' values from a write.
 */
const shapesOf = new WeakMap<PostgresConnection, Map<string, { text: string; values: ValueOf[] }>>();

function plainStatement(conn: PostgresConnection, w: DocumentWrite): { text: string; values: unknown[] } {
  let shapes = shapesOf.get(conn);
  if (shapes === undefined) {
    shapes = new Map();
    shapesOf.set(conn, shapes);
  }
  const shape = shapeOf(w);
  // Every field of the shape is in the key, and the text is built from the shape alone (the builders
  // are given no write), so two writes share a text only when their texts are equal; the prepared
  // statement's name is a hash of that text (PostgresConnection.statement).
  const key = `${shape.mode}|${shape.prune}`;
  let built = shapes.get(key);
  if (built === undefined) {
    const values: ValueOf[] = [(s) => s.instance];
    const param = (get: ValueOf) => {
      values.push(get);
      return `$${values.length}`;
    };
    const t = conn.names;
    const ctes = commitCtes(t, shape, param);
    // Stryker disable next-line OptionalChaining: equivalent: a plain statement's source always has its one event (pendingOne below), never null
    ctes.push(oneEventCtes(t, (field) => param((s) => s.event?.[field]), 'EXISTS (SELECT 1 FROM _hist)'));
    // The caller needs no event back, only the count (a check) and the newest position (the hint).
    const text = `WITH ${ctes.join(',\n')}
         SELECT (SELECT last_seq FROM _cas) AS seq, (SELECT count(*) FROM _ev) AS n,
           (SELECT max(e_position) FROM _ev) AS last`;
    built = { text, values };
    shapes.set(key, built);
  }
  const src: ValueSource = {
    instance: conn.instance,
    w,
    body: w.noop ? null : (w.body_text ?? JSON.stringify(w.body)),
    event: pendingOne(w.events[0] as NewEvent),
  };
  const values = new Array<unknown>(built.values.length);
  for (let k = 0; k < values.length; k++) values[k] = (built.values[k] as ValueOf)(src);
  return { text: built.text, values };
}

/** The commit, or 'stale' when the document is no longer at the version (and content) it was read at. */
async function commitTx(
  tx: Tx,
  conn: PostgresConnection,
  hint: AppendHint | null,
  w: DocumentWrite,
): Promise<HistoryEntry | 'stale'> {
  const t = conn.names;
  // Stryker disable next-line BlockStatement: equivalent: emptied, a plain commit takes the several-events path below, whose appendEventsCtes sends the same one-event CTEs and writes the same rows, event and hint (test/backends/postgres.documents.test.ts compares both with SQLite)
  if (w.enqueue.length === 0 && w.resolve.length === 0 && w.events.length === 1) {
    // One statement, sent on its own: its event is appended only when the conditional write matched.
    // It returns only what the caller does not know yet: the history seq and the event's position.
    const { text, values } = plainStatement(conn, w);
    const res = await tx.queryAndCommit<{ seq: number | null; n: number; last: number | null }>(text, values);
    const row = res.rows[0];
    // Stryker disable next-line OptionalChaining: equivalent: the statement is a SELECT without FROM, so it returns one row
    if (row?.seq === null || row?.seq === undefined) return 'stale';
    if (Number(row.n) !== 1) throw new InternalError(`append_events stored ${row.n} of 1 events`);
    if (row.last !== null) hint?.appended(row.last);
    return entryOf(w, row.seq);
  }
  const p = conn.params();
  const src: ValueSource = {
    instance: conn.instance,
    w,
    body: w.noop ? null : (w.body_text ?? JSON.stringify(w.body)),
    event: null,
  };
  const ctes = commitCtes(t, shapeOf(w), (get) => p.add(get(src)));
  type Row = { seq: number | null; created: WorkItemRow[] | null; missing: string | null };

  // Stryker disable next-line BlockStatement: equivalent: emptied, a commit with several events takes the path below, which appends the same events after the conditional write (writeEvents) with the same hint (test/backends/postgres.documents.test.ts compares with SQLite)
  if (w.enqueue.length === 0 && w.resolve.length === 0) {
    // Several events (a kind's effects), in the same one statement.
    const call = appendEventsCtes(t, p, w.events, 'EXISTS (SELECT 1 FROM _hist)');
    ctes.push(call.ctes);
    const res = await tx.queryAndCommit<{ seq: number | null; n: number; last: number | null }>(
      `WITH ${ctes.join(',\n')}
         SELECT (SELECT last_seq FROM _cas) AS seq, (SELECT count(*) FROM _ev) AS n,
           (SELECT max(e_position) FROM _ev) AS last`,
      p.values,
    );
    const row = res.rows[0];
    // Stryker disable next-line OptionalChaining: equivalent: the statement is a SELECT without FROM, so it returns one row
    if (row?.seq === null || row?.seq === undefined) return 'stale';
    if (Number(row.n) !== call.pending.length) {
      throw new InternalError(`append_events stored ${row.n} of ${call.pending.length} events`);
    }
    if (row.last !== null) hint?.appended(row.last);
    return entryOf(w, row.seq);
  }

  const enqueues = w.enqueue.length > 0;
  if (enqueues) ctes.push(enqueueCtes(t, p, w.enqueue, 'EXISTS (SELECT 1 FROM _cas)'));
  const res = await tx.query<Row>(
    `WITH ${ctes.join(',\n')}
       SELECT (SELECT last_seq FROM _cas) AS seq,
         ${enqueues ? '(SELECT json_agg(i) FROM _ins AS i) AS created, (SELECT dep FROM _missing) AS missing' : 'NULL AS created, NULL AS missing'}`,
    p.values,
  );
  const row = res.rows[0];
  // Stryker disable next-line OptionalChaining: equivalent: the statement is a SELECT without FROM, so it returns one row
  if (row?.seq === null || row?.seq === undefined) return 'stale';
  if (row.missing) throw missingBlocker(row.missing);
  const enqueued = enqueues ? (await settleEnqueue(tx, conn, w.enqueue, row.created ?? [])).events : [];
  const resolved: NewEvent[] = [];
  for (const q of w.resolve) resolved.push(...(await setStatusRow(tx, conn, q)).events);
  await writeEvents(tx, conn, [...enqueued, ...w.events, ...resolved], { commit: true, hint });
  return entryOf(w, row.seq);
}

// The operations of DocumentBackend (src/core/documents/backend.ts); SQLite's documents.ts has the same names.

export async function get(
  conn: PostgresConnection,
  kind: string,
  id: string,
): Promise<DocumentRecord | null> {
  const t = conn.names;
  const res = await conn.query<DocRow>(
    `SELECT ${DOC_COLS} FROM ${t.documents} WHERE instance = $1 AND kind = $2 AND id = $3`,
    [conn.instance, kind, id],
  );
  const row = res.rows[0];
  return row ? toDocument(row) : null;
}

export async function getVersion(
  conn: PostgresConnection,
  kind: string,
  id: string,
  version: number,
): ReturnType<DocumentBackend['getVersion']> {
  const t = conn.names;
  const res = await conn.query<{ h: HistoryRow | null; latest: number | null }>(
    `SELECT (SELECT row_to_json(x) FROM (
                   SELECT ${HISTORY_COLS} FROM ${t.document_history}
                   WHERE instance = $1 AND kind = $2 AND id = $3 AND version = $4 AND NOT noop) AS x) AS h,
                (SELECT version FROM ${t.documents} WHERE instance = $1 AND kind = $2 AND id = $3) AS latest`,
    [conn.instance, kind, id, version],
  );
  const row = res.rows[0];
  if (row?.h) return { body: row.h.body as JsonObject, entry: toEntry(row.h) };
  const latest = row?.latest ?? 0;
  return version >= 1 && version < latest ? 'pruned' : null;
}

export async function findWrite(
  conn: PostgresConnection,
  kind: string,
  id: string,
  writeId: string,
): ReturnType<DocumentBackend['findWrite']> {
  const t = conn.names;
  const res = await conn.query<HistoryRow>(
    `SELECT ${HISTORY_COLS} FROM ${t.document_history}
         WHERE instance = $1 AND kind = $2 AND id = $3 AND write_id = $4`,
    [conn.instance, kind, id, writeId],
  );
  const r = res.rows[0];
  return r ? { entry: toEntry(r), body: r.body, request_hash: r.request_hash } : null;
}

export async function commit(
  conn: PostgresConnection,
  hint: AppendHint | null,
  w: DocumentWrite,
): Promise<HistoryEntry> {
  try {
    const entry = await conn.transaction((tx) => commitTx(tx, conn, hint, w));
    if (entry !== 'stale') return entry;
    // A new statement sees the version that beat us, even one committed while we waited for its row lock.
    throw versionConflict(w.kind, w.id, await currentVersion(conn, w.kind, w.id), w.expected_version);
  } catch (err) {
    if (!isHistoryDuplicate(err)) throw err;
    // A concurrent commit with the same write id (or version) won the unique index.
    const actual = await currentVersion(conn, w.kind, w.id);
    if (w.write_id === null) {
      throw versionConflict(w.kind, w.id, actual, w.expected_version, { write_id: null });
    }
    throw new StateConflictError(
      `write_id ${w.write_id} was already used for a change to ${w.kind}/${w.id}`,
      {
        kind: w.kind,
        id: w.id,
        write_id: w.write_id,
        expected: w.expected_version,
        actual,
      },
    );
  }
}

export async function history(
  conn: PostgresConnection,
  kind: string,
  id: string,
  q: Parameters<DocumentBackend['history']>[2],
): Promise<HistoryEntry[]> {
  const t = conn.names;
  const after = q.reverse && q.afterSeq === 0 ? 2_147_483_647 : q.afterSeq;
  const res = await conn.query<HistoryRow>(
    `SELECT ${HISTORY_COLS} FROM ${t.document_history}
         WHERE instance = $1 AND kind = $2 AND id = $3 AND seq ${q.reverse ? '<' : '>'} $4
         ORDER BY seq ${q.reverse ? 'DESC' : 'ASC'} LIMIT $5`,
    [conn.instance, kind, id, after, q.limit],
  );
  return res.rows.map(toEntry);
}

export async function list(
  conn: PostgresConnection,
  kind: string | null,
  limit: number,
  after?: { kind: string; id: string },
): ReturnType<DocumentBackend['list']> {
  const t = conn.names;
  const p = conn.params();
  const where = ['instance = $1'];
  if (kind !== null) where.push(`kind = ${p.add(kind)}`);
  if (after !== undefined) {
    // After the cursor document by (kind, id), and nothing when it is no document.
    const [k, id] = [p.add(after.kind), p.add(after.id)];
    where.push(
      `(kind, id) > (${k}, ${id}) AND EXISTS (SELECT 1 FROM ${t.documents} WHERE instance = $1 AND kind = ${k} AND id = ${id})`,
    );
  }
  const res = await conn.query<Omit<DocRow, 'body'>>(
    `SELECT ${LIST_COLS} FROM ${t.documents} WHERE ${where.join(' AND ')} ORDER BY kind, id LIMIT ${p.add(limit)}`,
    p.values,
  );
  return res.rows.map((r) => {
    const { body: _body, ...rest } = toDocument({ ...r, body: {} });
    return rest;
  });
}

export async function prune(
  conn: PostgresConnection,
  kind: string,
  id: string,
  keep: number,
): Promise<number> {
  const t = conn.names;
  const res = await conn.query(
    `DELETE FROM ${t.document_history} AS h USING ${t.documents} AS d
         WHERE h.instance = $1 AND h.kind = $2 AND h.id = $3
           AND d.instance = $1 AND d.kind = $2 AND d.id = $3
           AND h.version <= d.version - GREATEST(1, $4::int)`,
    [conn.instance, kind, id, keep],
  );
  return res.rowCount ?? 0;
}

/** The DocumentBackend of one PostgreSQL store: the operations above, on its connection and NOTIFY hint. */
export function createDocumentBackend(conn: PostgresConnection, hint: AppendHint | null): DocumentBackend {
  return {
    get: (kind, id) => get(conn, kind, id),
    getVersion: (kind, id, version) => getVersion(conn, kind, id, version),
    findWrite: (kind, id, writeId) => findWrite(conn, kind, id, writeId),
    commit: (w) => commit(conn, hint, w),
    history: (kind, id, q) => history(conn, kind, id, q),
    list: (kind, limit, after) => list(conn, kind, limit, after),
    prune: (kind, id, keep) => prune(conn, kind, id, keep),
  };
}
