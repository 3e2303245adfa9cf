// `agentstate steps <id>` and `agentstate step reset <id> <name>` through the built CLI: a run's records for
// people and as JSON, a person's reset (recorded as human) only once the attempt has ended, and the exit
// codes of the error table for what is refused.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openInstance } from '../../src/instance/instance.js';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';

describe('agentstate steps / step reset', () => {
  it('lists a run’s records, resets a step as a person once the attempt ended, and refuses what it must', async () => {
    const dir = join(tempDir(), 'inst');
    const inst = await openInstance({ dir });
    let id: string;
    try {
      const item = await inst.work.enqueue({ title: 'report' });
      id = item.id;
      const held = (await inst.work.claim({ worker: 'w1' }))!;
      const run = await inst.work.run({ id, worker: 'w1', attempt: held.attempts });
      await run.step('gather', () => ({ facts: 3 }));
      await run.step('write', () => 'draft ü');
      await run.step('write', () => 'second draft');
    } finally {
      await inst.close();
    }
    const at = ['--dir', dir];
    const human = runCli(['steps', id, ...at]);
    expect(human.code, human.stderr).toBe(0);
    const lines = human.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(
      /^ {2}1 {2}step {3}"gather" {2}completed {2}attempt=1 {2}\d+ms {2}\{"facts":3\}$/,
    );
    expect(lines[2]).toMatch(/"write" #2 {2}completed/);
    const json = runCli(['steps', id, ...at, '--json']);
    expect(json.json).toEqual([
      expect.objectContaining({ type: 'step', seq: 1, name: 'gather', result: { facts: 3 } }),
      expect.objectContaining({ seq: 2, name: 'write', occurrence: 1, result: 'draft ü' }),
      expect.objectContaining({ seq: 3, name: 'write', occurrence: 2, result: 'second draft' }),
    ]);
    // Still in flight: the attempt may yet use the record.
    const busy = runCli(['step', 'reset', id, 'write', ...at]);
    expect(busy.code).toBe(3);
    expect(busy.stderr).toMatch(/in flight.*INVALID_TRANSITION/);
    expect(runCli(['resolve', id, 'failed', '--worker', 'w1', ...at]).code).toBe(0);
    const reset = runCli([
      'step',
      'reset',
      id,
      'write',
      '--occurrence',
      '2',
      '--reason',
      'redo it',
      ...at,
      '--json',
    ]);
    expect(reset.code, reset.stderr).toBe(0);
    expect(reset.json).toMatchObject({
      type: 'reset',
      from_seq: 3,
      name: 'write',
      occurrence: 2,
      actor_kind: 'human',
      reason: 'redo it',
    });
    expect(runCli(['steps', id, ...at]).stdout).toMatch(
      /reset {2}"write" #2 {2}from place 3 {2}by .* \(human\): "redo it"/,
    );
    expect(runCli(['steps', 'wi_none', ...at]).code).toBe(1);
    expect(runCli(['step', 'reset', id, 'never-recorded', ...at]).code).toBe(1);
    for (const name of ['__proto__', 'x'.repeat(10_000)]) {
      const r = runCli(['step', 'reset', id, name, ...at]);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/INVALID_INPUT/);
    }
    const bad = runCli(['step', 'reset', id, 'write', '--occurrence', '0', ...at]);
    expect(bad.code).toBe(2);
    // A signal: to the failed item it is refused (exit 3); to a live one it is kept, as JSON or a line.
    expect(runCli(['signal', id, 'approved', ...at]).code).toBe(3);
    const live = runCli(['enqueue', 'waits', ...at, '--json']);
    const liveId = (live.json as { id: string }).id;
    const sent = runCli(['signal', liveId, 'approved', '--payload', '{"by":"ada"}', ...at]);
    expect(sent.code, sent.stderr).toBe(0);
    expect(sent.stdout).toMatch(/^signal "approved" sent \(event #\d+\)$/m);
    const asJson = runCli(['signal', liveId, 'approved', '--payload', '2', ...at, '--json']);
    expect(asJson.json).toMatchObject({ type: 'signal', name: 'approved', payload: 2 });
    expect(runCli(['signal', 'wi_none', 'x', ...at]).code).toBe(1);
    expect(runCli(['signal', liveId, 'x', '--payload', '{bad', ...at]).code).toBe(2);
  });
});
