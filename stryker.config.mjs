// Mutation testing of the trust core (issue 43): `npm run mutate` puts one-line bugs into the modules that
// carry the four guarantees — fencing (work rules, the work-item SQL of both backends, the worker's
// completion), compare-and-swap (the document commit path), verify (the hash and the checker) and access
// (the matrix, the one attribution policy and the edge pipeline that applies both) — and runs the tests of
// vitest.mutate.config.ts against each. Incremental:
// reports/mutation/incremental.json (local, not committed; the scheduled job caches it) remembers each
// mutant's verdict, so a later run tests only the mutants of code or tests that changed. `npm run mutate -- --mutate <file>` runs one module;
// scripts/mutation-report.mjs writes the score per module to reports/mutation/README.md. Not in CI (hours on
// a 2-core box): weekly in .github/workflows/mutation.yml, and by hand.
// @ts-check
/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'vitest',
  vitest: { configFile: 'vitest.mutate.config.ts' },
  coverageAnalysis: 'perTest',
  // A static mutant (a constant's initializer) runs every test; the per-test ones carry the guarantees.
  ignoreStatic: true,
  // Whole modules where the module is the guarantee; line ranges (file:first-last) where a larger module
  // carries it in some functions: the worker's completion path (its retry delay, a handler's outcome, and
  // committing or dropping it), the document commit path (stale-version retries, replay of a
  // request, the write's steps) and the backends' commit statements. Keep the ranges on those functions when they move.
  mutate: [
    'src/core/work/{rules,refusals,owners,batches,history,limits}.ts',
    'src/backends/sqlite/work/{claim,lease,status}.ts',
    'src/backends/postgres/work/{claim,lease,status}.ts',
    'src/worker/worker.ts:291-310',
    'src/worker/worker.ts:750-793',
    'src/worker/worker.ts:879-931',
    'src/core/documents/retry.ts:12-32',
    'src/core/documents/commit.ts:53-474',
    'src/backends/sqlite/documents.ts:77-101',
    'src/backends/sqlite/documents.ts:141-214',
    'src/backends/postgres/documents.ts:39-281',
    'src/backends/postgres/documents.ts:332-361',
    'src/core/hash.ts',
    'src/core/integrity/{verify,chain,items,documents,limits,problems,head}.ts',
    'src/core/codecs/{work-items,limits,documents}.ts',
    'src/auth/access.ts',
    'src/auth/attribution.ts',
    'src/service/edge.ts',
    'src/mcp/attribution.ts',
  ],
  incremental: true,
  incrementalFile: 'reports/mutation/incremental.json',
  reporters: ['clear-text', 'progress', 'json'],
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  concurrency: 2,
  timeoutMS: 60_000,
  tempDirName: '.stryker-tmp',
  cleanTempDir: 'always',
};
