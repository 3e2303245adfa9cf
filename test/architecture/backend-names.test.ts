// The two backends correspond by function, not only by file: src/backends/sqlite and src/backends/postgres
// have the same files at any depth (work/claim.ts in both), and the functions each file exports have
// the same names in both, so an operation is found in one place under one name whichever backend it runs
// on. What only one backend has, for a reason, is listed below.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/cli.js';

const BACKENDS = join(ROOT, 'src', 'backends');
type Backend = 'sqlite' | 'postgres';

/**
 * The files (paths under src/backends/<backend>/) only one backend has: backend → path → why (none today).
 * Migrations are left out: each backend has its own SQL dialect, and their numbers are checked elsewhere.
 */
const ONLY_FILES: Partial<Record<Backend, Record<string, string>>> = {};

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
  'work/claim.ts': {
    postgres: {
      fieldsSql:
        "the SQL text of an event codec's fields, for the statements that write an event in SQL: SQLite appends every event as JavaScript builds it",
    },
  },
  'work/enqueue.ts': {
    postgres: {
      enqueueCtes:
        "builds the SQL that inserts items inside a statement (a document commit's, in one statement)",
      settleEnqueue:
        'completes what enqueueCtes inserted (existing idempotency keys, events): SQLite inserts row by row',
    },
  },
  'work/shared.ts': {
    postgres: {
      ready:
        "the ready condition over the instance's tables and a `now` parameter: SQLite's is a string, READY",
      dueAndUnblocked:
        'the ready condition less its status test (for reclaimed items): SQLite has READY alone',
      sameItem:
        "a CTE's row joined to its item by instance and id (a primary-key lookup): SQLite has no instance",
      dependantsOf:
        "a LATERAL join to a blocker's rows of work_item_blockers, kept apart: SQLite joins them inline",
      itemById:
        "a LATERAL primary-key lookup of one item, kept in the loop: SQLite's CROSS JOIN fixes the order",
      updateOne:
        "an UPDATE … RETURNING * of one row as JSON (immune to later columns): SQLite's rows come as is",
      commitEvents:
        "appends a transaction's events pipelined with COMMIT and its NOTIFY hint: SQLite calls writeEvents",
      oneStatementPays:
        'whether a claim or resolve is one statement that builds its event: SQLite has no round trips',
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

/** The files one backend's folder and the other's do not both have, and are not listed in ONLY_FILES. */
function unmatchedFiles(
  files: Record<Backend, string[]>,
  only = ONLY_FILES,
): Array<{ backend: Backend; file: string; problem: string }> {
  const problems: Array<{ backend: Backend; file: string; problem: string }> = [];
  for (const [backend, other] of [
    ['sqlite', 'postgres'],
    ['postgres', 'sqlite'],
  ] as const) {
    const allowed = only[backend] ?? {};
    for (const file of files[backend]) {
      if (!files[other].includes(file) && !(file in allowed)) {
        problems.push({
          backend,
          file,
          problem: `only in ${backend}/: add ${other}/${file} or list why not`,
        });
      }
    }
    for (const file of Object.keys(allowed)) {
      if (!files[backend].includes(file)) {
        problems.push({ backend, file, problem: `listed as ${backend}-only but ${backend}/ has no ${file}` });
      } else if (files[other].includes(file)) {
        problems.push({ backend, file, problem: `listed as ${backend}-only but ${other}/ has it too` });
      }
    }
  }
  return problems;
}

/** The TypeScript files under `dir` at any depth, as paths relative to `base` with `/` between folders. */
function tsFiles(dir: string, base = dir): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((e) =>
      e.isDirectory()
        ? tsFiles(join(dir, e.name), base)
        : e.name.endsWith('.ts')
          ? [relative(base, join(dir, e.name)).split(sep).join('/')]
          : [],
    )
    .sort();
}

const filesOf = (b: Backend) => tsFiles(join(BACKENDS, b)).filter((f) => !f.startsWith('migrations/'));
const shared = filesOf('sqlite').filter((f) => filesOf('postgres').includes(f));
const WORK = ['backend', 'shared', 'enqueue', 'claim', 'lease', 'record', 'status', 'read', 'limits'].map(
  (f) => `work/${f}.ts`,
);

describe('backend names', () => {
  it('compares the files both backends have, in sub-folders too', () => {
    expect(shared).toEqual(
      expect.arrayContaining([...WORK, 'documents.ts', 'events.ts', 'dump.ts', 'instances.ts']),
    );
    for (const file of Object.keys(ONLY_IN)) expect(shared, file).toContain(file);
  });

  it('both backends have the same files, at any depth', () => {
    expect(unmatchedFiles({ sqlite: filesOf('sqlite'), postgres: filesOf('postgres') })).toEqual([]);
  });

  it('fails on a file only one backend has, and on a stale allow-list entry', () => {
    const files = {
      sqlite: ['backend.ts', 'work/claim.ts', 'work/read.ts'],
      postgres: ['backend.ts', 'work/claim.ts', 'work/reads.ts', 'listen.ts'],
    };
    const only = { postgres: { 'listen.ts': 'NOTIFY', 'gone.ts': 'no longer there' } };
    expect(unmatchedFiles(files, only).map((p) => `${p.backend}:${p.file}`)).toEqual([
      'sqlite:work/read.ts',
      'postgres:work/reads.ts',
      'postgres:gone.ts',
    ]);
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

  it('reads the operations of both work folders', () => {
    for (const b of ['sqlite', 'postgres'] as const) {
      const names = WORK.flatMap((f) => exportedFunctions(join(BACKENDS, b, f)));
      expect(names).toEqual(
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
