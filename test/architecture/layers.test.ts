// The tree's promises, checked: the core imports only the core and src/errors.ts (nothing from kinds/, the
// World, edges or backends); SQL lives only in src/backends/<backend>/; both backends have the same file names.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/cli.js';

const SRC = join(ROOT, 'src');

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

const imports = (file: string): string[] =>
  [...readFileSync(file, 'utf8').matchAll(/(?:from|import\(?)\s*'([^']+)'/g)].map((m) => m[1]!);

describe('layers', () => {
  it('the core imports only the core and src/errors.ts', () => {
    // Each relative import resolved to the file it names, wherever in the core it is written from: the core
    // is the bottom layer (with src/errors.ts under it), so no import of it climbs out to another folder.
    const outside: string[] = [];
    for (const f of files(join(SRC, 'core'))) {
      for (const spec of imports(f)) {
        if (!spec.startsWith('.')) continue; // a package (node:*, @workflow/world …)
        const target = relative(SRC, resolve(dirname(f), spec))
          .split(sep)
          .join('/');
        if (!target.startsWith('core/') && target !== 'errors.js')
          outside.push(`${relative(SRC, f)}: ${spec}`);
      }
    }
    expect(outside).toEqual([]);
  });

  it('SQL statements appear only under src/backends/', () => {
    const sql = /\b(SELECT\s+[\w*(]|INSERT\s+INTO|UPDATE\s+\w+\s+SET|DELETE\s+FROM|CREATE\s+(TABLE|INDEX))/;
    for (const f of files(SRC)) {
      if (relative(SRC, f).startsWith('backends/')) continue;
      const text = readFileSync(f, 'utf8');
      expect(sql.test(text), relative(SRC, f)).toBe(false);
    }
  });

  it('the MCP SDK is loaded only by src/mcp/, and reached only through lazy imports', () => {
    for (const f of files(SRC)) {
      const rel = relative(SRC, f);
      const text = readFileSync(f, 'utf8');
      if (!rel.startsWith('mcp/')) {
        expect(/from\s+'@modelcontextprotocol\//.test(text), rel).toBe(false);
        // Outside src/mcp/ the server module is only ever imported with import(), when `agentstate mcp` runs.
        expect(/from\s+'(\.\.?\/)+mcp\//.test(text), rel).toBe(false);
      }
    }
  });

  it('Hono is loaded only by src/http/ (the dashboard is in it), and the server reached only through lazy imports', () => {
    for (const f of files(SRC)) {
      const rel = relative(SRC, f);
      const text = readFileSync(f, 'utf8');
      if (!rel.startsWith('http/')) {
        expect(/from\s+'(hono|@hono\/[^']+)(\/[^']*)?'/.test(text), rel).toBe(false);
        // Outside the server the HTTP modules are only ever imported with import(), when `agentstate serve`
        // runs (the guards every network edge shares are in src/net/, below both servers).
        for (const spec of imports(f)) {
          if (/(\.\.?\/)+http\//.test(spec)) {
            expect(
              new RegExp(`import\\(\\s*'${spec.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}'`).test(text),
              rel,
            ).toBe(true);
          }
        }
      }
    }
  });

  it('the network guards import no edge, and neither server imports the other', () => {
    for (const f of files(join(SRC, 'net'))) {
      for (const spec of imports(f)) expect(spec, relative(SRC, f)).not.toMatch(/^(\.\.\/)+(http|mcp|cli)\//);
    }
    // serve's /mcp loads the MCP modules with import() (as the CLI does): no static import either way.
    for (const [dir, other] of [
      ['http', 'mcp'],
      ['mcp', 'http'],
    ] as const) {
      const staticImport = new RegExp(`from\\s+'(\\.\\.\\/)+${other}\\/`);
      for (const f of files(join(SRC, dir))) {
        expect(staticImport.test(readFileSync(f, 'utf8')), relative(SRC, f)).toBe(false);
      }
    }
  });

  it("the framework adapters use the services' public API, never the storage under them", () => {
    for (const f of files(join(SRC, 'adapters'))) {
      expect(/\.backend\b/.test(readFileSync(f, 'utf8')), relative(SRC, f)).toBe(false);
    }
  });

  it('both backends have the same file names', () => {
    const names = (b: string) =>
      files(join(SRC, 'backends', b))
        .map((f) => relative(join(SRC, 'backends', b), f))
        .filter((f) => !f.startsWith('migrations/'))
        .sort();
    expect(names('sqlite')).toEqual(names('postgres'));
  });
});
