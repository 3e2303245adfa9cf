// The state files agents already use, end to end through the CLI: the seeds' own examples validate,
// import, export and re-import unchanged; concurrent edits conflict with a diff; violations name the
// field and rule and change nothing; sessions, gates and resume work from the command line.
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';

const root = tempDir();
const EX = new URL('../kinds/examples/', import.meta.url).pathname;
let n = 0;

function project(): { dir: string; cli: (...args: string[]) => ReturnType<typeof runCli> } {
  const dir = join(root, `p${++n}`);
  mkdirSync(dir, { recursive: true });
  // Commands other than init never create an instance.
  runCli(['--dir', join(dir, '.inst'), 'init']);
  return { dir, cli: (...args) => runCli(['--dir', join(dir, '.inst'), '--project', dir, ...args]) };
}

describe.each([
  ['grid-mission', 'grid/seed-STATE.md.txt', '.grid/STATE.md', 'mission'],
  [
    'aios-workflow',
    'aios/greenfield-service-20260131-a1b2c3-state.yaml',
    '.aios/greenfield-service-20260131-a1b2c3-state.yaml',
    'greenfield-service-20260131-a1b2c3',
  ],
])('%s: the seed example', (kind, example, path, id) => {
  it('validates clean, imports, exports and re-imports unchanged', () => {
    const p = project();
    mkdirSync(join(p.dir, path, '..'), { recursive: true });
    copyFileSync(join(EX, example), join(p.dir, path));
    const v = p.cli('--json', 'validate', path);
    expect(v.code, v.stdout + v.stderr).toBe(0);
    expect(v.json).toMatchObject({ ok: true, kind, id });

    const imported = p.cli('--json', 'import', path);
    expect(imported.code, imported.stderr).toBe(0);
    expect(imported.json).toMatchObject({ kind, id, version: 1, changed: true });
    const body1 = (p.cli('--json', 'state', 'get', kind, id).json as { body: unknown }).body;

    const exported = p.cli('--json', 'export', kind, id);
    expect(exported.code, exported.stderr).toBe(0);
    const again = p.cli('--json', 'import', path);
    expect(again.json).toMatchObject({ version: 1, changed: false });
    expect((p.cli('--json', 'state', 'get', kind, id).json as { body: unknown }).body).toEqual(body1);
    // The exported file is stamped and still valid on its own.
    expect(readFileSync(join(p.dir, path), 'utf8')).toMatch(
      new RegExp(`agentstate: kind=${kind} id=${id} version=1`),
    );
    expect(p.cli('validate', path).code).toBe(0);
  });
});

