// The driver shim: better-sqlite3 under Node, bun:sqlite under Bun, behind one structural interface.
import { createRequire } from 'node:module';
import { StorageUnavailableError } from '../../errors.js';

/** The subset of a prepared statement agentstate uses (positional parameters only). */
export interface SqliteStatement {
  run(...params: unknown[]): { changes: number };
  get(...params: unknown[]): unknown;
  all(...params: unknown[]): unknown[];
}

/** The subset of a database connection agentstate uses. */
export interface SqliteDatabase {
  prepare(sql: string): SqliteStatement;
  exec(sql: string): void;
  close(): void;
}

/** One runtime's driver: how to open a database file (created when missing unless readonly or mustExist). */
export interface DriverModule {
  open(path: string, readonly: boolean, busyTimeoutMs: number, mustExist?: boolean): SqliteDatabase;
  name: string;
}

let driver: DriverModule | undefined;

/** True when running under Bun, where better-sqlite3 does not load. */
export const isBun = typeof (process.versions as Record<string, string | undefined>).bun === 'string';

async function loadDriver(): Promise<DriverModule> {
  if (driver) return driver;
  if (isBun) {
    const specifier = 'bun:sqlite';
    const mod = (await import(specifier)) as {
      Database: new (path: string, opts: Record<string, boolean>) => SqliteDatabase & { query?: unknown };
    };
    driver = {
      name: 'bun:sqlite',
      open(path, readonly, busyTimeoutMs, mustExist = false) {
        const db = new mod.Database(
          path,
          readonly ? { readonly: true } : { create: !mustExist, readwrite: true, strict: true },
        );
        db.exec(`PRAGMA busy_timeout = ${Math.trunc(busyTimeoutMs)}`);
        return wrapBun(db);
      },
    };
  } else {
    driver = betterSqlite3Driver();
  }
  return driver;
}

type BetterSqlite3 = new (
  path: string,
  opts: { readonly?: boolean; timeout?: number; fileMustExist?: boolean },
) => SqliteDatabase;

/**
 * The better-sqlite3 driver. `load` returns the module; it is a parameter so a test can load a copy
 * whose native addon is missing without touching the installed one.
 */
export function betterSqlite3Driver(
  load: () => unknown = () => createRequire(import.meta.url)('better-sqlite3'),
): DriverModule {
  let Database: BetterSqlite3 | undefined;
  return {
    name: 'better-sqlite3',
    open(path, readonly, busyTimeoutMs, mustExist = false) {
      try {
        Database ??= load() as BetterSqlite3;
        // The addon itself is loaded by the first constructor call, so this is where it fails.
        return new Database(path, { readonly, timeout: busyTimeoutMs, fileMustExist: readonly || mustExist });
      } catch (err) {
        throw missingAddonError(err) ?? err;
      }
    },
  };
}

/**
 * A readable error for a better-sqlite3 whose native addon is absent or will not load (its install
 * script was skipped, was not approved, failed, or ran under another Node.js), else undefined.
 */
export function missingAddonError(err: unknown): StorageUnavailableError | undefined {
  const code = String((err as { code?: unknown })?.code ?? '');
  const message = err instanceof Error ? err.message : String(err);
  const notInstalled = code === 'MODULE_NOT_FOUND' && /'better-sqlite3'/.test(message);
  const addon =
    code === 'ERR_DLOPEN_FAILED' ||
    /Could not locate the bindings file|better_sqlite3\.node|NODE_MODULE_VERSION/.test(message);
  if (!notInstalled && !addon) return undefined;
  const what = notInstalled
    ? 'better-sqlite3 is not installed'
    : `better-sqlite3's native addon is missing or was built for another Node.js (this is Node ${process.version}, ABI ${process.versions.modules})`;
  return new StorageUnavailableError(
    `${what}: its install script did not run, was not approved, or failed. ` +
      'Fix: run `npm rebuild better-sqlite3` in your project (if npm lists better-sqlite3 among scripts ' +
      'not yet reviewed, approve it first: `npm approve-scripts better-sqlite3`); without a prebuilt ' +
      'binary for this platform it builds from source, which needs python3, make and a C++ compiler',
    {
      driver: 'better-sqlite3',
      node: process.version,
      abi: process.versions.modules,
      reason: message.split('\n')[0] ?? '',
    },
    { cause: err },
  );
}

/** bun:sqlite returns null for "no row"; better-sqlite3 returns undefined. Normalize to undefined. */
function wrapBun(db: SqliteDatabase): SqliteDatabase {
  return {
    prepare(sql) {
      const st = db.prepare(sql);
      return {
        run: (...p) => st.run(...p),
        get: (...p) => st.get(...p) ?? undefined,
        all: (...p) => st.all(...p),
      };
    },
    exec: (sql) => db.exec(sql),
    close: () => db.close(),
  };
}

/** Opens a database file with the runtime's driver; a missing file is created unless readonly or mustExist. */
export async function openSqlite(
  path: string,
  opts: { readonly?: boolean; mustExist?: boolean; busyTimeoutMs: number },
): Promise<{ db: SqliteDatabase; driver: string }> {
  const d = await loadDriver();
  return {
    db: d.open(path, opts.readonly ?? false, opts.busyTimeoutMs, opts.mustExist ?? false),
    driver: d.name,
  };
}
