// `npm test` after the build: the main suite, then the fault tests, each run whatever the other did, so one
// failure never hides whether the other passed. Exits non-zero when either failed; extra arguments go to
// both runs (e.g. `npm test -- --reporter=verbose`, or a file filter).
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';

const require = createRequire(import.meta.url);
const vitest = join(
  dirname(require.resolve('vitest/package.json')),
  require('vitest/package.json').bin.vitest,
);

/**
 * Runs `vitest run` once per config, each whatever the others did, and returns each run's verdict.
 * @param {Array<{ name: string, config?: string }>} suites
 * @param {string[]} extra arguments for every run
 * @param {import('node:child_process').SpawnSyncOptions} [options] @default { stdio: 'inherit' }
 */
export function runSuites(suites, extra = [], options = { stdio: 'inherit' }) {
  // A file filter (`npm test -- test/core`) may match nothing in a suite: that run then has nothing to do.
  const filtered = extra.some((a) => !a.startsWith('-'));
  return suites.map((suite) => {
    const args = ['run', ...(suite.config ? ['--config', suite.config] : [])];
    if (filtered) args.push('--passWithNoTests');
    const started = Date.now();
    const r = spawnSync(process.execPath, [vitest, ...args, ...extra], options);
    return {
      name: suite.name,
      code: r.status ?? 1,
      signal: r.signal,
      seconds: Math.round((Date.now() - started) / 1000),
      output: options.stdio === 'inherit' ? '' : `${r.stdout ?? ''}${r.stderr ?? ''}`,
    };
  });
}

/** One line per run, and the exit code of the whole: 0 only when every run passed. */
export function summarize(results) {
  const lines = results.map((r) => {
    const verdict = r.code === 0 ? 'passed' : r.signal ? `killed by ${r.signal}` : `FAILED (exit ${r.code})`;
    return `${r.name}: ${verdict} in ${r.seconds} s`;
  });
  return { lines, code: results.some((r) => r.code !== 0) ? 1 : 0 };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const results = runSuites(
    [{ name: 'main suite' }, { name: 'fault tests', config: 'vitest.faults.config.ts' }],
    process.argv.slice(2),
  );
  const { lines, code } = summarize(results);
  console.log(`\n${lines.join('\n')}`);
  process.exit(code);
}
