// State files under attack, through the real CLI (issue 10, hole 2): document ids that are paths,
// symlinks and paths that lead out of the project, FIFOs, devices and oversize files, stdin that never
// ends or is not UTF-8. Each refusal is a typed error with exit 2 (3 for a failing gate), comes quickly
// (a hang fails the test), and leaves the store and every file outside the project as they were.
import { spawnSync } from 'node:child_process';
import {
  closeSync,
  existsSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI, cleanEnv } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';

const base = tempDir('agentstate-hostile-');
const EX = new URL('../kinds/examples/', import.meta.url).pathname;
const SESSIONS = readFileSync(join(EX, 'sessions/deploy.json'), 'utf8');
const PACKAGE = '{"name":"victim","version":"1.0.0"}\n';
/** A refusal must come this fast; a hang (FIFO, /dev/zero) is killed and fails the test. */
const QUICK_MS = 20_000;
let n = 0;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  /** Killed after the timeout. */
  hung: boolean;
  errorJson: { error?: { code?: string; field?: string } } | undefined;
}

function parse(text: string): Run['errorJson'] {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Runs the CLI; `stdin` is text/bytes, or a path opened as the child's stdin (e.g. /dev/zero). */
function run(
  args: string[],
  opts: { input?: string | Buffer; stdinPath?: string; env?: Record<string, string> } = {},
): Run {
  const fd = opts.stdinPath === undefined ? undefined : openSync(opts.stdinPath, 'r');
  try {
    const r = spawnSync(process.execPath, [CLI, ...args], {
      env: cleanEnv(opts.env ?? {}),
      ...(fd === undefined ? { input: opts.input ?? '' } : { stdio: [fd, 'pipe', 'pipe'] }),
      timeout: QUICK_MS,
      killSignal: 'SIGKILL',
      maxBuffer: 64 * 1024 * 1024,
    });
    const stdout = r.stdout?.toString('utf8') ?? '';
    const stderr = r.stderr?.toString('utf8') ?? '';
    return { code: r.status, stdout, stderr, hung: r.signal === 'SIGKILL', errorJson: parse(stderr) };
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** Every entry under `dir` (symlinks not followed) with its content or link target. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  if (!existsSync(dir)) return out;
  const walk = (d: string, rel: string) => {
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name);
      const r = rel ? `${rel}/${name}` : name;
      const st = lstatSync(p);
      if (st.isSymbolicLink()) out[r] = `-> ${readlinkSync(p)}`;
      else if (st.isDirectory()) {
        out[`${r}/`] = 'dir';
        walk(p, r);
      } else if (st.isFile()) out[r] = readFileSync(p, 'utf8');
      else out[r] = 'special';
    }
  };
  walk(dir, '');
  return out;
}

/**
 * A fresh layout: `<w>/outside/` (must never change), `<w>/x/proj/` (the project, with a package.json),
 * the instance in `<w>/inst`. `cli(...)` runs with --dir and --project.
 */
function world() {
  const w = join(base, `w${++n}`);
  const proj = join(w, 'x', 'proj');
  const outside = join(w, 'outside');
  mkdirSync(proj, { recursive: true });
  mkdirSync(outside, { recursive: true });
  writeFileSync(join(proj, 'package.json'), PACKAGE);
  writeFileSync(join(outside, 'victim.json'), SESSIONS);
  const inst = join(w, 'inst');
  const outsideBefore = snapshot(outside);
  const cli = (args: string[], opts: Parameters<typeof run>[1] = {}) =>
    run(['--dir', inst, '--project', proj, ...args], opts);
  const docs = (): Array<{ kind: string; id: string; version: number }> => {
    const r = run(['--dir', inst, '--json', 'state', 'list']);
    expect(r.code, r.stderr).toBe(0);
    return JSON.parse(r.stdout);
  };
  /** Nothing outside the project changed and the project's package.json is intact. */
  const untouched = () => {
    expect(snapshot(outside)).toEqual(outsideBefore);
    expect(readFileSync(join(proj, 'package.json'), 'utf8')).toBe(PACKAGE);
    expect(readdirSync(join(w, 'x'))).toEqual(['proj']);
    expect(readdirSync(w).sort()).toEqual(existsSync(inst) ? ['inst', 'outside', 'x'] : ['outside', 'x']);
  };
  return { w, proj, outside, inst, cli, docs, untouched };
}

