// Kinds own their operations, and every kind is laid out the same way: the service names no kind (no kind's
// name as a string, no import from a kind's folder), and a kind folder holds only the files of the layout.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { kindNames } from '../../src/kinds/registry.js';
import { ROOT } from '../helpers/cli.js';

const SRC = join(ROOT, 'src');

/** Each job of a kind has one file name (a kind has only the files it needs); README.md documents it. */
const LAYOUT = ['schema.ts', 'model.ts', 'rules.ts', 'file.ts', 'operations.ts', 'kind.ts', 'README.md'];

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

/** The folders holding a kind: src/kinds/<kind>/ and an adapter's kinds/ folder (all of that adapter's kinds). */
function kindFolders(): string[] {
  const dirs = (d: string) =>
    readdirSync(d, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => join(d, e.name));
  const adapters = dirs(join(SRC, 'adapters')).flatMap((a) => dirs(a).filter((d) => d.endsWith('/kinds')));
  return [...dirs(join(SRC, 'kinds')), ...adapters];
}

/** What in `text` names one of `kinds`: a string literal that is a kind's name, or an import from a kind's folder. */
function namesAKind(text: string, kinds: readonly string[]): string[] {
  const found: string[] = [];
  for (const m of text.matchAll(/(['"`])([a-z][a-z0-9-]*)\1/g)) if (kinds.includes(m[2]!)) found.push(m[0]);
  for (const m of text.matchAll(/(?:from|import\()\s*'([^']+)'/g)) {
    if (/(^|\/)kinds\/[^/]+\//.test(m[1]!)) found.push(m[1]!);
  }
  return found;
}

describe('kinds', () => {
  // `json`, the free-form kind, is named like the input field type `json`: that word names no kind's rules.
  const kinds = kindNames().filter((k) => k !== 'json');

  it('the service names no kind: no kind name as a string, no import from a kind folder', () => {
    expect(kinds).toContain('task-ir');
    for (const f of files(join(SRC, 'service'))) {
      expect(namesAKind(readFileSync(f, 'utf8'), kinds), relative(SRC, f)).toEqual([]);
    }
  });

  it('the check sees what it refuses', () => {
    expect(namesAKind("const SESSIONS = 'workflow-sessions';", kinds)).toEqual(["'workflow-sessions'"]);
    expect(namesAKind("await import('../../kinds/workflow-sessions/gates.js')", kinds)).toEqual([
      '../../kinds/workflow-sessions/gates.js',
    ]);
    expect(namesAKind("import { x } from '../kinds/service-operations.js';", kinds)).toEqual([]);
  });

  it('every kind folder uses only the layout file names, and assembles its kinds in kind.ts', () => {
    const folders = kindFolders();
    expect(folders.map((d) => relative(SRC, d))).toEqual(
      expect.arrayContaining(['kinds/task-ir', 'adapters/langgraph/kinds', 'adapters/openai-agents/kinds']),
    );
    for (const dir of folders) {
      for (const e of readdirSync(dir)) expect(LAYOUT, relative(SRC, join(dir, e))).toContain(e);
      if (relative(SRC, dir) !== 'kinds/json')
        expect(readdirSync(dir), relative(SRC, dir)).toContain('schema.ts');
      expect(readdirSync(dir), relative(SRC, dir)).toContain('kind.ts');
    }
  });

  it('an adapter defines and registers its kinds only in its kinds/ folder', () => {
    const defines = /:\s*KindDefinition\b|\bregisterKind\(/;
    const outside = files(join(SRC, 'adapters')).filter((f) => !f.includes('/kinds/'));
    expect(outside.map((f) => relative(SRC, f))).toContain('adapters/openai-agents/session.ts');
    for (const f of outside) expect(defines.test(readFileSync(f, 'utf8')), relative(SRC, f)).toBe(false);
  });
});
