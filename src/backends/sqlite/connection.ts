// One SQLite connection: pragmas (WAL, busy timeout, durability), a statement cache,
// BEGIN IMMEDIATE write transactions, driver errors mapped to typed errors, and the append hints of its
// database file (a commit that appended events wakes this process's listeners; other processes' commits are
// noticed by a watch of the WAL file).
import { type FSWatcher, realpathSync, watch } from 'node:fs';
import { resolve } from 'node:path';
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
  /** The append hints of this database file, shared by every connection of this process to it. */
  readonly hints: AppendHints;
  private readonly cache = new Map<string, SqliteStatement>();
  private depth = 0;
  private closed = false;
  /** The newest event position written by the open write transaction (0: none). */
  private appendedTo = 0;

  private constructor(db: SqliteDatabase, driver: string, path: string, hints: AppendHints) {
    this.db = db;
    this.driver = driver;
    this.path = path;
    this.hints = hints;
  }

  static async open(opts: SqliteOptions): Promise<SqliteConnection> {
    const busy = opts.busyTimeoutMs ?? 15_000;
    try {
      const { db, driver } = await openSqlite(opts.path, { busyTimeoutMs: busy });
      let hints: AppendHints;
      try {
        hints = AppendHints.acquire(opts.path, busy);
      } catch (err) {
        db.close();
        throw err;
      }
      const conn = new SqliteConnection(db, driver, opts.path, hints);
      try {
        db.exec(`PRAGMA busy_timeout = ${Math.trunc(busy)}`);
        conn.setJournalWal(busy);
        db.exec(`PRAGMA synchronous = ${opts.durability === 'normal' ? 'NORMAL' : 'FULL'}`);
        db.exec('PRAGMA foreign_keys = ON');
      } catch (err) {
        conn.close();
        throw err;
      }
      return conn;
    } catch (err) {
      throw mapSqliteError(err, opts.path);
    }
  }

  /** Whether `close` was called. */
  get isClosed(): boolean {
    return this.closed;
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

  /**
   * Runs `fn` in a BEGIN IMMEDIATE transaction (nested calls join the outer one). Once it commits, if it
   * appended events, this process's listeners of the database are told (`hints`).
   */
  write<T>(fn: () => T): T {
    if (this.depth > 0) return fn();
    try {
      this.stmt('BEGIN IMMEDIATE').run();
    } catch (err) {
      throw mapSqliteError(err, this.path);
    }
    this.depth++;
    this.appendedTo = 0;
    let out: T;
    try {
      out = fn();
      this.stmt('COMMIT').run();
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
    if (this.appendedTo > 0) this.hints.appended(this.appendedTo);
    this.appendedTo = 0;
    return out;
  }

  /** Events up to `position` were written in the open write transaction: hint them once it commits. */
  noteAppended(position: number): void {
    if (this.depth === 0) this.hints.appended(position);
    else this.appendedTo = Math.max(this.appendedTo, position);
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
    if (this.closed) return;
    this.closed = true;
    this.cache.clear();
    this.hints.release();
    this.db.close();
  }
}

/** Checks of `PRAGMA data_version` after the WAL file changed, this many ms apart (a commit is visible only
 * once its writer has synced the WAL and updated the WAL index, which the file's change can precede). */
const SETTLE_CHECKS_MS = [0, 1, 2, 4, 8, 16, 32, 64, 128, 256];

/** How often a listener's watch checks `PRAGMA data_version` where the WAL file cannot be watched. */
export const WATCH_POLL_MS = 20;

/** The append hints of each database file of this process, by resolved path. */
const HINTS = new Map<string, AppendHints>();

/**
 * The append hints of one database file in this process, shared by its connections (one registry entry per
 * resolved path; a private one for `:memory:`, which no other connection sees). A write transaction that
 * appended events calls every listener right after its commit; while anyone listens, a watch notices what
 * other processes commit. Hints name the newest position known; they may be coalesced or spurious, never
 * the truth: listeners read the store again.
 */
export class AppendHints {
  /**
   * Whether a watch checks data_version when the WAL file changes (fs.watch) or, false, every WATCH_POLL_MS
   * (what it falls back to where the file cannot be watched; tests set it to run that way). False on Windows,
   * which may report a write to a file another process holds open only once it reaches the disk.
   */
  static watchWalFile = process.platform !== 'win32';
  /** The registry key (resolved path), or null for a private database. */
  readonly key: string | null;
  readonly #busyTimeoutMs: number;
  readonly #listeners = new Set<(position: number) => void>();
  /** Connections of this process to the file. */
  #users = 0;
  /** The newest event position hinted or seen by the watch. */
  #seen = 0;
  /** The newest position not yet delivered, and whether its delivery is queued. */
  #pending = 0;
  #queued = false;
  #watch: CommitWatch | null = null;
  #starting: Promise<void> | null = null;

  private constructor(key: string | null, busyTimeoutMs: number) {
    this.key = key;
    this.#busyTimeoutMs = busyTimeoutMs;
  }

  /** The hints of the database at `path` (opened just now, so it exists), counting one more connection. */
  static acquire(path: string, busyTimeoutMs: number): AppendHints {
    const key = databaseKey(path);
    let hints = key === null ? undefined : HINTS.get(key);
    if (!hints) {
      hints = new AppendHints(key, busyTimeoutMs);
      if (key !== null) HINTS.set(key, hints);
    }
    hints.#users++;
    return hints;
  }

  /** The hints of the database at `path` while a connection of this process has it open (no count taken). */
  static of(path: string): AppendHints | undefined {
    const key = databaseKey(path);
    return key === null ? undefined : HINTS.get(key);
  }

  /** A connection to the file closed. */
  release(): void {
    this.#users--;
    this.#forget();
  }

  /** How many listeners there are (for tests and diagnostics). */
  get listeners(): number {
    return this.#listeners.size;
  }

  /** Whether a watch of other processes' commits is running (for tests and diagnostics). */
  get watching(): boolean {
    return this.#watch !== null;
  }

  /** How many times the running watch has read `PRAGMA data_version` (for tests and diagnostics). */
  get checks(): number {
    return this.#watch?.checks ?? 0;
  }

  /**
   * Whether the running watch has a check scheduled: always while it polls, and for a moment after each
   * change of the WAL file while it watches the file (for tests and diagnostics).
   */
  get scheduled(): boolean {
    return this.#watch?.scheduled ?? false;
  }

  /** How many commits by other connections the running watch has noticed (for tests and diagnostics). */
  get commitsSeen(): number {
    return this.#watch?.commits ?? 0;
  }

  /** A write of this process committed events up to `position`. */
  appended(position: number): void {
    this.#seen = Math.max(this.#seen, position);
    if (this.#listeners.size > 0) this.#deliver(position);
  }

  /**
   * Calls `onAppend` after each commit that appends events to the file, from this process or (while the
   * WAL file can be watched or polled) another. Resolves to a function that stops listening; the watch ends
   * with the last listener.
   */
  async listen(onAppend: (position: number) => void): Promise<() => void> {
    this.#listeners.add(onAppend);
    if (this.key !== null && this.#watch === null) {
      this.#starting ??= this.#startWatch().finally(() => {
        this.#starting = null;
      });
      await this.#starting;
    }
    return () => {
      if (!this.#listeners.delete(onAppend)) return;
      this.#forget();
    };
  }

  async #startWatch(): Promise<void> {
    const key = this.key as string;
    let db: SqliteDatabase;
    try {
      db = (await openSqlite(key, { mustExist: true, busyTimeoutMs: this.#busyTimeoutMs })).db;
    } catch {
      // No watch (the file went away?): this process's own commits still hint, and polling stays the truth.
      return;
    }
    if (this.#listeners.size === 0) {
      db.close();
      return;
    }
    const watch = new CommitWatch(db, AppendHints.watchWalFile ? `${key}-wal` : null, () =>
      this.#committedElsewhere(watch),
    );
    this.#seen = Math.max(this.#seen, watch.head() ?? 0);
    this.#watch = watch;
  }

  /** Another connection committed: hint when the log's head moved (not on a write that appended nothing). */
  #committedElsewhere(watch: CommitWatch): void {
    const head = watch.head();
    if (head !== null && head === this.#seen) return;
    if (head !== null) this.#seen = head;
    this.#deliver(head ?? this.#seen);
  }

  #deliver(position: number): void {
    this.#pending = Math.max(this.#pending, position);
    if (this.#queued) return;
    this.#queued = true;
    queueMicrotask(() => {
      const p = this.#pending;
      this.#pending = 0;
      this.#queued = false;
      for (const listener of [...this.#listeners]) {
        try {
          listener(p);
        } catch {
          // A listener's failure is its own; the others are still told.
        }
      }
    });
  }

  /** Ends the watch without listeners, and the registry entry without connections either. */
  #forget(): void {
    if (this.#listeners.size > 0) return;
    this.#watch?.close();
    this.#watch = null;
    if (this.#users <= 0 && this.key !== null && HINTS.get(this.key) === this) HINTS.delete(this.key);
  }
}

/** The registry key of a database file: its resolved real path; null for a private (in-memory) one. */
function databaseKey(path: string): string | null {
  if (path === '' || path === ':memory:' || path.startsWith('file::memory:')) return null;
  try {
    return realpathSync(path);
  } catch {
    return resolve(path);
  }
}

/**
 * Notices commits by other connections to one database file, on a read connection of its own, by
 * `PRAGMA data_version` (it changes when another connection commits; it reads no table): checked when the
 * WAL file changes (fs.watch, no timer while nothing is written) and a few times after, since the change
 * can precede the commit's visibility; where the WAL file cannot be watched, every WATCH_POLL_MS.
 */
class CommitWatch {
  readonly #db: SqliteDatabase;
  readonly #version: SqliteStatement;
  readonly #head: SqliteStatement;
  readonly #onCommit: () => void;
  #last: unknown;
  #fs: FSWatcher | null = null;
  #timer: NodeJS.Timeout | null = null;
  #settle = 0;
  #closed = false;
  /** How many times data_version was read. */
  checks = 0;
  /** How many changes of data_version were seen. */
  commits = 0;

  /** Watches `walPath` (null: polls every WATCH_POLL_MS). */
  constructor(db: SqliteDatabase, walPath: string | null, onCommit: () => void) {
    this.#db = db;
    this.#onCommit = onCommit;
    this.#version = db.prepare('PRAGMA data_version');
    this.#head = db.prepare('SELECT position FROM events ORDER BY position DESC LIMIT 1');
    this.#last = this.#read();
    if (walPath === null) {
      this.#poll();
      return;
    }
    try {
      // Not persistent: a watch alone does not keep the process alive.
      this.#fs = watch(walPath, { persistent: false }, (event) => {
        if (event === 'change') this.#changed();
        else this.#poll(); // Renamed or deleted: the watch is of a file that is gone.
      });
      this.#fs.on('error', () => this.#poll());
    } catch {
      this.#poll();
    }
  }

  /** Whether a check is scheduled. */
  get scheduled(): boolean {
    return this.#timer !== null;
  }

  /** The newest event position (null when it cannot be read). */
  head(): number | null {
    try {
      return ((this.#head.get() as { position?: number } | undefined)?.position ?? 0) as number;
    } catch {
      return null;
    }
  }

  #read(): unknown {
    this.checks++;
    try {
      return (this.#version.get() as { data_version?: unknown } | undefined)?.data_version;
    } catch {
      return this.#last;
    }
  }

  /** Reads data_version; a change is a commit by another connection. */
  #check(): void {
    if (this.#closed) return;
    const v = this.#read();
    if (v === this.#last) return;
    this.#last = v;
    this.commits++;
    this.#onCommit();
  }

  /** The WAL file changed: check now, and again after each settle delay (restarted by the next change). */
  #changed(): void {
    if (this.#closed || this.#fs === null) return;
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#settle = 0;
    this.#next();
  }

  #next(): void {
    const delay = SETTLE_CHECKS_MS[this.#settle++];
    if (delay === undefined) {
      this.#timer = null;
      return;
    }
    this.#timer = setTimeout(() => {
      this.#check();
      this.#next();
    }, delay);
    this.#timer.unref();
  }

  /** Falls back to checking every WATCH_POLL_MS. */
  #poll(): void {
    if (this.#closed) return;
    this.#fs?.close();
    this.#fs = null;
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = setInterval(() => this.#check(), WATCH_POLL_MS);
    this.#timer.unref();
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#fs?.close();
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    try {
      this.#db.close();
    } catch {
      // Closing a read connection cannot lose anything.
    }
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
