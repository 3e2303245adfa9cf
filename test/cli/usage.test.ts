// The CLI as a newcomer first meets it (issue 23, part 6): bare `agentstate` is help with exit 0, a bad or
// busy port is a typed refusal naming the port (never exit 10), and a flag with a fixed set of values or a
// range says what it takes.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { Command } from 'commander';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { childHome, cleanEnv, runCli, runCliAsync } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';

const base = tempDir('agentstate-usage-');
const dir = join(base, 'inst');
const STACK = /^\s+at\s/m;

/** A refusal without --json: exit `code`, nothing on stdout, one `agentstate: … [CODE]` line. */
function refused(r: { code: number; stdout: string; stderr: string }, exit: number, code: string): string {
  expect({ exit: r.code, stdout: r.stdout }, r.stderr).toEqual({ exit, stdout: '' });
  expect(r.stderr).not.toMatch(STACK);
  const lines = r.stderr.split('\n').filter(Boolean);
  expect(lines, r.stderr).toHaveLength(1);
  expect(lines[0]).toMatch(new RegExp(`^agentstate: .+ \\[${code}\\]$`));
  return lines[0]!;
}

beforeAll(() => {
  expect(runCli(['--dir', dir, 'init']).code).toBe(0);
});

describe('help', () => {
  it('bare agentstate prints the help on stdout and exits 0', () => {
    const r = runCli([]);
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
    expect(r.stdout).toMatch(/^Usage: agentstate /);
    expect(r.stdout).toContain('Exit codes: 0 ok, 1 not found');
  });

  it('a command group without its command, or global flags alone, is a usage error: help on stderr, exit 2', async () => {
    const cases = [['state'], ['instance'], ['--json'], ['--dir', dir]];
    const results = await Promise.all(cases.map((args) => runCliAsync(args)));
    for (const [i, r] of results.entries()) {
      expect({ args: cases[i], code: r.code, stdout: r.stdout }).toEqual({
        args: cases[i],
        code: 2,
        stdout: '',
      });
      expect(r.stderr).toMatch(/^Usage: agentstate /);
    }
  });
});

