// Fault tests that disturb shared services (restarting the PostgreSQL server): they must not run alongside
// any other test, so they live outside the main suite (test/faults/*.faults.ts) and run one file at a time
// after it: `vitest run --config vitest.faults.config.ts`.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/faults/**/*.faults.ts'],
    pool: 'forks',
    fileParallelism: false,
    testTimeout: 180_000,
    hookTimeout: 120_000,
  },
});
