// Every public export has TSDoc: each name the package's entry points (package.json `exports`) export, followed
// through re-exports to its declaration, carries a non-empty `/** … */`, and so does every public member of
// the main API's classes and interfaces. Editors show these comments on hover; a name without one is a name
// a user has to read the source for.
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/cli.js';

/**
 * Exports whose comments a change in progress elsewhere will write (none today): `entry:name` → the file
 * declaring it. Keep this exact: a name documented since, moved, or no longer exported fails the test below.
 */
const OWNED_ELSEWHERE: Record<string, string> = {};

/** Exports declared outside this package (none today): `entry:name` → why it is re-exported undocumented. */
const THIRD_PARTY: Record<string, string> = {};

/**
 * Whose members each need a comment too: every exported class; the interfaces named `…Options` (where the
 * defaults are) or `…Input` (what the services' methods take); and these, the rest of the main API — what
 * users get from `openInstance`/`createStore` and what a backend or a kind implements.
 */
const MEMBER_DOCS_REQUIRED = new Set([
  'Store',
  'StoreBackend',
  'WorkItemBackend',
  'EventBackend',
  'KindDefinition',
  'OperationContext',
]);
const needsMembers = (name: string, decls: ts.Declaration[]): boolean =>
  decls.some(ts.isClassDeclaration) ||
  (decls.some(ts.isInterfaceDeclaration) && /(Options|Input)$/.test(name)) ||
  MEMBER_DOCS_REQUIRED.has(name);

/** The entry points' source files: `./dist/X.d.ts` (the ESM `types` condition) → `src/X.ts`. */
function entryPoints(): Map<string, string> {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    exports: Record<string, string | { import?: { types?: string } }>;
  };
  const entries = new Map<string, string>();
  for (const [subpath, target] of Object.entries(pkg.exports)) {
    if (typeof target === 'string') continue; // ./package.json
    // The types entry, not the code: ./langgraph's code is entry.js, a loader of index.js that says which
    // peer dependency is missing, and re-exports index.ts's names with no declarations of its own.
    const types = target.import?.types;
    if (!types?.startsWith('./dist/') || !types.endsWith('.d.ts')) {
      throw new Error(`exports["${subpath}"]: no ./dist/*.d.ts types entry`);
    }
    entries.set(subpath, join(ROOT, 'src', `${types.slice('./dist/'.length, -'.d.ts'.length)}.ts`));
  }
  return entries;
}

function program(files: string[]): ts.Program {
  const config = ts.readConfigFile(join(ROOT, 'tsconfig.json'), ts.sys.readFile);
  const { options } = ts.parseJsonConfigFileContent(config.config, ts.sys, ROOT);
  return ts.createProgram(files, { ...options, noEmit: true });
}

/** The description of a declaration's `/** … *\/` (tags alone, e.g. only `@default`, do not count). */
function described(node: ts.Node): boolean {
  return ts
    .getJSDocCommentsAndTags(node)
    .some((doc) => ts.isJSDoc(doc) && (ts.getTextOfJSDocComment(doc.comment) ?? '').trim() !== '');
}

const isPrivate = (m: ts.ClassElement | ts.TypeElement): boolean =>
  (m.name !== undefined && ts.isPrivateIdentifier(m.name)) ||
  (ts.canHaveModifiers(m) &&
    (ts.getModifiers(m) ?? []).some(
      (x) => x.kind === ts.SyntaxKind.PrivateKeyword || x.kind === ts.SyntaxKind.ProtectedKeyword,
    ));

/**
 * The public members of a class or interface without a comment. Constructors are left out: the main classes
 * are built by `createStore` and `openInstance`, and a class's own comment says how to make one. Overloads
 * and a getter/setter pair count as one member, documented if any of its declarations is.
 */
function undocumentedMembers(decls: ts.Declaration[]): string[] {
  const byName = new Map<string, boolean>();
  for (const d of decls) {
    if (!ts.isClassDeclaration(d) && !ts.isInterfaceDeclaration(d)) continue;
    for (const m of d.members as ts.NodeArray<ts.ClassElement | ts.TypeElement>) {
      if (ts.isConstructorDeclaration(m) || ts.isClassStaticBlockDeclaration(m) || isPrivate(m)) continue;
      if (m.name === undefined) continue; // index and call signatures
      const name = ts.isIdentifier(m.name) || ts.isStringLiteral(m.name) ? m.name.text : m.name.getText();
      byName.set(name, (byName.get(name) ?? false) || described(m));
    }
  }
  return [...byName].filter(([, ok]) => !ok).map(([name]) => name);
}

