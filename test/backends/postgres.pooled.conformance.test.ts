// The store conformance suite once more, on PostgreSQL reached through PgBouncer in transaction mode (how
// Supabase, Neon and most hosts serve it): `?pool_mode=transaction`, two server connections shared by every
// client, and startup parameters refused, so any session state the store relied on would show here.
import { describe } from 'vitest';
import { openPostgresBackend } from '../../src/backends/postgres/backend.js';
import { runStoreConformance } from '../conformance/store-conformance.js';
import { pgbouncerForThisFile } from '../helpers/pgbouncer.js';
import { postgresForThisFile } from '../helpers/postgres.js';

const schema = await postgresForThisFile();
const bouncer = schema === null ? null : await pgbouncerForThisFile();
let n = 0;

if (schema !== null && bouncer !== null) {
  runStoreConformance('postgres through pgbouncer (transaction mode)', () =>
    openPostgresBackend({
      url: `${bouncer.url}?pool_mode=transaction`,
      schema,
      instance: `pooled/test-${++n}`,
      poolSize: 4,
    }),
  );
} else {
  describe.skip('postgres conformance through pgbouncer (no PostgreSQL server or no pgbouncer)', () => {});
}
