// The Workflow SDK's World conformance suite against agentstate's World: each file runs the whole suite on
// one backend; every test of it starts the SDK's test server as a child process, which loads the World by
// path (WORKFLOW_TARGET_WORLD) from the built dist/. One file and one test at a time: the tests count the
// HTTP deliveries of their own runs, and the box has 2 cores. crash.test.ts runs workflows/chain.ts (compiled
// by `workflow build`, which the suite script runs first) through SIGKILLs and across two processes.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['*.test.ts'],
    setupFiles: ['./setup.ts'],
    pool: 'forks',
    maxWorkers: 1,
    fileParallelism: false,
    testTimeout: 60_000,
  },
});
