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
});
