// The adapters' examples run as a user would run them (the built package, separate processes, offline).
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';

const run = promisify(execFile);
const node = (file: string, ...args: string[]) =>
  run(process.execPath, [join(ROOT, file), ...args], { cwd: ROOT, timeout: 60_000 }).then((r) => r.stdout);

describe('examples', () => {
  it('langgraph: interrupted, resumed from the store in a new process, shown by the CLI', async () => {
    const dir = join(tempDir(), 'lg');
    expect(await node('examples/langgraph/start.mjs', dir)).toContain('stopped before: act');
    const resumed = await node('examples/langgraph/resume.mjs', dir);
    expect(resumed).toContain('report: 3 steps for "write the release notes"');
    const events = await node('dist/cli/main.js', 'events', '--dir', dir, '--type', 'langgraph_checkpoint');
    expect(events.trim().split('\n')).toHaveLength(5);
    const history = await node(
      'dist/cli/main.js',
      'state',
      'history',
      'langgraph-thread',
      'example-thread',
      '--dir',
      dir,
    );
    expect(history).toContain('v1');
  });

  it('openai-agents: one session written by two processes', async () => {
    const dir = join(tempDir(), 'oa');
    const out = await node('examples/openai-agents/main.mjs', dir);
    expect(out).toContain('items: 12');
    for (const who of ['alice', 'bob']) {
      const mine = out.split('\n').filter((l) => l.includes(`${who} `));
      expect(mine).toEqual(
        [0, 1, 2].flatMap((i) => [`user: ${who} question ${i}`, `assistant: ${who} answer ${i}`]),
      );
    }
  });

  it('durable-agent: an AI SDK loop killed mid-run is finished by a second worker from its records', async () => {
    const dir = join(tempDir(), 'da');
    const out = (await node('examples/durable-agent/main.mjs', dir)).split('\n');
    const second = out.indexOf('second worker (once the dead one’s lease ran out):');
    expect(out.slice(0, second)).toContain('  killed: true');
    // The second worker asks the model only from its third call on, and fetches only the last two forecasts.
    expect(out.slice(second + 1, second + 7)).toEqual([
      '  model call 3',
      '  tool forecast(Rome)',
      '  model call 4',
      '  tool forecast(Tunis)',
      '  model call 5',
      '  resolved: done',
    ]);
    expect(out).toContain('report: Lisbon 22°C, Oslo 18°C, Rome 18°C, Tunis 20°C');
    expect(out.filter((l) => l.startsWith('  step '))).toEqual([
      '  step model 1 (attempt 1)',
      '  step tool forecast call-1 (attempt 1)',
      '  step model 2 (attempt 1)',
      '  step tool forecast call-2 (attempt 1)',
      '  step model 3 (attempt 2)',
      '  step tool forecast call-3 (attempt 2)',
      '  step model 4 (attempt 2)',
      '  step tool forecast call-4 (attempt 2)',
      '  step model 5 (attempt 2)',
    ]);
  });
});
