// The two backends correspond by function, not only by file: for each file both src/backends/sqlite and
// src/backends/postgres have, the functions it exports have the same names in both, so an operation is found
// under one name whichever backend it runs on. What only one backend has, for a reason, is listed below.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/cli.js';

const BACKENDS = join(ROOT, 'src', 'backends');
type Backend = 'sqlite' | 'postgres';

/**
 * The functions a backend file has and the other's counterpart need not: file → backend → name → why.
 * Each reason says what the function is for and why the other backend has no such thing.
 */
const ONLY_IN: Record<string, Partial<Record<Backend, Record<string, string>>>> = {
  'backend.ts': {
    sqlite: { openSqliteBackend: 'the public entry point, named for its backend (src/index.ts exports it)' },
    postgres: {
      openPostgresBackend: 'the public entry point, named for its backend (the ./postgres subpath)',
    },
  },
  'connection.ts': {
    sqlite: { mapSqliteError: "better-sqlite3's and bun:sqlite's errors to AgentStateErrors, by file path" },
    postgres: {
      mapPgError: "pg's errors and SQLSTATEs to AgentStateErrors, with the URL's password redacted",
      names: 'the schema-qualified table names: SQLite has one file per instance and no schema',
      checkSchema: 'validates a schema name: SQLite has none',
      isConnectionError: 'a network failure of the server: SQLite is a local file',
      acquirePool: 'pools shared by stores with equal settings: SQLite opens one file handle',
      releasePool: 'pools shared by stores with equal settings: SQLite opens one file handle',
      withPool: 'borrows a shared pool for one call (listing instances): SQLite has no pool',
      openPools: 'the pools open in this process, for tests and diagnostics: SQLite has no pool',
      recordset:
        'a batch of rows as one JSON parameter read as a table: SQLite runs a prepared statement per row',
      jsonRows:
        'many result rows as one JSON value: SQLite returns rows as they are, with no later-column risk',
    },
  },
  'driver.ts': {
    sqlite: {
      openSqlite: 'opens a database file with the runtime driver (better-sqlite3 or bun:sqlite)',
      betterSqlite3Driver: 'loads the native addon: pg is plain JavaScript',
      missingAddonError: 'explains a native addon built for another Node.js: pg has none',
    },
    postgres: {
      createPool: 'a pg pool: SQLite opens a file (openSqlite)',
      createListener: 'a dedicated LISTEN connection: SQLite has no NOTIFY',
    },
  },
  'events.ts': {
    postgres: {
      oneEventCtes: 'builds the SQL that appends one event inside a statement: SQLite appends in JavaScript',
      computedEventCtes:
        'builds the SQL for an event whose fields the statement computes (one-statement claim/resolve)',
      appendEventsCtes: 'builds the SQL that appends events inside a statement: SQLite appends in JavaScript',
      pendingOne: "one event's parameters for oneEventCtes",
      appendedEvents: 'the stored events from the rows append_events returned: SQLite computes them itself',
      eventHeadExists: "whether the instance's head row exists: a SQLite instance is its file",
      ensureEventHead:
        'creates the head row every appender locks: SQLite serializes writers by BEGIN IMMEDIATE',
    },
  },
  'instances.ts': {
    sqlite: {
      instanceHead: 'one instance per file: the head of one file (src/instance/list.ts walks the folders)',
    },
    postgres: { listInstances: 'many instances per schema: one query lists them all' },
  },
  'migrate.ts': {
    postgres: { migrationLockKey: "the advisory lock key of a schema's migrations: SQLite locks the file" },
  },
  'work-items.ts': {
    postgres: {
      enqueueCtes:
        "builds the SQL that inserts items inside a statement (a document commit's, in one statement)",
      settleEnqueue:
        'completes what enqueueCtes inserted (existing idempotency keys, events): SQLite inserts row by row',
    },
  },
};

/** The names of the functions `file` exports: function declarations, and consts bound to a function. */
function exportedFunctions(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const out: string[] = [];
  const exported = (n: ts.Node) =>
    ts.canHaveModifiers(n) && (ts.getModifiers(n) ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
  for (const st of source.statements) {
    if (!exported(st)) continue;
    if (ts.isFunctionDeclaration(st) && st.name) out.push(st.name.text);
    if (ts.isVariableStatement(st)) {
      for (const d of st.declarationList.declarations) {
        const init = d.initializer;
        if (
          ts.isIdentifier(d.name) &&
          init &&
          (ts.isArrowFunction(init) || ts.isFunctionExpression(init) || ts.isIdentifier(init))
        ) {
          out.push(d.name.text);
        }
      }
    }
  }
  return out.sort();
}

/** The names one backend's file exports that the other's does not, and are not listed in ONLY_IN. */
function unmatched(
  file: string,
  names: Record<Backend, string[]>,
  only = ONLY_IN,
): Array<{ backend: Backend; name: string; problem: string }> {
  const problems: Array<{ backend: Backend; name: string; problem: string }> = [];
  for (const [backend, other] of [
    ['sqlite', 'postgres'],
    ['postgres', 'sqlite'],
  ] as const) {
    const allowed = only[file]?.[backend] ?? {};
    for (const name of names[backend]) {
      if (!names[other].includes(name) && !(name in allowed)) {
        problems.push({
          backend,
          name,
          problem: `only in ${backend}/${file}: add it to ${other} or list why not`,
        });
      }
    }
    for (const name of Object.keys(allowed)) {
      if (!names[backend].includes(name)) {
        problems.push({
          backend,
          name,
          problem: `listed as ${backend}-only but ${backend}/${file} exports no ${name}`,
        });
      } else if (names[other].includes(name)) {
        problems.push({
          backend,
          name,
          problem: `listed as ${backend}-only but ${other}/${file} has it too`,
        });
      }
    }
  }
  return problems;
}

const filesOf = (b: Backend) => readdirSync(join(BACKENDS, b)).filter((f) => f.endsWith('.ts'));
const shared = filesOf('sqlite').filter((f) => filesOf('postgres').includes(f));

describe('backend names', () => {
  it('compares the files both backends have', () => {
    expect(shared).toEqual(
      expect.arrayContaining(['work-items.ts', 'documents.ts', 'events.ts', 'dump.ts', 'instances.ts']),
    );
    for (const file of Object.keys(ONLY_IN)) expect(shared, file).toContain(file);
  });

  it.each(shared)('%s exports its operations under the same names in both backends', (file) => {
    const names = {
      sqlite: exportedFunctions(join(BACKENDS, 'sqlite', file)),
      postgres: exportedFunctions(join(BACKENDS, 'postgres', file)),
    };
    expect(unmatched(file, names)).toEqual([]);
  });

  it('fails on a function only one backend has, and on a stale allow-list entry', () => {
    const names = {
      sqlite: ['claim', 'enqueue', 'get'],
      postgres: ['claim', 'enqueueMany', 'get', 'listen'],
    };
    const only = { 'x.ts': { postgres: { listen: 'NOTIFY', gone: 'no longer exported' } } };
    expect(unmatched('x.ts', names, only).map((p) => `${p.backend}:${p.name}`)).toEqual([
      'sqlite:enqueue',
      'postgres:enqueueMany',
      'postgres:gone',
    ]);
  });

  it('reads the operations of both work-item files', () => {
    for (const b of ['sqlite', 'postgres'] as const) {
      expect(exportedFunctions(join(BACKENDS, b, 'work-items.ts'))).toEqual(
        expect.arrayContaining([
          'enqueue',
          'claim',
          'heartbeat',
          'resolve',
          'resolveEach',
          'release',
          'retry',
        ]),
      );
    }
  });
});
