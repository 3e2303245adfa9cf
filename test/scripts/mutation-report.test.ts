// scripts/mutation-report.mjs folds a Stryker run into the committed record: only the modules the run
// mutated (its `mutate` list, ranges and `{a,b}` spelled out) get a new row; the earlier verdicts an
// incremental run's report also carries leave their modules' rows, dates and commits as they were.
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
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
