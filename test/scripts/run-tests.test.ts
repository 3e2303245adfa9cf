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
  // Each real vitest run costs seconds of CPU: the passing runs of the first two tests are reused by the third.
  const passed: Result[] = [];

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
    passed.push(results[1]!);
  });

  it('fails the whole when only the last suite failed', () => {
    const results = runSuites([PASSING, FAILING], [], options) as Result[];
    expect(results.map((r) => r.code === 0)).toEqual([true, false]);
    expect(summarize(results).code).toBe(1);
    passed.push(results[0]!);
  });

  it('passes only when every suite passed', () => {
    expect(passed.map((r) => r.code)).toEqual([0, 0]);
    const { lines, code } = summarize(passed);
    expect(code).toBe(0);
    expect(lines).toEqual([
      expect.stringMatching(/^passing: passed in \d+ s$/),
      expect.stringMatching(/^passing: passed/),
    ]);
  });
});
