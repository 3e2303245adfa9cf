// Instances on every backend for one test file: embedded SQLite always, PostgreSQL when a server answers
// (required under CI=true), each test with an instance of its own.
import { join } from 'node:path';
import { type Instance, type OpenInstanceOptions, openInstance } from '../../src/instance/instance.js';
import { PG_URL, postgresForThisFile } from './postgres.js';
import { tempDir } from './tmp.js';

export interface BackendUnderTest {
  name: 'sqlite' | 'postgres';
  /**
   * Opens a fresh instance (a new folder; on PostgreSQL a new instance name in this file's schema).
   * Pass the same `key` again to open a second handle on the same instance.
   */
  open(key?: string, extra?: Partial<OpenInstanceOptions>): Promise<Instance>;
  /** The CLI flags that reach the instance opened with `key`. */
  cliArgs(key: string): string[];
}

let n = 0;

/** The backends this file's tests run on. Call once, at the top level of the file. */
export async function backendsForThisFile(): Promise<BackendUnderTest[]> {
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
  }
  return list;
}
