// Who writes an event type is known without loading the kinds: append consults src/kinds/event-owners.ts,
// which must already name every built-in kind's types (the registry loads every kind, and an append must
// not have to), and registering a kind claims its own.
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { claimEventTypes, eventTypeOwner } from '../../src/kinds/event-owners.js';
import { getKind, kindNames } from '../../src/kinds/registry.js';

describe('event-owners', () => {
  it("names every built-in kind's event types in a process that never loaded the registry", () => {
    const builtIn = kindNames().flatMap((k) => (getKind(k).emits ?? []).map((type) => [type, k]));
    expect(builtIn.length).toBeGreaterThan(0);
    const code = `const m = await import('./src/kinds/event-owners.ts');
      process.stdout.write(JSON.stringify(${JSON.stringify(builtIn.map(([t]) => t))}.map((t) => [t, m.eventTypeOwner(t)])));`;
    const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], {
      encoding: 'utf8',
    });
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual(builtIn);
  });

  it('a kind registered again gives up the types it no longer lists', () => {
    claimEventTypes('test-owner-kind', ['owned_a', 'owned_b']);
    expect([eventTypeOwner('owned_a'), eventTypeOwner('owned_b')]).toEqual([
      'test-owner-kind',
      'test-owner-kind',
    ]);
    claimEventTypes('test-owner-kind', ['owned_b']);
    expect([eventTypeOwner('owned_a'), eventTypeOwner('owned_b')]).toEqual([null, 'test-owner-kind']);
    claimEventTypes('test-owner-kind');
    expect(eventTypeOwner('owned_b')).toBeNull();
  });
});
