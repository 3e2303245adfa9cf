// scripts/mutation-report.mjs folds a Stryker run into the committed record: only the modules the run
// mutated (its `mutate` list, ranges and `{a,b}` spelled out) get a new row; the earlier verdicts an
// incremental run's report also carries leave their modules' rows, dates and commits as they were.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';

const mutant = (status: string, line: number) => ({
  id: String(line),
  mutatorName: 'ConditionalExpression',
  replacement: 'true',
  status,
  location: { start: { line, column: 1 }, end: { line, column: 9 } },
});

describe('mutation-report', () => {
  it('updates the rows of the modules the run mutated, and no other', () => {
    const dir = tempDir();
    const old = { killed: 1, timeout: 0, survived: 1, noCoverage: 0, ignored: 0, errors: 0 };
    const earlier = { ...old, date: '2026-01-01', commit: 'aaaaaaa', survivors: [], score: 50 };
    writeFileSync(
      join(dir, 'scores.json'),
      JSON.stringify({ modules: { 'src/b.ts': earlier, 'src/w/claim.ts': earlier }, notes: {} }),
    );
    writeFileSync(
      join(dir, 'mutation.json'),
      JSON.stringify({
        config: { mutate: ['src/a.ts:10-20', 'src/w/{claim,lease}.ts'] },
        files: {
          'src/a.ts': { mutants: [mutant('Killed', 12), mutant('Killed', 13)] },
          'src/w/claim.ts': { mutants: [mutant('Killed', 3)] },
          // Carried from an earlier run by the incremental file: not this run's.
          'src/b.ts': { mutants: [mutant('Survived', 5), mutant('Survived', 6)] },
        },
      }),
    );
    const r = spawnSync(process.execPath, [join(ROOT, 'scripts/mutation-report.mjs'), '--dir', dir], {
      encoding: 'utf8',
    });
    expect(r.status, r.stderr).toBe(0);
    const scores = JSON.parse(readFileSync(join(dir, 'scores.json'), 'utf8'));
    expect(scores.modules['src/b.ts']).toEqual(earlier);
    expect(scores.modules['src/a.ts']).toMatchObject({ killed: 2, survived: 0, score: 100 });
    expect(scores.modules['src/w/claim.ts']).toMatchObject({ killed: 1, survived: 0, score: 100 });
    expect(scores.modules['src/w/claim.ts'].commit).not.toBe('aaaaaaa');
    expect(readFileSync(join(dir, 'README.md'), 'utf8')).toContain('`src/a.ts`');
  });
});

describe('mutation-report --prune', () => {
  it('drops the rows and notes of files no longer in the tree, and keeps the others', () => {
    const dir = tempDir();
    const row = { killed: 1, timeout: 0, survived: 0, noCoverage: 0, ignored: 0, errors: 0 };
    const kept = { ...row, date: '2026-01-01', commit: 'aaaaaaa', survivors: [], score: 100 };
    writeFileSync(
      join(dir, 'scores.json'),
      JSON.stringify({
        modules: { 'src/core/hash.ts': kept, 'src/core/moved-away.ts': kept },
        notes: { 'src/core/hash.ts:1:1': 'kept', 'src/core/moved-away.ts:2:3': 'dropped' },
      }),
    );
    writeFileSync(join(dir, 'mutation.json'), JSON.stringify({ config: { mutate: [] }, files: {} }));
    const run = (...flags: string[]) =>
      spawnSync(process.execPath, [join(ROOT, 'scripts/mutation-report.mjs'), '--dir', dir, ...flags], {
        encoding: 'utf8',
      });
    expect(run().status).toBe(0);
    // Without --prune nothing is dropped.
    expect(Object.keys(JSON.parse(readFileSync(join(dir, 'scores.json'), 'utf8')).modules)).toHaveLength(2);
    const r = run('--prune');
    expect(r.status, r.stderr).toBe(0);
    const scores = JSON.parse(readFileSync(join(dir, 'scores.json'), 'utf8'));
    expect(Object.keys(scores.modules)).toEqual(['src/core/hash.ts']);
    expect(scores.notes).toEqual({ 'src/core/hash.ts:1:1': 'kept' });
  });
});

describe('mutation-rekey', () => {
  it('carries a note to the file and line its code moved to, shifting the column with the indentation', () => {
    const repo = tempDir();
    const git = (...args: string[]) => {
      const r = spawnSync('git', args, { cwd: repo, encoding: 'utf8' });
      expect(r.status, r.stderr).toBe(0);
      return r.stdout.trim();
    };
    const write = (file: string, text: string) => {
      mkdirSync(dirname(join(repo, file)), { recursive: true });
      writeFileSync(join(repo, file), text);
    };
    git('init', '-q');
    write(
      'src/big.ts',
      ['class Big {', '  run(x: number) {', '    if (x > 1) return 2;', '    return 3;', '  }', '}', ''].join(
        '\n',
      ),
    );
    git('add', '-A');
    git('-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', 'before');
    const before = git('rev-parse', 'HEAD');
    // The method becomes a function of its own module, two levels less indented, three lines further down.
    rmSync(join(repo, 'src/big.ts'));
    write(
      'src/big/run.ts',
      [
        '// header',
        '',
        'export function run(x: number) {',
        '  if (x > 1) return 2;',
        '  return 3;',
        '}',
        '',
      ].join('\n'),
    );
    const dir = tempDir();
    writeFileSync(
      join(dir, 'scores.json'),
      JSON.stringify({ modules: {}, notes: { 'src/big.ts:3:9': 'equivalent: why' } }),
    );
    const r = spawnSync(
      process.execPath,
      [join(ROOT, 'scripts/mutation-rekey.mjs'), '--from', before, '--root', repo, '--dir', dir, '--write'],
      { encoding: 'utf8' },
    );
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain('src/big.ts:3:9 -> src/big/run.ts:4:7');
    const { notes } = JSON.parse(readFileSync(join(dir, 'scores.json'), 'utf8'));
    expect(notes).toEqual({ 'src/big.ts:3:9': 'equivalent: why', 'src/big/run.ts:4:7': 'equivalent: why' });
  });
});
