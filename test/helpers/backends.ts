// Instances on every backend for one test file: embedded SQLite always, PostgreSQL when a server answers
// (required under CI=true), each test with an instance of its own; on request, PostgreSQL once more through a
// PgBouncer of the file's own in transaction mode (how hosted PostgreSQL is reached).
import { join } from 'node:path';
import { type Instance, type OpenInstanceOptions, openInstance } from '../../src/instance/instance.js';
import { pgbouncerForThisFile } from './pgbouncer.js';
import { PG_URL, postgresForThisFile } from './postgres.js';
import { tempDir } from './tmp.js';

export interface BackendUnderTest {
  name: 'sqlite' | 'postgres' | 'pooled';
  /**
   * Opens a fresh instance (a new folder; on PostgreSQL a new instance name in this file's schema).
   * Pass the same `key` again to open a second handle on the same instance.
   */
  open(key?: string, extra?: Partial<OpenInstanceOptions>): Promise<Instance>;
  /** The CLI flags that reach the instance opened with `key`. */
  cliArgs(key: string): string[];
}

let n = 0;

/** Which backends beyond the two a file asks for. */
export interface BackendsOptions {
  /**
   * Also `pooled`: the file's PostgreSQL schema through a PgBouncer in transaction mode (two server
   * connections shared by every client; `?pool_mode=transaction`), so session state the code relied on
   * (advisory locks held past a transaction, LISTEN, prepared statements) would show. Needs pgbouncer
   * (CI=true requires it; elsewhere it is skipped with a line saying so).
   */
  pooled?: boolean;
}

/** The backends this file's tests run on. Call once, at the top level of the file. */
export async function backendsForThisFile(options: BackendsOptions = {}): Promise<BackendUnderTest[]> {
  const root = tempDir();
  const schema = await postgresForThisFile();
  const dirOf = (key: string) => join(root, key);
  const list: BackendUnderTest[] = [
    {
      name: 'sqlite',
      open: (key = `i${++n}`, extra = {}) => openInstance({ dir: dirOf(key), ...extra }),
      cliArgs: (key) => ['--dir', dirOf(key)],
    },
  ];
  if (schema !== null) {
    const url = `${PG_URL}?schema=${schema}`;
    list.push({
      name: 'postgres',
      open: (key = `i${++n}`, extra = {}) =>
        openInstance({ dir: dirOf(`pg-${key}`), url, postgres: { poolSize: 4 }, ...extra }),
      cliArgs: (key) => ['--dir', dirOf(`pg-${key}`), '--url', url],
    });
    const bouncer = options.pooled ? await pgbouncerForThisFile() : null;
    if (bouncer !== null) {
      const pooledUrl = `${bouncer.url}?schema=${schema}&pool_mode=transaction`;
      list.push({
        name: 'pooled',
        open: (key = `i${++n}`, extra = {}) =>
          openInstance({ dir: dirOf(`pooled-${key}`), url: pooledUrl, postgres: { poolSize: 4 }, ...extra }),
        cliArgs: (key) => ['--dir', dirOf(`pooled-${key}`), '--url', pooledUrl],
      });
    }
  }
  return list;
}
