// The tests Stryker runs against the mutants of the trust core (stryker.config.mjs, `npm run mutate`): the ones
// that exercise fencing, compare-and-swap, verify, access and attribution in this process, on both backends.
// Tests that spawn processes, browsers or servers are left out: a mutant in this process never reaches them.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: [
      'test/backends/sqlite.conformance.test.ts',
      'test/backends/postgres.conformance.test.ts',
      'test/backends/sqlite.specific.test.ts',
      'test/backends/postgres.specific.test.ts',
      'test/backends/agreement.test.ts',
      'test/backends/postgres.documents.test.ts',
      'test/integrity/*.test.ts',
      'test/core/*.test.ts',
      'test/security/*.test.ts',
      'test/worker/worker.test.ts',
      'test/worker/pipeline.test.ts',
      'test/worker/runs.test.ts',
      'test/worker/tracing.test.ts',
      'test/http/auth.test.ts',
      'test/http/principals.test.ts',
      'test/mcp/tools.test.ts',
      'test/mcp/attribution-rules.test.ts',
      'test/service/edge.test.ts',
    ],
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