interface Finding {
  /** `entry:name`. */
  key: string;
  /** Where the declaration is, relative to the package. */
  file: string;
  /** The export's own comment is missing. */
  missing: boolean;
  /** Members without a comment. */
  members: string[];
}

function audit(): Finding[] {
  const entries = entryPoints();
  const prog = program([...entries.values()]);
  const checker = prog.getTypeChecker();
  const findings: Finding[] = [];
  // A name exported from several entry points (redactUrl, listInstances' types…) is counted once per
  // declaration, reported under the first entry that exports it.
  const seen = new Set<ts.Symbol>();
  for (const [subpath, file] of entries) {
    const source = prog.getSourceFile(file);
    if (!source) throw new Error(`${relative(ROOT, file)}: not found (exports["${subpath}"])`);
    const moduleSymbol = checker.getSymbolAtLocation(source);
    if (!moduleSymbol) throw new Error(`${relative(ROOT, file)}: not a module`);
    for (const exported of checker.getExportsOfModule(moduleSymbol)) {
      const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
      if (seen.has(symbol)) continue;
      seen.add(symbol);
      const decls = symbol.getDeclarations() ?? [];
      const where = decls[0]?.getSourceFile().fileName ?? '?';
      const key = `${subpath}:${exported.name}`;
      const missing = !decls.some(described);
      const members = needsMembers(exported.name, decls) ? undocumentedMembers(decls) : [];
      findings.push({ key, file: relative(ROOT, where), missing, members });
    }
  }
  return findings;
}

describe('TSDoc', () => {
  const findings = audit();
  const owned = (f: Finding) => f.key in OWNED_ELSEWHERE || f.key in THIRD_PARTY;

  it('finds the exports of every entry point', () => {
    // A sanity floor, so a broken resolution (no exports found) does not pass as "all documented".
    for (const subpath of entryPoints().keys()) {
      expect(findings.filter((f) => f.key.startsWith(`${subpath}:`)).length, subpath).toBeGreaterThan(0);
    }
    for (const name of ['DocumentStore', 'EventLog', 'Instance', 'WorkQueue']) {
      expect(findings.map((f) => f.key)).toContain(`.:${name}`);
    }
  });

  it('every public export, and every public member of the main classes and interfaces, has a comment', () => {
    const gaps = findings
      .filter((f) => !owned(f) && (f.missing || f.members.length > 0))
      .map((f) => {
        const what = [
          ...(f.missing ? ['no comment'] : []),
          ...(f.members.length > 0
            ? [`members without one: ${f.members.map((m) => `.${m}`).join(' ')}`]
            : []),
        ];
        return `${f.key} (${f.file}): ${what.join('; ')}`;
      });
    expect(gaps, `${gaps.length} undocumented:\n${gaps.join('\n')}`).toEqual([]);
  });

  it('OWNED_ELSEWHERE and THIRD_PARTY name only exports that exist and still lack a comment', () => {
    const byKey = new Map(findings.map((f) => [f.key, f]));
    for (const [key, why] of Object.entries({ ...OWNED_ELSEWHERE, ...THIRD_PARTY })) {
      const f = byKey.get(key);
      expect(f, `${key}: not exported`).toBeDefined();
      expect(f!.missing || f!.members.length > 0, `${key} is documented now: drop it (${why})`).toBe(true);
    }
  });

  it('THIRD_PARTY holds only declarations from node_modules, OWNED_ELSEWHERE names their files', () => {
    for (const f of findings) {
      const external = f.file.split('/').includes('node_modules');
      if (f.key in THIRD_PARTY) expect(external, f.key).toBe(true);
      if (f.key in OWNED_ELSEWHERE) expect(f.file, f.key).toBe(OWNED_ELSEWHERE[f.key]);
    }
  });
});
