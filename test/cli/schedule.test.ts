// `agentstate schedule`: add, list, remove and tick as commands of the built CLI, hostile definitions refused
// with exit 2 and nothing written, and `schedule run` enqueuing a due tick until SIGTERM (exit 0). Waits are
// for conditions (an item in the store), never for a length of time.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openInstance } from '../../src/instance/instance.js';
import { CLI, cleanEnv, runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';

const root = tempDir('agentstate-schedule-');
let n = 0;

async function fresh() {
  const dir = join(root, `i${++n}`);
  await (await openInstance({ dir })).close();
  return ['--dir', dir];
}

async function scheduled(args: string[]) {
  const inst = await openInstance({ dir: args[1]! });
  try {
    return {
      docs: await inst.docs.list({ kind: 'schedule' }),
      items: await inst.work.list({ limit: 1000 }),
      head: (await inst.events.head())?.position ?? 0,
    };
  } finally {
    await inst.close();
  }
}

describe('agentstate schedule', () => {
  it('add, list, remove: a schedule as a document, listed with its next tick', async () => {
    const args = await fresh();
    const add = runCli([
      ...args,
      '--json',
      'schedule',
      'add',
      'nightly|ü',
      '0 3 * * *',
      'nightly report',
      '-k',
      'report',
      '--timezone',
      'Europe/Berlin',
      '--catch-up',
      'all',
      '--payload',
      '{"scope":"all"}',
    ]);
    expect(add.code, add.stderr).toBe(0);
    expect(add.json).toMatchObject({
      name: 'nightly|ü',
      cron: '0 3 * * *',
      timezone: 'Europe/Berlin',
      catch_up: 'all',
      enabled: true,
      last_tick: null,
      item: { title: 'nightly report', kind: 'report', payload: { scope: 'all' } },
    });
    // 03:00 in Berlin is 02:00 UTC in winter.
    expect((add.json as { next_tick: string }).next_tick).toMatch(/T02:00:00\.000Z$/);
    const list = runCli([...args, 'schedule', 'list']);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toMatch(
      /^nightly\|ü {2}"0 3 \* \* \*" Europe\/Berlin {2}next .+ "nightly report"\n$/,
    );
    const again = runCli([...args, 'schedule', 'add', 'nightly|ü', '* * * * *', 'x']);
    expect(again.code).toBe(3);
    expect(again.stderr).toMatch(/exists: remove it first.*\[STATE_CONFLICT\]\n$/);
    const rm = runCli([...args, 'schedule', 'remove', 'nightly|ü']);
    expect(rm.code, rm.stderr).toBe(0);
    expect(runCli([...args, 'schedule', 'list']).stdout).toBe('no schedules\n');
    expect(runCli([...args, 'schedule', 'remove', 'nightly|ü']).code).toBe(1);
    expect(runCli([...args, 'schedule', 'tick']).stdout).toBe('nothing due\n');
  });

  it.for([
    ['a cron of words', ['nope', 'every minute', 't']],
    ['a minute of 61', ['nope', '61 * * * *', 't']],
    ['an unknown time zone', ['nope', '* * * * *', 't', '--timezone', 'Mars/Base']],
    ['an unknown catch-up policy', ['nope', '* * * * *', 't', '--catch-up', 'sometimes']],
    ['a payload that is not JSON', ['nope', '* * * * *', 't', '--payload', '{oops']],
    ['a name with a control character', ['a\u0007b', '* * * * *', 't']],
  ] as Array<[string, string[]]>)('refuses %s with exit 2 and writes nothing', async ([, rest]) => {
    const args = await fresh();
    const before = await scheduled(args);
    const r = runCli([...args, 'schedule', 'add', ...rest]);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/^agentstate: .+ \[INVALID_INPUT\]\n$/);
    expect(await scheduled(args)).toEqual(before);
  });

  it('schedule run enqueues the due tick, and stops on SIGTERM with exit 0', async () => {
    const args = await fresh();
    expect(runCli([...args, 'schedule', 'add', 'each-second', '* * * * * *', 'tick tock']).code).toBe(0);
    const child = spawn(process.execPath, [CLI, ...args, '--json', 'schedule', 'run', '--poll', '20ms'], {
      env: cleanEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    // Wait for the condition: a tick's item in the store.
    for (;;) {
      const { items } = await scheduled(args);
      if (items.some((i) => i.idempotency_key?.startsWith('schedule:each-second@'))) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(JSON.parse(stdout)).toMatchObject({ enqueued: expect.any(Number) });
    expect((JSON.parse(stdout) as { enqueued: number }).enqueued).toBeGreaterThanOrEqual(1);
  });
});
