// State files under attack, through the real CLI (issue 10, hole 2): document ids that are paths,
// symlinks and paths that lead out of the project, FIFOs, devices and oversize files, stdin that never
// ends or is not UTF-8. Each refusal is a typed error with exit 2 (3 for a failing gate), comes quickly
// (a hang fails the test), and leaves the store and every file outside the project as they were.
import { spawnSync } from 'node:child_process';
import {
  closeSync,
  copyFileSync,
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { openInstance } from '../../src/instance/instance.js';
import { getKind, registerKind } from '../../src/kinds/registry.js';
import { CLI, cleanEnv } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';

const base = tempDir('agentstate-hostile-');
/** An empty instance, named `inst` as every world's is, copied into each world. */
const TEMPLATE = join(base, 'template', 'inst');
await (await openInstance({ dir: TEMPLATE })).close();
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
  // Commands other than init never create an instance: a copy of one made once (as `init` makes it).
  cpSync(TEMPLATE, inst, { recursive: true });
  /** The documents in the store, read straight from its file (a check of the result, not a command). */
  const docs = (): Array<{ kind: string; id: string; version: number }> => {
    const db = new Database(join(inst, 'state.sqlite'), { readonly: true, fileMustExist: true });
    try {
      return db.prepare('SELECT kind, id, version FROM documents ORDER BY kind, id').all() as Array<{
        kind: string;
        id: string;
        version: number;
      }>;
    } finally {
      db.close();
    }
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
    // A later export of the same ids writes nothing either.
    refused(w.cli(['export', 'workflow-sessions', '../../package']));
    refused(w.cli(['export', 'aios-workflow', '../../../outside/evil']));
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

describe('a document id stored before ids were checked is never written as a path', () => {
  it('export, watch and operations of it are refused; package.json untouched', () => {
    const w = world();
    // Plant the id the way an older version (without checkId) stored it.
    const original = getKind('workflow-sessions');
    return (async () => {
      registerKind({ ...original, checkId: () => {} });
      try {
        const inst = await openInstance({ dir: w.inst });
        await inst.docs.commit({
          kind: 'workflow-sessions',
          id: '../../package',
          expected_version: 0,
          body: JSON.parse(SESSIONS),
          actor_kind: 'human',
        });
        await inst.close();
      } finally {
        registerKind(original);
      }
      refused(w.cli(['export', 'workflow-sessions', '../../package']));
      refused(w.cli(['watch', 'workflow-sessions', '../../package', '--interval', '50']));
      refused(w.cli(['session', 'set-phase', '../../package', 'build']));
      expect(w.docs().map((d) => d.version)).toEqual([1]);
      w.untouched();
    })();
  });
});

describe('every read and write stays inside the project, symlinks resolved', () => {
  it('a .grid symlink to another folder: grid operations, export, watch, import, validate, recover refused', () => {
    const w = world();
    symlinkSync(w.outside, join(w.proj, '.grid'));
    const init = w.cli(['grid', 'init', 'mission', 'auth', '--phases', '3']);
    refused(init);
    expect(init.stderr).toMatch(/outside the project/);
    // Checked before the commit: the store is unchanged too.
    expect(w.docs()).toEqual([]);
    w.untouched();

    expect(w.cli(['grid', 'init', 'mission', 'auth', '--phases', '3', '--no-export']).code).toBe(0);
    refused(w.cli(['export', 'grid-mission', 'mission']));
    refused(w.cli(['watch', 'grid-mission', 'mission', '--interval', '50']));
    refused(w.cli(['grid', 'set-status', 'mission', 'in_progress']));
    w.untouched();

    // A valid STATE.md planted in the other folder is not read through the link either.
    copyFileSync(join(EX, 'grid/seed-STATE.md.txt'), join(w.outside, 'STATE.md'));
    const planted = snapshot(w.outside);
    refused(w.cli(['import', '.grid/STATE.md']));
    refused(w.cli(['validate', '.grid/STATE.md']));
    refused(w.cli(['recover', '.grid/STATE.md']));
    expect(snapshot(w.outside)).toEqual(planted);
    expect(w.docs().map((d) => d.version)).toEqual([1]);
  });

  it('a state file that is a symlink out of the project is neither written nor read', () => {
    const w = world();
    mkdirSync(join(w.proj, '.copilot/state'), { recursive: true });
    symlinkSync(join(w.outside, 'victim.json'), join(w.proj, '.copilot/state/deploy.json'));
    refused(w.cli(['session', 'start-session', 'deploy', 'x']));
    expect(w.docs()).toEqual([]);
    refused(w.cli(['import', '.copilot/state/deploy.json']));
    refused(w.cli(['validate', '.copilot/state/deploy.json']));
    const gate = w.cli(['gate', 'A', 'deploy']);
    refused(gate, 3);
    expect(gate.stdout).toMatch(/outside the project/);
    expect(w.docs()).toEqual([]);
    w.untouched();
  });

  it('a .copilot/state symlink to another folder: gate and resume refuse to read it', () => {
    const w = world();
    mkdirSync(join(w.proj, '.copilot'));
    symlinkSync(w.outside, join(w.proj, '.copilot/state'));
    const gate = run(['--project', w.proj, 'gate', 'A', 'victim']);
    refused(gate);
    expect(gate.stderr).toMatch(/outside the project/);
    refused(run(['--project', w.proj, 'resume', 'victim']));
    refused(run(['--project', w.proj, 'resume', '../../package']));
    w.untouched();
  });

  it('import, validate and recover of paths outside --project are refused', () => {
    const w = world();
    for (const dir of ['.copilot/state', '.aios', '.grid'])
      mkdirSync(join(w.outside, dir), { recursive: true });
    writeFileSync(join(w.outside, '.copilot/state/x.json'), SESSIONS);
    copyFileSync(join(EX, 'grid/seed-STATE.md.txt'), join(w.outside, '.grid/STATE.md'));
    const before = snapshot(w.outside);
    for (const path of [
      join(w.outside, '.copilot/state/x.json'),
      '../../outside/.copilot/state/x.json',
      '../../outside/.grid/STATE.md',
      join(w.outside, '.aios/x-20260201-abc123-state.yaml'),
    ]) {
      for (const cmd of ['validate', 'import', 'recover']) {
        const r = w.cli([cmd, path]);
        refused(r);
        expect(r.stdout + r.stderr, `${cmd} ${path}`).toMatch(/outside the project/);
      }
    }
    expect(snapshot(w.outside)).toEqual(before);
    expect(w.docs()).toEqual([]);
    expect(readFileSync(join(w.proj, 'package.json'), 'utf8')).toBe(PACKAGE);
  });

  it('a FIFO left where the lock file goes does not hang a writer', () => {
    const w = world();
    mkdirSync(join(w.proj, '.grid'));
    spawnSync('mkfifo', [join(w.proj, '.grid/STATE.md.lock')]);
    const r = w.cli(['grid', 'init', 'mission', 'auth']);
    expect(r.hung, 'hung on the lock FIFO').toBe(false);
    expect(r.code, r.stderr).toBe(0);
    expect(lstatSync(join(w.proj, '.grid/STATE.md')).isFile()).toBe(true);
    expect(existsSync(join(w.proj, '.grid/STATE.md.lock'))).toBe(false);
    w.untouched();
  });
});

describe('FIFOs, devices, oversize files and invalid UTF-8 are refused before they are read', () => {
  it('a FIFO as the state file: validate, import and gate A refuse it at once; export and recover replace it', () => {
    const w = world();
    mkdirSync(join(w.proj, '.copilot/state'), { recursive: true });
    const fifo = join(w.proj, '.copilot/state/deploy.json');
    spawnSync('mkfifo', [fifo]);
    const v = w.cli(['validate', '.copilot/state/deploy.json']);
    refused(v);
    expect(v.stdout).toMatch(/FIFO/);
    refused(w.cli(['import', '.copilot/state/deploy.json']));
    const gate = w.cli(['gate', 'A', 'deploy']);
    refused(gate, 3);
    expect(gate.stdout).toMatch(/FIFO/);
    expect(w.docs()).toEqual([]);

    expect(w.cli(['session', 'start-session', 'deploy', 'x', '--no-export']).code).toBe(0);
    const e = w.cli(['export', 'workflow-sessions', 'deploy']);
    expect(e.hung, 'export hung on the FIFO').toBe(false);
    expect(e.code, e.stderr).toBe(0);
    expect(lstatSync(fifo).isFile()).toBe(true);

    const grid = join(w.proj, '.grid/STATE.md');
    expect(w.cli(['grid', 'init', 'mission', 'auth']).code).toBe(0);
    const saved = readFileSync(grid, 'utf8');
    rmSync(grid);
    spawnSync('mkfifo', [grid]);
    const rec = w.cli(['recover', '.grid/STATE.md']);
    expect(rec.hung, 'recover hung on the FIFO').toBe(false);
    expect(rec.code, rec.stderr).toBe(0);
    expect(rec.stdout).toMatch(/recovered from store[\s\S]*FIFO/);
    expect(readFileSync(grid, 'utf8')).toBe(saved);
    w.untouched();
  });

  it('a symlink to /dev/zero: refused unread by validate and gate A (a device, even inside --project /)', () => {
    const w = world();
    mkdirSync(join(w.proj, '.copilot/state'), { recursive: true });
    symlinkSync('/dev/zero', join(w.proj, '.copilot/state/zero.json'));
    refused(w.cli(['validate', '.copilot/state/zero.json']));
    refused(w.cli(['gate', 'A', 'zero']), 3);
    // With the whole file system as the project the link stays inside: the device itself is refused.
    const dev = run(['--project', '/', 'validate', join(w.proj, '.copilot/state/zero.json')]);
    refused(dev);
    expect(dev.stdout).toMatch(/is a device, not a regular file/);
    w.untouched();
  });

  it('a file over the size limit, binary and invalid UTF-8 are refused; a real U+FFFD is text', () => {
    const w = world();
    const dir = join(w.proj, '.copilot/state');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'big.json'), Buffer.alloc(4 * 1024 * 1024 + 1, 0x20));
    const big = w.cli(['validate', '.copilot/state/big.json']);
    refused(big);
    expect(big.stdout).toMatch(/larger than the 4194304 byte limit/);
    writeFileSync(join(dir, 'bad.json'), Buffer.from('{"workflow":"\xff"}', 'latin1'));
    const bad = w.cli(['validate', '.copilot/state/bad.json']);
    refused(bad);
    expect(bad.stdout).toMatch(/not valid UTF-8/);
    refused(w.cli(['import', '.copilot/state/bad.json']));
    expect(w.docs()).toEqual([]);

    const withFffd = JSON.parse(SESSIONS);
    withFffd.sessions[0].label = 'replacement \uFFFD character';
    writeFileSync(join(dir, 'ok.json'), JSON.stringify(withFffd));
    const ok = w.cli(['validate', '.copilot/state/ok.json']);
    expect(ok.code, ok.stdout).toBe(0);
    w.untouched();
  });
});

