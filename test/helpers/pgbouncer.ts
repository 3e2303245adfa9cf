// A PgBouncer of this test file's own in front of the test PostgreSQL server (pgbouncer-process.ts), stopped
// when the file's tests end.
import { afterAll, it } from 'vitest';
import {
  type PgBouncer,
  type PgBouncerOptions,
  pgbouncerBinary,
  startPgBouncer,
} from './pgbouncer-process.js';
import { PG_URL } from './postgres.js';

export type { PgBouncer, PgBouncerOptions } from './pgbouncer-process.js';

const isCI = process.env.CI === 'true';

/**
 * Starts a PgBouncer for this test file, or returns null when there is none to start (skipped with a line
 * saying how to enable it; under CI=true a missing pgbouncer fails the file). Call at the top level of a file
 * whose PostgreSQL server answers.
 */
export async function pgbouncerForThisFile(options: PgBouncerOptions = {}): Promise<PgBouncer | null> {
  const bin = pgbouncerBinary();
  if (bin === null) {
    if (isCI) {
      it('pgbouncer is installed (CI=true requires it)', () => {
        throw new Error('pgbouncer is not installed: .ci/run installs Debian\'s "pgbouncer" package');
      });
    } else {
      console.warn(
        'skipping the pooled PostgreSQL tests: install pgbouncer (Debian: apt-get install pgbouncer)',
      );
    }
    return null;
  }
  const bouncer = await startPgBouncer(bin, PG_URL, options);
  afterAll(() => bouncer.stop());
  return bouncer;
}
