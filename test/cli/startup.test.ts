// What a command loads: a plain command (`list`) does not load the kinds (every kind, about a third of the
// modules a command started with), which only the commands that need them load — a kind's own group, help.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI, cleanEnv, runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';

const RECORD = new URL('../fixtures/record-modules.mjs', import.meta.url).pathname;
const root = tempDir('agentstate-startup-');
let n = 0;

/** Runs the CLI with the module recorder; returns its exit code and the dist/ modules it loaded. */
function loaded(args: string[]): { code: number | null; modules: string[]; stdout: string } {
  const file = join(root, `modules-${++n}.txt`);
  const r = spawnSync(process.execPath, ['--import', RECORD, CLI, ...args], {
    env: cleanEnv({ AGENTSTATE_TEST_MODULES: file }),
    encoding: 'utf8',
  });
  const modules = readFileSync(file, 'utf8')
    .split('\n')
    .filter((u) => u.includes('/dist/'))
    .map((u) => u.replace(/^.*\/dist\//, ''));
  return { code: r.status, modules, stdout: r.stdout };
}

describe('what a command loads', () => {
  const dir = join(root, 'inst');

  it('list loads no kind; a kind group and the help do', () => {
    expect(runCli(['--dir', dir, 'init']).code).toBe(0);
    const list = loaded(['--dir', dir, 'list']);
    expect(list.code).toBe(0);
    expect(list.modules).toContain('cli/program.js');
    // The event-type owners (kinds/event-owners.js, grid-mission/model.js) are light on purpose; no kind is.
    const kinds = list.modules.filter((m) => m === 'kinds/registry.js' || /^kinds\/[^/]+\/kind\.js$/.test(m));
    expect(kinds).toEqual([]);
    const grid = loaded(['--dir', dir, 'grid', '--help']);
    expect(grid.code).toBe(0);
    expect(grid.modules).toContain('kinds/registry.js');
    expect(grid.stdout).toContain('operations on grid-mission documents');
    const help = loaded(['--help']);
    expect(help.stdout).toMatch(/^ {2}session +operations on workflow-sessions documents/m);
  });
});
