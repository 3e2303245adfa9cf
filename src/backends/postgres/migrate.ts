// Numbered, immutable SQL migrations for PostgreSQL, applied per schema under an advisory lock; the applied
// set is recorded in the schema's schema_migrations table.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { StorageUnavailableError } from '../../errors.js';
import type { PostgresConnection } from './connection.js';

const MIGRATIONS_DIR = new URL('./migrations/', import.meta.url);

/** Migration file names in order, e.g. `0001-initial.sql`. */
export function migrationNames(): string[] {
  return readdirSync(MIGRATIONS_DIR)
    .filter((f) => /^\d{4}-[a-z0-9-]+\.sql$/.test(f))
    .sort();
}

/** A stable 64-bit advisory lock key per schema, so stores in other schemas migrate independently. */
export function migrationLockKey(schema: string): string {
  return createHash('sha256').update(`agentstate:migrate:${schema}`).digest().readBigInt64BE(0).toString();
}

async function appliedNames(conn: PostgresConnection): Promise<Set<string> | null> {
  try {
    const r = await conn.query<{ name: string }>(`SELECT name FROM ${conn.names.schema_migrations}`);
    return new Set(r.rows.map((x) => x.name));
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    // 42P01 undefined_table, 3F000 invalid_schema_name: a database this store never used.
    if (code === '42P01' || code === '3F000') return null;
    throw err;
  }
}

function refuseUnknown(conn: PostgresConnection, seen: Set<string>, names: string[]): void {
  const unknown = [...seen].filter((n) => !names.includes(n));
  if (unknown.length > 0) {
    throw new StorageUnavailableError(
      `schema ${conn.schema} at ${conn.url} has migrations this version of agentstate does not know (${unknown.join(', ')}); upgrade agentstate`,
      { url: conn.url, schema: conn.schema, unknown },
    );
  }
}

/**
 * Applies the migrations not yet applied. The check is a plain read; applying happens in one transaction
 * holding `pg_advisory_xact_lock` for the schema, so several processes starting at once apply each
 * migration exactly once (the others wait, then find nothing left to do).
 */
export async function migrate(conn: PostgresConnection, now: number): Promise<string[]> {
  const names = migrationNames();
  const seen = await appliedNames(conn);
  if (seen) {
    refuseUnknown(conn, seen, names);
    if (names.every((n) => seen.has(n))) return [];
  }
  return conn.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1::bigint)', [migrationLockKey(conn.schema)]);
    await tx.query(`CREATE SCHEMA IF NOT EXISTS ${conn.names.schema}`);
    // The migration files name tables without a schema; they land in this one.
    await tx.query(`SET LOCAL search_path TO ${conn.names.schema}`);
    await tx.query(
      'CREATE TABLE IF NOT EXISTS schema_migrations (name text PRIMARY KEY, applied_at bigint NOT NULL)',
    );
    const rows = await tx.query<{ name: string }>('SELECT name FROM schema_migrations');
    const applied = new Set(rows.rows.map((r) => r.name));
    refuseUnknown(conn, applied, names);
    const done: string[] = [];
    for (const name of names) {
      if (applied.has(name)) continue;
      await tx.query(readFileSync(new URL(name, MIGRATIONS_DIR), 'utf8'));
      await tx.query('INSERT INTO schema_migrations (name, applied_at) VALUES ($1, $2)', [name, now]);
      done.push(name);
    }
    return done;
  });
}
