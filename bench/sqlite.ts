// The raw baseline: better-sqlite3 directly, with the schema from the migration file and the same
// statements agentstate issues (BEGIN IMMEDIATE, UPDATE … RETURNING claims, fenced resolves and the
// SHA-256 hash-chained event insert), minus the library's input checks, row mapping and async API.
import * as crypto from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { type Durability, REPO_ROOT } from './lib.js';

const SCHEMA = readFileSync(join(REPO_ROOT, 'src/backends/sqlite/migrations/0001-initial.sql'), 'utf8');
/** Migration 0001 (work items, events) and 0002 (documents, document_history), as shipped. */
export const EVENT_SCHEMA = SCHEMA;
export const DOC_SCHEMA = readFileSync(
  join(REPO_ROOT, 'src/backends/sqlite/migrations/0002-documents.sql'),
  'utf8',
);

const GENESIS_HASH = '0'.repeat(64);

const INSERT_EVENT = `INSERT INTO events
  (position, stream, stream_seq, type, data, actor, correlation_id, causation_id, work_item_id, created_at, prev_hash, hash)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;

const INSERT_ITEM = `INSERT INTO work_items (id, title, kind, status, priority, payload, blocked_by, not_before, max_attempts,
    idempotency_key, created_at, updated_at)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
  ON CONFLICT (idempotency_key) DO NOTHING RETURNING *`;

// The same statements as src/backends/sqlite/work/, including its INDEXED BY hints.
const RECLAIM = `UPDATE work_items INDEXED BY work_items_leases SET
    status = CASE WHEN attempts >= max_attempts THEN 'failed' ELSE 'pending' END,
    error = CASE WHEN attempts >= max_attempts THEN 'lease expired on attempt ' || attempts || ' of ' || max_attempts ELSE error END,
    resolved_at = CASE WHEN attempts >= max_attempts THEN ? ELSE NULL END,
    lease_owner = NULL, lease_expires_at = NULL, updated_at = ?
  WHERE status = 'in_flight' AND lease_expires_at <= ?
  RETURNING *`;

const READY = `w.status = 'pending' AND (w.not_before IS NULL OR w.not_before <= ?)
  AND (w.blocked_by = '[]' OR NOT EXISTS (
    SELECT 1 FROM json_each(w.blocked_by) b
    WHERE NOT EXISTS (SELECT 1 FROM work_items d WHERE d.id = b.value AND d.status = 'done')))`;

const CLAIM = `UPDATE work_items SET status = 'in_flight', lease_owner = ?, lease_expires_at = ?, claimed_at = ?,
    attempts = attempts + 1, updated_at = ?
  WHERE id IN (SELECT w.id FROM work_items w INDEXED BY work_items_ready WHERE ${READY} ORDER BY w.priority DESC, w.created_at, w.id LIMIT ?)
  RETURNING *`;

const RESOLVE = `UPDATE work_items SET status = ?, result = ?, error = ?, lease_expires_at = NULL, resolved_at = ?, updated_at = ?
  WHERE id = ? AND status = 'in_flight' AND lease_owner = ? AND lease_expires_at > ? AND attempts = ?
  RETURNING *`;

interface Row {
  id: string;
  attempts: number;
  lease_expires_at: number | null;
  claimed_at: number | null;
}

type NewRawEvent = RawEventInput;

/** Opens a database file with agentstate's pragmas and schema, then runs the same SQL by hand. */
export class RawStore {
  readonly db: Database.Database;
  readonly #begin: Database.Statement;
  readonly #commit: Database.Statement;
  readonly #rollback: Database.Statement;
  readonly #events: RawEventChain;
  readonly #insertItem: Database.Statement;
  readonly #reclaim: Database.Statement;
  readonly #claim: Database.Statement;
  readonly #resolve: Database.Statement;
  #nextId = 0;

  constructor(path: string, durability: Durability) {
    this.db = new Database(path, { timeout: 5000 });
    this.db.exec('PRAGMA busy_timeout = 5000');
    this.db.exec('PRAGMA journal_mode = WAL');
    this.db.exec(`PRAGMA synchronous = ${durability === 'normal' ? 'NORMAL' : 'FULL'}`);
    this.db.exec('PRAGMA foreign_keys = ON');
    this.db.exec('BEGIN IMMEDIATE');
    this.db.exec(SCHEMA);
    this.db.exec('COMMIT');
    this.#begin = this.db.prepare('BEGIN IMMEDIATE');
    this.#commit = this.db.prepare('COMMIT');
    this.#rollback = this.db.prepare('ROLLBACK');
    this.#events = new RawEventChain(this.db);
    this.#insertItem = this.db.prepare(INSERT_ITEM);
    this.#reclaim = this.db.prepare(RECLAIM);
    this.#claim = this.db.prepare(CLAIM);
    this.#resolve = this.db.prepare(RESOLVE);
  }

  close(): void {
    this.db.close();
  }

  #tx<T>(fn: () => T): T {
    this.#begin.run();
    try {
      const out = fn();
      this.#commit.run();
      return out;
    } catch (err) {
      this.#rollback.run();
      throw err;
    }
  }

  /** The hash-chained insert (inside the caller's transaction). */
  #insertEvents(events: NewRawEvent[]): void {
    this.#events.insert(events);
  }

  #id(): string {
    this.#nextId += 1;
    return `wi_${this.#nextId.toString(36).padStart(8, '0')}`;
  }

  #enqueueRows(titles: string[], now: number): string[] {
    const ids: string[] = [];
    const events: NewRawEvent[] = [];
    for (const title of titles) {
      const id = this.#id();
      const row = this.#insertItem.get(
        id,
        title,
        null,
        'pending',
        0,
        'null',
        '[]',
        null,
        3,
        null,
        now,
        now,
      ) as Row | undefined;
      if (!row) throw new Error('enqueue: no row');
      ids.push(id);
      events.push({
        stream: `work_item:${id}`,
        type: 'work_item_enqueued',
        data: JSON.stringify({ title, priority: 0 }),
        actor: 'bench',
        work_item_id: id,
        created_at: now,
      });
    }
    this.#insertEvents(events);
    return ids;
  }

  /** One item, one transaction. */
  enqueue(title: string): string {
    const now = Date.now();
    return this.#tx(() => this.#enqueueRows([title], now))[0]!;
  }

  /** Many items, one transaction. */
  enqueueMany(titles: string[]): string[] {
    const now = Date.now();
    return this.#tx(() => this.#enqueueRows(titles, now));
  }

  /** Reclaims expired leases, then claims the next ready item under a lease (one transaction). */
  claim(worker: string, leaseMs = 60_000): Row | null {
    const now = Date.now();
    return this.#tx(() => {
      this.#reclaim.all(now, now, now);
      const rows = this.#claim.all(worker, now + leaseMs, now, now, now, 1) as Row[];
      this.#insertEvents(
        rows.map((r) => ({
          stream: `work_item:${r.id}`,
          type: 'work_item_claimed',
          data: JSON.stringify({
            worker,
            attempt: r.attempts,
            lease_expires_at: new Date(r.lease_expires_at ?? 0).toISOString(),
          }),
          actor: worker,
          work_item_id: r.id,
          created_at: now,
        })),
      );
      return rows[0] ?? null;
    });
  }

  /** Resolves a held item as done, fenced by owner + attempt + unexpired lease (one transaction). */
  resolve(id: string, worker: string, attempt: number): void {
    const now = Date.now();
    this.#tx(() => {
      const row = this.#resolve.get('done', 'null', null, now, now, id, worker, now, attempt) as
        | Row
        | undefined;
      if (!row) throw new Error(`resolve: lease lost on ${id}`);
      this.#insertEvents([
        {
          stream: `work_item:${id}`,
          type: 'work_item_resolved',
          data: JSON.stringify({
            status: 'done',
            worker,
            attempt,
            duration_ms: now - (row.claimed_at ?? now),
          }),
          actor: worker,
          work_item_id: id,
          created_at: now,
        },
      ]);
    });
  }

  /** Appends events to the instance stream in one transaction. */
  appendMany(events: Array<{ type: string; data: unknown }>): void {
    const now = Date.now();
    this.#tx(() =>
      this.#insertEvents(
        events.map((e) => ({
          stream: 'instance',
          type: e.type,
          data: JSON.stringify(e.data ?? null),
          actor: 'bench',
          work_item_id: null,
          created_at: now,
        })),
      ),
    );
  }

  append(type: string, data: unknown): void {
    this.appendMany([{ type, data }]);
  }
}