describe('grid-mission: conflicts and violations through the CLI', () => {
  function seeded() {
    const p = project();
    mkdirSync(join(p.dir, '.grid'), { recursive: true });
    copyFileSync(join(EX, 'grid/seed-STATE.md.txt'), join(p.dir, '.grid/STATE.md'));
    expect(p.cli('import', '.grid/STATE.md').code).toBe(0);
    expect(p.cli('export', 'grid-mission', 'mission').code).toBe(0);
    return p;
  }

  it('two agents editing the same export: one wins, the other gets exit 3 with a diff, nothing lost', () => {
    const p = seeded();
    const file = join(p.dir, '.grid/STATE.md');
    const exported = readFileSync(file, 'utf8');
    writeFileSync(file, exported.replace(/^( {2}block: )\d+/m, '$14'));
    const first = p.cli('--json', 'import', '.grid/STATE.md', '--role', 'executor');
    expect(first.code, first.stderr).toBe(0);
    const second = exported.replace(/^( {2}wave: )\d+/m, '$17');
    writeFileSync(file, second);
    const r = p.cli('import', '.grid/STATE.md', '--role', 'executor');
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/Changed in the store since version 1:\n {2}~ \/position\/block = 4/);
    expect(r.stderr).toMatch(/Changed in your file:\n {2}~ \/position\/wave = 7/);
    const body = p.cli('--json', 'state', 'get', 'grid-mission', 'mission').json as {
      version: number;
      body: { position: { block: number } };
    };
    expect([body.version, body.body.position.block]).toEqual([2, 4]);
    expect(readFileSync(file, 'utf8')).toBe(second);
  });

  it('a write outside the role is refused naming the field, and the store is unchanged', () => {
    const p = seeded();
    const file = join(p.dir, '.grid/STATE.md');
    writeFileSync(file, readFileSync(file, 'utf8').replace(/^status: "?\w+"?/m, 'status: "blocked"'));
    const r = p.cli('--json', 'import', '.grid/STATE.md', '--role', 'scout');
    expect(r.code).toBe(4);
    expect(r.errorJson).toMatchObject({ error: { code: 'PERMISSION_DENIED' } });
    expect(
      (p.cli('--json', 'state', 'get', 'grid-mission', 'mission').json as { version: number }).version,
    ).toBe(1);
  });

  it('validate names the field and the rule of a violation and exits non-zero', () => {
    const p = project();
    mkdirSync(join(p.dir, '.grid'), { recursive: true });
    const seed = readFileSync(join(EX, 'grid/seed-STATE.md.txt'), 'utf8');
    writeFileSync(join(p.dir, '.grid/STATE.md'), seed.replace(/^status: "?\w+"?/m, 'status: dancing'));
    const r = p.cli('--json', 'validate', '.grid/STATE.md');
    expect(r.code).toBe(2);
    expect(r.json).toMatchObject({ ok: false, error: { code: 'VALIDATION_FAILED', pointer: '/status' } });
    expect((r.json as { error: { rule: string } }).error.rule).toBe('format.status');
    writeFileSync(join(p.dir, '.grid/STATE.md'), 'no frontmatter at all\n');
    const fences = p.cli('validate', '.grid/STATE.md');
    expect(fences.code).toBe(2);
    expect(fences.stdout).toMatch(/---|frontmatter/i);
  });

  it('an operation is one commit that rewrites the file; recover restores a corrupted file from the store', () => {
    const p = seeded();
    const op = p.cli('--json', 'grid', 'update-position', 'mission', '--help');
    expect(op.code).toBe(0);
    const file = join(p.dir, '.grid/STATE.md');
    writeFileSync(file, '---\n: : broken yaml [\n---\n');
    const r = p.cli('--json', 'recover', '.grid/STATE.md');
    expect(r.code, r.stderr).toBe(0);
    expect(r.json).toMatchObject({ source: 'store', version: 1 });
    expect(p.cli('validate', '.grid/STATE.md').code).toBe(0);
  });
});

describe('workflow-sessions from the command line', () => {
  it('sessions, todos, a delegation left in progress, gates C and E, and resume', () => {
    const p = project();
    expect(p.cli('session', 'start-session', 'deploy', 'Ship v2').code).toBe(0);
    const todos = JSON.stringify([
      { id: 't1', title: 'build', status: 'in-progress' },
      { id: 't2', title: 'ship', status: 'not-started' },
    ]);
    expect(p.cli('session', 'set-todos', 'deploy', '--todos', todos).code).toBe(0);
    expect(p.cli('session', 'set-phase', 'deploy', 'build').code).toBe(0);
    expect(
      p.cli(
        'session',
        'log-lesson',
        'deploy',
        'WAL needs fsync',
        '--category',
        'platform-quirk',
        '--severity',
        'high',
      ).code,
    ).toBe(0);
    expect(p.cli('session', 'open-delegation', 'deploy', 'run tests', '--agent', 'tester').code).toBe(0);

    const a = p.cli('gate', 'A', 'deploy');
    expect(a.code, a.stdout).toBe(0);
    const c = p.cli('gate', 'C', 'deploy');
    expect(c.code).toBe(3);
    expect(c.stdout).toMatch(/del-1.*in-progress/);
    const e = p.cli('--json', 'gate', 'E');
    expect(e.code).toBe(3);
    expect((e.json as { failures: string[] }).failures.join('\n')).toMatch(/session-1.*still active/);

    const resume = p.cli('--json', 'resume', 'deploy');
    expect(resume.code, resume.stderr).toBe(0);
    expect(resume.json).toMatchObject({
      activeSession: { id: 'session-1' },
      phase: 'build',
      openTodos: [{ id: 't1' }, { id: 't2' }],
      highSeverityLessons: [{ summary: 'WAL needs fsync' }],
    });
    expect(p.cli('resume', 'deploy').stdout).toMatch(/session-1.*phase=build/);

    // The file on disk is the view of the store, in sync (gate B), and valid.
    expect(p.cli('gate', 'B', 'deploy').code).toBe(0);
    expect(p.cli('validate', '.copilot/state/deploy.json').code).toBe(0);
  });
});
