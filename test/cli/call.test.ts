// `agentstate call <operation>` (issue 25): every operation of the table from the command line, its flags
// generated from the operation's input schema, checked once by the operation like any other edge's call.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { OPERATIONS } from '../../src/service/table.js';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';

const dir = join(tempDir(), 'i');
const call = (args: string[], input?: string) => runCli(['--dir', dir, 'call', ...args, '--json'], {}, input);

describe('agentstate call', () => {
  it('lists every operation that answers once, and generates each one help from its input schema', () => {
    expect(runCli(['--dir', dir, 'init']).code).toBe(0);
    const listed = call(['list']);
    expect(listed.code, listed.stderr).toBe(0);
    expect((listed.json as Array<{ name: string }>).map((o) => o.name)).toEqual(
      OPERATIONS.filter((op) => !op.streams).map((op) => op.name),
    );
    for (const op of OPERATIONS.filter((o) => ['enqueue', 'read_events', 'render_file'].includes(o.name))) {
      const help = runCli(['call', op.name, '--help']);
      expect(help.code).toBe(0);
      for (const f of Object.keys(op.input.properties))
        expect(help.stdout).toContain(`--${f.replaceAll('_', '-')}`);
    }
  });

  it('flags become typed fields: integers, JSON, lists, durations, booleans; --input gives the rest', () => {
    const a = call(['enqueue', '--title', 'fetch |+ ü', '--priority', '3', '--payload', '{"at":"x"}']);
    expect(a.code, a.stderr).toBe(0);
    expect(a.json).toMatchObject({
      title: 'fetch |+ ü',
      priority: 3,
      payload: { at: 'x' },
      status: 'pending',
    });
    const id = (a.json as { id: string }).id;
    const b = call([
      'enqueue',
      '--title',
      'later',
      '--blocked-by',
      id,
      '--not-before',
      '5m',
      '--waiting-human',
    ]);
    expect(b.code, b.stderr).toBe(0);
    expect(b.json).toMatchObject({ blocked_by: [id], status: 'waiting_human' });
    expect(Date.parse((b.json as { not_before: string }).not_before)).toBeGreaterThan(Date.now() + 60_000);
    const listed = call(['list_items', '--status', 'pending,waiting_human', '--limit', '10']);
    expect((listed.json as unknown[]).length).toBe(2);
    const viaInput = call(
      ['enqueue', '--input', '-', '--priority', '1'],
      JSON.stringify({ title: 'from stdin' }),
    );
    expect(viaInput.json).toMatchObject({ title: 'from stdin', priority: 1 });
    expect(call(['get_item', '--id', id]).json).toMatchObject({ id, title: 'fetch |+ ü' });
  });

  it('refuses what the operation refuses, naming the flag or field, exit 2, and writes nothing', () => {
    const before = call(['count_items']).json;
    const unknown = call(['enqueue', '--title', 'x', '--bogus', '1']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/unknown flag --bogus \(its fields: --title/);
    const badInt = call(['enqueue', '--title', 'x', '--priority', 'high']);
    expect(badInt.code).toBe(2);
    expect(badInt.errorJson).toMatchObject({ error: { code: 'INVALID_INPUT', field: 'priority' } });
    expect(call(['enqueue', '--title', 'x', '--not-before', 'soon']).code).toBe(2);
    expect(call(['watch_events']).code).toBe(2);
    expect(call(['nope']).code).toBe(2);
    // Hostile input: a prototype key, a path-like id, deep and huge JSON, a wrong type, a valueless flag.
    const hostile: Array<[string[], string?]> = [
      [['enqueue', '--input', '{"title":"x","__proto__":{"polluted":1}}']],
      [['enqueue', '--title', 'x', '--payload', '{"constructor":{"prototype":{}}}']],
      [['enqueue', '--title', 'x', '--payload', `${'['.repeat(300)}${']'.repeat(300)}`]],
      [['enqueue', '--input', '-'], JSON.stringify({ title: 'x', payload: 'y'.repeat(5 * 1024 * 1024) })],
      [['render_file', '--kind', 'workflow-sessions', '--id', '../../etc/passwd']],
      [['get_item', '--id', 'wi_1\u0001']],
      [['enqueue', '--title']],
      [['enqueue', '--input', '[1,2]']],
    ];
    for (const [args, stdin] of hostile) {
      const r = call(args, stdin);
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBeGreaterThanOrEqual(1);
      expect(r.code).toBeLessThan(10);
      expect((r.errorJson as { error?: { code?: string } } | null)?.error?.code, r.stderr).toMatch(
        /^(INVALID_INPUT|NOT_FOUND)$/,
      );
      expect(r.stderr).not.toMatch(/\bat .*\.(ts|js):\d+/);
    }
    expect(call(['count_items']).json).toEqual(before);
  });
});