describe('stdin and body files are read with the same cap and strict UTF-8', () => {
  it('an endless stdin (/dev/zero) or body file is cut off at 4 MiB and refused; nothing committed', () => {
    const w = world();
    const stdin = w.cli(['state', 'commit', 'json', 'big', '-e', '0', '-b', '-'], { stdinPath: '/dev/zero' });
    refused(stdin);
    expect(stdin.stderr).toMatch(/body \(stdin\) is larger than the 4194304 byte limit \[INVALID_INPUT\]/);
    const file = w.cli(['state', 'commit', 'json', 'big', '-e', '0', '-m', '/dev/zero']);
    refused(file);
    expect(file.stderr).toMatch(/merge_patch \(\/dev\/zero\) is larger than the 4194304 byte limit/);
    const payload = run(['EnqueueWorkItem', '--dir', w.inst, '--payload', '-'], { stdinPath: '/dev/zero' });
    refused(payload);
    expect(payload.errorJson?.error).toMatchObject({ code: 'INVALID_INPUT', field: 'payload' });
    const over = w.cli(['state', 'commit', 'json', 'big', '-e', '0', '--patch', '-'], {
      input: `[${' '.repeat(4 * 1024 * 1024)}]`,
    });
    refused(over);
    expect(over.stderr).toMatch(/larger than the 4194304 byte limit/);
    expect(w.docs()).toEqual([]);
  });

  it('invalid UTF-8 on stdin is refused, never stored as U+FFFD; a real U+FFFD is kept', () => {
    const w = world();
    const bad = Buffer.from('{"text":"caf\xe9 \xff"}', 'latin1');
    const commit = w.cli(['state', 'commit', 'json', 'u', '-e', '0', '-b', '-'], { input: bad });
    refused(commit);
    expect(commit.stderr).toMatch(/body \(stdin\) is not valid UTF-8 text \[INVALID_INPUT\]/);
    const wf = run(['EnqueueWorkItem', '--dir', w.inst, '--payload', '-'], {
      input: Buffer.from('{"title":"\xff"}', 'latin1'),
    });
    refused(wf);
    expect(wf.errorJson?.error).toMatchObject({ code: 'INVALID_INPUT', field: 'payload' });
    expect(w.docs()).toEqual([]);
    const items = run(['--dir', w.inst, '--json', 'list']);
    expect(JSON.parse(items.stdout)).toEqual([]);

    const ok = w.cli(['state', 'commit', 'json', 'u', '-e', '0', '-b', '-'], {
      input: Buffer.from('{"text":"a \uFFFD b"}', 'utf8'),
    });
    expect(ok.code, ok.stderr).toBe(0);
    const got = w.cli(['--json', 'state', 'get', 'json', 'u']);
    expect(JSON.parse(got.stdout).body).toEqual({ text: 'a \uFFFD b' });
  });
});
