// PostgreSQL test setup: the server URL, whether it answers (required when CI=true), and a schema of its
// own for each test file, dropped when the file's tests end.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, it } from 'vitest';
import { redactUrl } from '../../src/core/redact.js';
import { reachable } from './pgbouncer-process.js';

/** The test server. @default postgres://postgres@127.0.0.1:5432/test (trust auth) */
export const PG_URL = process.env.AGENTSTATE_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

const isCI = process.env.CI === 'true';

/** Runs SQL as the test superuser on a short-lived connection. */
export async function adminQuery<R = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<R[]> {
  const client = new pg.Client({ connectionString: PG_URL });
  client.on('error', () => {});
  await client.connect();
  try {
    return (await client.query(sql, params)).rows as R[];
  } finally {
    await client.end();
  }
}

/**
 * Decides whether this file's PostgreSQL tests run. Without a server they are skipped with one line saying
 * how to enable them, except under CI=true, where an unreachable server fails the file.
 * Returns a fresh schema name for the file (dropped afterwards), or null when skipping.
 */
export async function postgresForThisFile(): Promise<string | null> {
  const failure = await reachable(PG_URL);
  if (failure !== null) {
    if (isCI) {
      it('PostgreSQL is reachable (CI=true requires it)', () => {
        throw new Error(`PostgreSQL at ${redactUrl(PG_URL)} is unreachable under CI=true: ${failure}`);
      });
    } else {
      console.warn(
        `skipping PostgreSQL tests: no server at ${redactUrl(PG_URL)} (${failure}); start one or set AGENTSTATE_TEST_PG_URL to enable them`,
      );
    }
    return null;
  }
  const schema = `agentstate_test_${process.pid}_${randomBytes(4).toString('hex')}`;
  afterAll(async () => {
    await adminQuery(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  });
  return schema;
}
