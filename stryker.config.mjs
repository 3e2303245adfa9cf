// Mutation testing of the trust core (issue 43): `npm run mutate` puts one-line bugs into the modules that
// carry the four guarantees — fencing (work rules, the work-item SQL of both backends, the worker's
// completion), compare-and-swap (the document commit path), verify (the hash and the checker) and access
// (the matrix and attribution) — and runs the tests of vitest.mutate.config.ts against each. Incremental:
// reports/mutation/incremental.json (committed) remembers each mutant's verdict, so a later run tests only
// the mutants of code or tests that changed. `npm run mutate -- --mutate <file>` runs one module;
// scripts/mutation-report.mjs writes the score per module to reports/mutation/README.md.
// @ts-check
/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'vitest',
  vitest: { configFile: 'vitest.mutate.config.ts' },
  coverageAnalysis: 'perTest',
  // A static mutant (a constant's initializer) runs every test; the per-test ones carry the guarantees.
  ignoreStatic: true,
  mutate: [
    'src/core/work-rules.ts',
    'src/backends/sqlite/work-items/{claim,lease,status}.ts',
    'src/backends/postgres/work-items/{claim,lease,status}.ts',
    'src/worker/worker.ts',
    'src/core/document-store.ts',
    'src/backends/sqlite/documents.ts',
    'src/backends/postgres/documents.ts',
    'src/core/hash.ts',
    'src/core/integrity.ts',
    'src/auth/access.ts',
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
