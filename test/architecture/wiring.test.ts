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
});
