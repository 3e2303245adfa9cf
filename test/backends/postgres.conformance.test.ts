// The store conformance suite on PostgreSQL: one schema for this file, a fresh instance key per test.
import { describe } from 'vitest';
import { openPostgresBackend } from '../../src/backends/postgres/backend.js';
import { runStoreConformance } from '../conformance/store-conformance.js';
import { PG_URL, postgresForThisFile } from '../helpers/postgres.js';

const schema = await postgresForThisFile();
let n = 0;

if (schema !== null) {
  runStoreConformance('postgres', () =>
    openPostgresBackend({ url: PG_URL, schema, instance: `conformance/test-${++n}`, poolSize: 4 }),
  );
} else {
  describe.skip('postgres conformance (no PostgreSQL server)', () => {});
}
