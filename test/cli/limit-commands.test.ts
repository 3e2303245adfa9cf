// `agentstate limit set | list | remove` and `enqueue --concurrency-key`, as a real process: the limit holds
// for `claim`, every refusal of hostile input is a typed error with exit 2 (never 10), one line, and writes
// nothing; removing a key without a limit is exit 1.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openInstance } from '../../src/instance/instance.js';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';

const root = tempDir('agentstate-limit-cli-');
let n = 0;
const fresh = () => ['--dir', join(root, `i${++n}`)];

/** The instance's event head and limits, to show a refusal wrote nothing. */
async function state(args: string[]) {
  const inst = await openInstance({ dir: args[1]! });
  try {
    return { head: (await inst.events.head())?.position ?? 0, limits: await inst.work.limits() };
  } finally {
    await inst.close();
  }
}

describe('agentstate limit', () => {
  it('set, list and remove a limit; enqueue --concurrency-key; claim respects it', () => {
    const dir = fresh();
    runCli([...dir, 'init']);
    const set = runCli([
      ...dir,
      'limit',
      'set',
      'openai:org-1',
      '--max-in-flight',
      '1',
      '--rate',
      '60/1m',
      '--json',
    ]);
    expect(set.code, set.stderr).toBe(0);
    expect(set.json).toMatchObject({
      key: 'openai:org-1',
      max_in_flight: 1,
      rate: { count: 60, period_ms: 60_000 },
    });
    const human = runCli([...dir, 'limit', 'list']);
    expect(human.stdout.trim()).toBe('openai:org-1  max_in_flight=1  rate=60/60000ms');

    for (const title of ['a', 'b']) {
      const r = runCli([...dir, 'enqueue', title, '--concurrency-key', 'openai:org-1', '--json']);
      expect(r.code, r.stderr).toBe(0);
      expect(r.json).toMatchObject({ concurrency_key: 'openai:org-1' });
    }
    expect(runCli([...dir, 'claim', '--json']).json).toMatchObject({ title: 'a' });
    // The key is at its limit: nothing ready for this claim (exit 0, null).
    const none = runCli([...dir, 'claim', '--json']);
    expect(none.code).toBe(0);
    expect(none.json).toBeNull();
    const listed = runCli([...dir, 'list', '--concurrency-key', 'openai:org-1', '--json']);
    expect((listed.json as Array<{ title: string }>).map((i) => i.title)).toEqual(['a', 'b']);

    const removed = runCli([...dir, 'limit', 'remove', 'openai:org-1', '--json']);
    expect(removed.code, removed.stderr).toBe(0);
    expect(runCli([...dir, 'claim', '--json']).json).toMatchObject({ title: 'b' });
    expect(runCli([...dir, 'limit', 'list', '--json']).json).toEqual([]);
    // No limit to remove: NOT_FOUND, exit 1.
    const again = runCli([...dir, 'limit', 'remove', 'openai:org-1', '--json']);
    expect(again.code).toBe(1);
    expect(again.errorJson).toMatchObject({ error: { code: 'NOT_FOUND' } });
  });

  it('hostile input: exit 2, one line, nothing written', async () => {
    const dir = fresh();
    runCli([...dir, 'init']);
    const before = await state(dir);
    const bad: string[][] = [
      ['limit', 'set', 'k'],
      ['limit', 'set', 'k', '--max-in-flight', '0'],
      ['limit', 'set', 'k', '--max-in-flight', '-3'],
      ['limit', 'set', 'k', '--max-in-flight', '1.5'],
      ['limit', 'set', 'k', '--max-in-flight', 'lots'],
      ['limit', 'set', 'k', '--max-in-flight', '99999999999999999999'],
      ['limit', 'set', 'k', '--rate', 'fast'],
      ['limit', 'set', 'k', '--rate', '0/1m'],
      ['limit', 'set', 'k', '--rate', '10/forever'],
      ['limit', 'set', 'k', '--rate', '{"count":1}'],
      ['limit', 'set', 'k', '--rate', '{"count":1,"period_ms":1000,"x":1}'],
      ['limit', 'set', 'k', '--rate', '{"count":"1","period_ms":1000}'],
      ['limit', 'set', 'k', '--rate', '{not json'],
      ['limit', 'set', 'a\u0001b', '--max-in-flight', '1'],
      ['limit', 'set', 'x'.repeat(5000), '--max-in-flight', '1'],
      ['limit', 'set', "'; DROP TABLE work_limits; --", '--max-in-flight', '0'],
      ['limit', 'remove'],
      ['enqueue', 't', '--concurrency-key', ''],
      ['enqueue', 't', '--concurrency-key', 'x'.repeat(5000)],
      ['list', '--concurrency-key', ''],
    ];
    for (const args of bad) {
      const r = runCli([...dir, ...args, '--json']);
      const label = args.join(' ').slice(0, 80);
      expect(r.code, `${label}: ${r.stderr}`).toBe(2);
      expect(r.stderr.trim().split('\n').length, label).toBe(1);
      expect(r.stderr, label).not.toMatch(/^\s+at\s/m);
    }
    expect(await state(dir)).toEqual(before);
  });
});
