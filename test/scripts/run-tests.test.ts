// `npm test` runs the main suite and the fault tests each whatever the other did, and fails if either
// failed: a failure in the first never hides whether the second passes (scripts/run-tests.mjs).
import { describe, expect, it } from 'vitest';
// @ts-expect-error: a plain .mjs script without types
import { runSuites, summarize } from '../../scripts/run-tests.mjs';
import { ROOT } from '../helpers/cli.js';

const FAILING = { name: 'failing', config: 'test/fixtures/suites/failing.config.ts' };
const PASSING = { name: 'passing', config: 'test/fixtures/suites/passing.config.ts' };
const options = { cwd: ROOT, encoding: 'utf8', env: { ...process.env, CI: 'true' } };

type Result = { name: string; code: number; output: string };

describe('scripts/run-tests.mjs', () => {
  it('runs the second suite after the first failed, and fails the whole', () => {
    const results = runSuites([FAILING, PASSING], [], options) as Result[];
    expect(results.map((r) => [r.name, r.code === 0])).toEqual([
      ['failing', false],
      ['passing', true],
    ]);
    expect(results[1]!.output).toContain('PASSING-SUITE-RAN');
    const { lines, code } = summarize(results);
    expect(code).toBe(1);
    expect(lines[0]).toMatch(/^failing: FAILED \(exit 1\)/);
    expect(lines[1]).toMatch(/^passing: passed/);
  });

  it('fails the whole when only the last suite failed', () => {
    const results = runSuites([PASSING, FAILING], [], options) as Result[];
    expect(results.map((r) => r.code === 0)).toEqual([true, false]);
    expect(summarize(results).code).toBe(1);
  });

  it('passes only when every suite passed', () => {
    const results = runSuites([PASSING, PASSING], [], options) as Result[];
    expect(summarize(results).code).toBe(0);
  });
});
