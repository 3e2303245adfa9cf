// A better-sqlite3 whose native addon is missing or unloadable fails with a STORAGE_UNAVAILABLE that
// says how to fix it, not the driver's raw "Could not locate the bindings file".
import { cpSync, mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { mapSqliteError } from '../../src/backends/sqlite/connection.js';
import { betterSqlite3Driver, missingAddonError } from '../../src/backends/sqlite/driver.js';
import { isAgentStateError } from '../../src/errors.js';
import { tempDir } from '../helpers/tmp.js';

const dir = tempDir();
const require = createRequire(import.meta.url);
const realRoot = dirname(require.resolve('better-sqlite3/package.json'));

/**
 * A copy of the installed better-sqlite3 without its build/ folder (as after an install whose script
 * did not run), next to copies of the packages it loads the addon with; the shared node_modules is
 * left alone. `addon` writes a file where the compiled addon would be.
 */
function copyWithoutAddon(name: string, addon?: string): () => unknown {
  const modules = join(dir, name, 'node_modules');
  const root = join(modules, 'better-sqlite3');
  mkdirSync(root, { recursive: true });
  cpSync(join(realRoot, 'package.json'), join(root, 'package.json'));
  cpSync(join(realRoot, 'lib'), join(root, 'lib'), { recursive: true });
  for (const dep of ['bindings', 'file-uri-to-path']) {
    cpSync(dirname(require.resolve(`${dep}/package.json`)), join(modules, dep), { recursive: true });
  }
  if (addon !== undefined) {
    mkdirSync(join(root, 'build', 'Release'), { recursive: true });
    writeFileSync(join(root, 'build', 'Release', 'better_sqlite3.node'), addon);
  }
  const local = createRequire(join(dir, name, 'index.js'));
  return () => local('better-sqlite3');
}

function openError(load: () => unknown, path = join(dir, 'x.sqlite')): unknown {
  try {
    betterSqlite3Driver(load).open(path, false, 1000).close();
  } catch (err) {
    return err;
  }
  throw new Error('open succeeded');
}

describe('sqlite driver: a missing native addon', () => {
  it('an addon that was never built says to rebuild it or approve its install script', () => {
    const err = openError(copyWithoutAddon('unbuilt'));
    expect(isAgentStateError(err, 'STORAGE_UNAVAILABLE')).toBe(true);
    const e = err as Error & { details: Record<string, unknown>; cause: Error };
    expect(e.message).toContain('npm rebuild better-sqlite3');
    expect(e.message).toContain('npm approve-scripts better-sqlite3');
    expect(e.details).toMatchObject({ driver: 'better-sqlite3', node: process.version });
    expect(String(e.details.reason)).toMatch(/Could not locate the bindings file/);
    expect(e.cause.message).toMatch(/Could not locate the bindings file/);
    // The connection keeps it as it is (exit 5 at the CLI), instead of passing a raw error on.
    expect(mapSqliteError(err, 'x.sqlite')).toBe(err);
  });

  it('an addon that does not load (another platform or Node.js ABI) gets the same advice', () => {
    const err = openError(copyWithoutAddon('foreign', 'not a shared object'));
    expect(isAgentStateError(err, 'STORAGE_UNAVAILABLE')).toBe(true);
    expect((err as Error).message).toContain('npm rebuild better-sqlite3');
    expect((err as Error).message).toMatch(/built for another Node\.js .*ABI \d+/);
  });

  it('better-sqlite3 not installed at all is named as such', () => {
    const err = openError(() => createRequire(join(dir, 'empty', 'index.js'))('better-sqlite3'));
    expect(isAgentStateError(err, 'STORAGE_UNAVAILABLE')).toBe(true);
    expect((err as Error).message).toMatch(/^better-sqlite3 is not installed: .*npm rebuild better-sqlite3/);
  });

  it('ordinary open errors are left to the connection to map', () => {
    expect(
      missingAddonError(
        Object.assign(new Error('unable to open database file'), { code: 'SQLITE_CANTOPEN' }),
      ),
    ).toBe(undefined);
    const err = openError(() => require('better-sqlite3'), join(dir, 'no', 'such', 'folder', 'x.sqlite'));
    expect(isAgentStateError(err)).toBe(false);
    expect((err as Error).message).not.toContain('rebuild');
  });
});