function refused(r: Run, code = 2): void {
  expect(r.hung, 'the command hung').toBe(false);
  expect(r.code, r.stdout + r.stderr).toBe(code);
}

describe('document ids that are paths are refused at the kind, before anything is written', () => {
  it.each([['../../package'], ['..'], ['a/b'], ['.hidden'], ['<abs>/evil'], ['..\\..\\package'], ['a\\b']])(
    'session start-session %s: exit 2, package.json untouched, nothing committed',
    (raw) => {
      const w = world();
      const id = raw.replace('<abs>', w.outside);
      const r = w.cli(['session', 'start-session', id, 'x']);
      refused(r);
      expect(r.stderr).toMatch(/\[INVALID_INPUT\]/);
      expect(r.stderr).toMatch(/workflow-sessions id .* is not allowed/);
      w.untouched();
      expect(w.docs()).toEqual([]);
      expect(existsSync(join(w.proj, '.copilot'))).toBe(false);
    },
  );

  it('aios init ../../../outside/evil and grid init ../x: exit 2, nothing written or committed', () => {
    const w = world();
    const aios = w.cli([
      'aios',
      'init',
      '../../../outside/evil',
      '--workflow-id',
      'w',
      '--workflow-name',
      'n',
      '--steps',
      '[{"phase":"a","agent":"dev"}]',
      '--instance-id',
      'w-20260201-abc123',
    ]);
    refused(aios);
    expect(aios.stderr).toMatch(/aios-workflow id "\.\.\/\.\.\/\.\.\/outside\/evil" is not allowed/);
    refused(w.cli(['grid', 'init', '../x', 'auth']));
    w.untouched();
    expect(w.docs()).toEqual([]);
    expect(readdirSync(w.proj)).toEqual(['package.json']);
  });

  it('state commit and the CommitState workflow refuse a path id for file kinds; json (no file) takes it', () => {
    const w = world();
    const commit = w.cli(['state', 'commit', 'workflow-sessions', '../../package', '-e', '0', '-b', '-'], {
      input: SESSIONS,
    });
    refused(commit);
    expect(commit.stderr).toMatch(/\[INVALID_INPUT\]/);
    const aiosBody = readFileSync(join(EX, 'aios/minimal.json'), 'utf8');
    const wf = run(['CommitState', '--dir', w.inst], {
      env: {
        MF_TRIGGER_PAYLOAD_JSON: JSON.stringify({
          kind: 'aios-workflow',
          id: '../../../outside/evil',
          expected_version: 0,
          body: JSON.parse(aiosBody),
        }),
      },
    });
    refused(wf);
    expect(wf.errorJson?.error).toMatchObject({ code: 'INVALID_INPUT', field: 'id' });
    const viaStdin = run(['CommitState', '--dir', w.inst, '--payload', '-'], {
      input: JSON.stringify({ kind: 'grid-mission', id: '.hidden', expected_version: 0, body: {} }),
    });
    refused(viaStdin);
    expect(viaStdin.errorJson?.error).toMatchObject({ code: 'INVALID_INPUT', field: 'id' });
    expect(w.docs()).toEqual([]);
    w.untouched();

    const json = w.cli(['state', 'commit', 'json', '../../package', '-e', '0', '-b', '-'], { input: '{}' });
    expect(json.code, json.stderr).toBe(0);
    expect(w.docs().map((d) => `${d.kind}/${d.id}`)).toEqual(['json/../../package']);
    w.untouched();
  });

  it('state fork into a path id is refused', () => {
    const w = world();
    expect(w.cli(['session', 'start-session', 'deploy', 'x', '--no-export']).code).toBe(0);
    refused(w.cli(['state', 'fork', 'workflow-sessions', 'deploy', '../../package']));
    expect(w.docs().map((d) => d.id)).toEqual(['deploy']);
    w.untouched();
  });
});