// crypto.hash (Node >= 20.12) is the one-shot digest agentstate's hash chain uses.
const oneShot = (crypto as { hash?: (alg: string, data: string, enc: 'hex') => string }).hash;

/** SHA-256 of a string, hex (the same function agentstate uses for event and content hashes). */
export function sha256Hex(text: string): string {
  return oneShot ? oneShot('sha256', text, 'hex') : crypto.createHash('sha256').update(text).digest('hex');
}

/** An event to chain: `data` is the JSON text to store. */
export interface RawEventInput {
  stream: string;
  type: string;
  data: string;
  actor: string | null;
  work_item_id: string | null;
  created_at: number;
}

/**
 * The hash-chained event insert on its own (read the head, read the stream sequence, SHA-256 over
 * the same canonical array as agentstate, INSERT), for use inside the caller's transaction.
 */
export class RawEventChain {
  readonly #head: Database.Statement;
  readonly #streamSeq: Database.Statement;
  readonly #insert: Database.Statement;

  constructor(db: Database.Database) {
    this.#head = db.prepare('SELECT position, hash FROM events ORDER BY position DESC LIMIT 1');
    this.#streamSeq = db.prepare(
      'SELECT stream_seq FROM events WHERE stream = ? ORDER BY stream_seq DESC LIMIT 1',
    );
    this.#insert = db.prepare(INSERT_EVENT);
  }

  insert(events: RawEventInput[]): void {
    const head = this.#head.get() as { position: number; hash: string } | undefined;
    let position = head?.position ?? 0;
    let prevHash = head?.hash ?? GENESIS_HASH;
    const seqs = new Map<string, number>();
    for (const e of events) {
      let seq = seqs.get(e.stream);
      if (seq === undefined)
        seq = (this.#streamSeq.get(e.stream) as { stream_seq: number } | undefined)?.stream_seq ?? 0;
      seq += 1;
      seqs.set(e.stream, seq);
      position += 1;
      const hash = sha256Hex(
        JSON.stringify([
          prevHash,
          position,
          e.stream,
          seq,
          e.type,
          e.data,
          e.actor,
          null,
          null,
          e.work_item_id,
          e.created_at,
        ]),
      );
      this.#insert.run(
        position,
        e.stream,
        seq,
        e.type,
        e.data,
        e.actor,
        null,
        null,
        e.work_item_id,
        e.created_at,
        prevHash,
        hash,
      );
      prevHash = hash;
    }
  }
}
