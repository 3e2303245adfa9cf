// The driver shim: better-sqlite3 under Node, bun:sqlite under Bun, behind one structural interface.
import { createRequire } from 'node:module';

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

interface DriverModule {
  open(path: string, readonly: boolean, busyTimeoutMs: number): SqliteDatabase;
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
      open(path, readonly, busyTimeoutMs) {
        const db = new mod.Database(
          path,
          readonly ? { readonly: true } : { create: true, readwrite: true, strict: true },
        );
        db.exec(`PRAGMA busy_timeout = ${Math.trunc(busyTimeoutMs)}`);
        return wrapBun(db);
      },
    };
  } else {
    const require = createRequire(import.meta.url);
    const Database = require('better-sqlite3') as new (
      path: string,
      opts: { readonly?: boolean; timeout?: number; fileMustExist?: boolean },
    ) => SqliteDatabase;
    driver = {
      name: 'better-sqlite3',
      open(path, readonly, busyTimeoutMs) {
        return new Database(path, { readonly, timeout: busyTimeoutMs, fileMustExist: readonly });
      },
    };
  }
  return driver;
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

/** Opens a database file with the runtime's driver. */
export async function openSqlite(
  path: string,
  opts: { readonly?: boolean; busyTimeoutMs: number },
): Promise<{ db: SqliteDatabase; driver: string }> {
  const d = await loadDriver();
  return { db: d.open(path, opts.readonly ?? false, opts.busyTimeoutMs), driver: d.name };
}
