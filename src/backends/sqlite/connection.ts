// One SQLite connection: pragmas (WAL, busy timeout, durability), a statement cache,
// BEGIN IMMEDIATE write transactions, and driver errors mapped to typed errors.
import {
  AgentStateError,
  LockTimeoutError,
  StorageUnavailableError,
  storeClosedError,
} from '../../errors.js';
import { openSqlite, type SqliteDatabase, type SqliteStatement } from './driver.js';

/** `full` survives power loss; `normal` may lose the last commits on power loss (never corrupts). */
export type Durability = 'full' | 'normal';

/** How `openSqliteBackend` opens the database file. */
export interface SqliteOptions {
  /** Path of the database file. */
  path: string;
  /** Whether a commit survives power loss (`full`) or trades that for speed (`normal`). @default 'full' */
  durability?: Durability;
  /** How long a writer waits for the lock before LOCK_TIMEOUT. @default 15000 */
  busyTimeoutMs?: number;
}

export class SqliteConnection {
  readonly db: SqliteDatabase;
  readonly driver: string;
  readonly path: string;
  private readonly cache = new Map<string, SqliteStatement>();
  private depth = 0;
  private closed = false;

  private constructor(db: SqliteDatabase, driver: string, path: string) {
    this.db = db;
    this.driver = driver;
    this.path = path;
  }

  static async open(opts: SqliteOptions): Promise<SqliteConnection> {
    const busy = opts.busyTimeoutMs ?? 15_000;
    try {
      const { db, driver } = await openSqlite(opts.path, { busyTimeoutMs: busy });
      const conn = new SqliteConnection(db, driver, opts.path);
      db.exec(`PRAGMA busy_timeout = ${Math.trunc(busy)}`);
      conn.setJournalWal(busy);
      db.exec(`PRAGMA synchronous = ${opts.durability === 'normal' ? 'NORMAL' : 'FULL'}`);
      db.exec('PRAGMA foreign_keys = ON');
      return conn;
    } catch (err) {
      throw mapSqliteError(err, opts.path);
    }
  }

  /**
   * Switching to WAL needs a brief exclusive lock, and SQLite does not always wait for it through the busy
   * handler (a new file being set up by another process): retry until the busy timeout.
   */
  private setJournalWal(busyMs: number): void {
    const deadline = Date.now() + busyMs;
    for (let pause = 2; ; pause = Math.min(pause * 2, 50)) {
      try {
        const row = this.db.prepare('PRAGMA journal_mode').get() as { journal_mode?: string } | undefined;
        if (row?.journal_mode === 'wal') return;
        this.db.exec('PRAGMA journal_mode = WAL');
        return;
      } catch (err) {
        if (!(mapSqliteError(err, this.path) instanceof LockTimeoutError) || Date.now() >= deadline)
          throw err;
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, pause);
      }
    }
  }

  /** A cached prepared statement. */
  stmt(sql: string): SqliteStatement {
    if (this.closed) throw storeClosedError();
    let st = this.cache.get(sql);
    if (!st) {
      st = this.db.prepare(sql);
      this.cache.set(sql, st);
    }
    return st;
  }

  /** Runs `fn` in a BEGIN IMMEDIATE transaction (nested calls join the outer one). */
  write<T>(fn: () => T): T {
    if (this.depth > 0) return fn();
    try {
      this.stmt('BEGIN IMMEDIATE').run();
    } catch (err) {
      throw mapSqliteError(err, this.path);
    }
    this.depth++;
    try {
      const out = fn();
      this.stmt('COMMIT').run();
      return out;
    } catch (err) {
      try {
        this.stmt('ROLLBACK').run();
      } catch {
        // The transaction may already be rolled back by SQLite (e.g. after SQLITE_FULL).
      }
      throw mapSqliteError(err, this.path);
    } finally {
      this.depth--;
    }
  }

  /** Runs a read; a driver error becomes a typed error. */
  read<T>(fn: () => T): T {
    try {
      return fn();
    } catch (err) {
      throw mapSqliteError(err, this.path);
    }
  }

  close(): void {
    this.closed = true;
    this.cache.clear();
    this.db.close();
  }
}

/** Maps a driver error to LOCK_TIMEOUT / STORAGE_UNAVAILABLE; typed errors pass through. */
export function mapSqliteError(err: unknown, path: string): unknown {
  if (err instanceof AgentStateError) return err;
  const code = String((err as { code?: unknown })?.code ?? '');
  const message = err instanceof Error ? err.message : String(err);
  if (code.startsWith('SQLITE_BUSY') || /database is locked/i.test(message)) {
    return new LockTimeoutError(
      `the database ${path} stayed locked by another writer past the busy timeout; retry, or raise busyTimeoutMs`,
      { path },
      { cause: err },
    );
  }
  if (
    /^SQLITE_(CANTOPEN|NOTADB|CORRUPT|IOERR|FULL|READONLY|PERM|AUTH)/.test(code) ||
    /unable to open database|file is not a database|disk image is malformed/i.test(message)
  ) {
    return new StorageUnavailableError(
      `cannot use the database ${path}: ${message}`,
      { path, sqlite_code: code },
      {
        cause: err,
      },
    );
  }
  return err;
}
