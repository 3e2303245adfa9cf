import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The Workflow SDK's suite runs apart, with its own install (npm run test:workflow-world).
    exclude: ['test/workflow-world/sdk/**', '**/node_modules/**'],
    pool: 'forks',
    // Vitest runs one worker fewer than the cores: a single one on a 2-core machine, where most test files
    // spend their time waiting on subprocesses and the database, so the suite ran one file at a time.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
