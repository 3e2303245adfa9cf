// One wiring (issue 25): the store's services are assembled in one place, src/instance/store.ts, which both
// Instance and the conformance suite use, so the suite tests the assembly users run.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/cli.js';

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

describe('one wiring', () => {
  it('only createStore constructs the services; Instance and the conformance suite call it', () => {
    const constructs = /new (WorkQueue|EventLog|DocumentStore)\(/;
    const places = [...files(join(ROOT, 'src')), ...files(join(ROOT, 'test', 'conformance'))]
      .filter((f) => constructs.test(readFileSync(f, 'utf8')))
      .map((f) => relative(ROOT, f));
    expect(places).toEqual(['src/instance/store.ts']);
    for (const user of ['src/instance/instance.ts', 'test/conformance/setup.ts']) {
      expect(readFileSync(join(ROOT, user), 'utf8'), user).toMatch(/createStore\(/);
    }
  });

  it('the edges follow the log only through the watch_events operation', () => {
    const tails = files(join(ROOT, 'src'))
      .filter((f) => /\.events\.tail\(/.test(readFileSync(f, 'utf8')))
      .map((f) => relative(ROOT, f));
    // The service's operation, and the demo (an example of the library's own API).
    expect(tails.sort()).toEqual(['src/demo/main.ts', 'src/service/operations/events.ts']);
    for (const edge of ['src/http/sse.ts', 'src/mcp/server.ts', 'src/cli/event-commands.ts']) {
      expect(readFileSync(join(ROOT, edge), 'utf8'), edge).toMatch(/'watch_events'/);
    }
  });

  it('the kinds import only the core, errors, the file helpers and other kinds: the service registers their operations, never the reverse', () => {
    const allowed =
      /^(node:|\.\.\/(core|fs|errors\.js|[a-z-]+\.js)|\.\.\/\.\.\/(core|fs|errors\.js|kinds)\/?|\.\/|\.\.\/[a-z-]+\/)/;
    for (const f of files(join(ROOT, 'src', 'kinds'))) {
      const text = readFileSync(f, 'utf8');
      for (const m of text.matchAll(/(?:from|import\(?)\s*'([^']+)'/g)) {
        const spec = m[1]!;
        if (!spec.startsWith('.') && !spec.startsWith('node:')) continue; // packages
        expect(spec, relative(ROOT, f)).toMatch(allowed);
        expect(spec, relative(ROOT, f)).not.toMatch(
          /\/(service|instance|views|reports|workflows|cli|http|mcp|backends)\//,
        );
      }
    }
  });
});