describe('help of every command', () => {
  it('no description starts with a capital lowered in a name or acronym (`rFC 6902`)', async () => {
    const { programFor } = await import('../../src/cli/program.js');
    // `help` names no command, so every kind's operations are added too.
    const program = await programFor(['help']);
    const glitches: string[] = [];
    const visit = (cmd: Command, path: string) => {
      // Each line of `<path> --help` in its columns (term, description, wrapped description).
      for (const line of cmd.helpInformation().split('\n')) {
        for (const column of line.trim().split(/\s{2,}/)) {
          if (/^[a-z][A-Z]/.test(column)) glitches.push(`${path} --help: ${line.trim()}`);
        }
      }
      for (const sub of cmd.commands) visit(sub, `${path} ${sub.name()}`);
    };
    visit(program, 'agentstate');
    expect(glitches).toEqual([]);
  });

  it('state --help says "RFC 6902 patch" (an operation’s acronym stays as written) and lowers plain words', () => {
    const r = runCli(['state', '--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/diff <kind> <id> <from> \[to\]\s+RFC 6902 patch between/);
    expect(r.stdout).toMatch(/fork \[options\] <kind> <id> <new-id>\s+copy a version/);
  });

  it('a flag error in a subcommand points at that subcommand’s help, not agentstate --help', async () => {
    const cases: Array<[string[], string]> = [
      [['state', 'diff'], "missing required argument 'kind' (see agentstate state diff --help)"],
      [['enqueue', 'x', '--bogus'], "unknown option '--bogus' (see agentstate enqueue --help)"],
      [['list', '--status'], 'argument missing (see agentstate list --help)'],
      [['state', 'bogus'], "unknown command 'bogus' (see agentstate state --help)"],
      [['--bogus'], "unknown option '--bogus' (see agentstate --help)"],
    ];
    const results = await Promise.all(cases.map(([args]) => runCliAsync(['--dir', dir, ...args])));
    for (const [i, r] of results.entries()) {
      expect(refused(r, 2, 'INVALID_INPUT')).toContain(cases[i]![1]);
    }
    const json = runCli(['--dir', dir, '--json', 'state', 'diff', 'json']);
    expect(json.errorJson).toMatchObject({
      error: {
        code: 'INVALID_INPUT',
        message: expect.stringContaining('(see agentstate state diff --help)'),
      },
    });
  });
});

describe('ports', () => {
  let busy: Server;
  let busyPort = 0;
  beforeAll(async () => {
    busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    busyPort = (busy.address() as { port: number }).port;
  });
  afterAll(() => new Promise<void>((resolve) => busy.close(() => resolve())));

  for (const [name, command] of [
    ['serve', ['serve']],
    ['mcp --http', ['mcp', '--http']],
  ] as const) {
    it(`${name}: a negative, too large or non-numeric port is INVALID_INPUT (exit 2) naming the port`, async () => {
      const ports = ['-1', '65536', 'abc', '1.5'];
      const results = await Promise.all(
        ports.map((port) => runCliAsync(['--dir', dir, ...command, '--port', port])),
      );
      for (const [i, r] of results.entries()) {
        const port = ports[i]!;
        const line = refused(r, 2, 'INVALID_INPUT');
        expect(line).toContain('--port');
        expect(line).toContain(port === 'abc' || port === '1.5' ? 'whole number' : 'from 0 to 65535');
      }
    });

    it(`${name}: a port another program holds is STORAGE_UNAVAILABLE (exit 5) naming it and what to do, and leaves nothing in HOME`, async () => {
      // serve --dir keeps its token in ~/.config: a start that fails must not leave one there.
      const home = tempDir('agentstate-usage-home-');
      const [r, json] = await Promise.all([
        runCliAsync(['--dir', dir, ...command, '--port', String(busyPort)], { HOME: home }),
        runCliAsync(['--dir', dir, '--json', ...command, '--port', String(busyPort)], { HOME: home }),
      ]);
      expect(readdirSync(home, { recursive: true })).toEqual([]);
      const line = refused(r, 5, 'STORAGE_UNAVAILABLE');
      expect(line).toContain(`port ${busyPort} on 127.0.0.1 is already in use`);
      expect(line).toContain('choose another port');
      expect(json.code).toBe(5);
      expect(json.errorJson).toMatchObject({
        error: { code: 'STORAGE_UNAVAILABLE', field: 'port', port: busyPort, host: '127.0.0.1' },
      });
    });
  }
});

describe('tests touch only their own folders', () => {
  it('a CLI child gets a temp HOME of the test file unless the test names one, and no XDG_CONFIG_HOME', () => {
    const seen = (env: NodeJS.ProcessEnv) =>
      spawnSync(process.execPath, ['-p', 'require("os").homedir() + " " + process.env.XDG_CONFIG_HOME'], {
        env,
        encoding: 'utf8',
      }).stdout.trim();
    expect(childHome()).not.toBe(homedir());
    expect(seen(cleanEnv())).toBe(`${childHome()} undefined`);
    expect(seen(cleanEnv({ HOME: base }))).toBe(`${base} undefined`);
  });
});

describe('addresses', () => {
  it('serve and mcp --http: an address this machine does not have is INVALID_INPUT naming it', async () => {
    const token = 'x'.repeat(24);
    const bind = ['--bind', '10.255.255.1', '--token', token, '--port', '0', '--insecure-http'];
    const results = await Promise.all([
      runCliAsync(['--dir', dir, 'serve', ...bind]),
      runCliAsync(['--dir', dir, 'mcp', '--http', ...bind]),
    ]);
    for (const r of results) {
      expect(refused(r, 2, 'INVALID_INPUT')).toContain('10.255.255.1 is not an address of this machine');
    }
  });

  it('mcp --port or --bind without --http is refused, not ignored by a stdio server', () => {
    const r = runCli(['--dir', dir, 'mcp', '--port', '9000']);
    expect(refused(r, 2, 'INVALID_INPUT')).toContain('add --http');
  });
});

describe('flags with a fixed set of values or a range say what they take', () => {
  it('list --status names the allowed statuses', () => {
    for (const status of ['bogus', 'pending,bogus']) {
      const line = refused(runCli(['--dir', dir, 'list', '--status', status]), 2, 'INVALID_INPUT');
      expect(line).toContain('must be one of pending, in_flight, waiting_human, done, failed, cancelled');
      expect(line).toContain('got "bogus"');
    }
    const r = runCli(['--dir', dir, '--json', 'list', '--status', 'bogus']);
    expect(r.errorJson).toMatchObject({ error: { code: 'INVALID_INPUT', field: 'status' } });
  });

  it('watch --interval outside 10 ms to 1 hour is refused before anything runs', async () => {
    const results = await Promise.all(
      ['0', '-5', '99999999999'].map((interval) =>
        runCliAsync(['--dir', dir, '--project', base, 'watch', 'grid-mission', 'm', '--interval', interval]),
      ),
    );
    for (const r of results) {
      expect(refused(r, 2, 'INVALID_INPUT')).toContain('--interval must be from 10 to 3600000');
    }
  });

  it('an integer flag beyond what a number can hold is refused as such, naming the flag', () => {
    const line = refused(
      runCli(['--dir', dir, 'enqueue', 'x', '--priority', '99999999999999999999']),
      2,
      'INVALID_INPUT',
    );
    expect(line).toContain('--priority must be a whole number');
  });
});
