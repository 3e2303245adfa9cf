// Numbered, immutable SQL migrations for SQLite; the applied set is recorded in schema_migrations.
import { readdirSync, readFileSync } from 'node:fs';
import { StorageUnavailableError } from '../../errors.js';
import type { SqliteConnection } from './connection.js';

const MIGRATIONS_DIR = new URL('./migrations/', import.meta.url);

/** Migration file names in order, e.g. `0001-initial.sql`. */
export function migrationNames(): string[] {
  return readdirSync(MIGRATIONS_DIR)
    .filter((f) => /^\d{4}-[a-z0-9-]+\.sql$/.test(f))
    .sort();
}

function appliedNames(conn: SqliteConnection): Set<string> | null {
  const exists = conn
    .stmt("SELECT 1 AS x FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'")
    .get();
  if (!exists) return null;
  const rows = conn.stmt('SELECT name FROM schema_migrations').all() as Array<{ name: string }>;
  return new Set(rows.map((r) => r.name));
}

/**
 * Applies the migrations not yet applied, under one BEGIN IMMEDIATE transaction so that several
 * processes opening a new database at once apply each migration exactly once.
 */
export function migrate(conn: SqliteConnection, now: number): string[] {
  const names = migrationNames();
  const seen = conn.read(() => appliedNames(conn));
  if (seen) {
    const unknown = [...seen].filter((n) => !names.includes(n));
    if (unknown.length > 0) {
      throw new StorageUnavailableError(
        `the database ${conn.path} has migrations this version of agentstate does not know (${unknown.join(', ')}); upgrade agentstate`,
        { path: conn.path, unknown },
      );
    }
    if (names.every((n) => seen.has(n))) return [];
  }
  return conn.write(() => {
    conn.db.exec(
      'CREATE TABLE IF NOT EXISTS schema_migrations (name TEXT PRIMARY KEY, applied_at INTEGER NOT NULL)',
    );
    const applied = appliedNames(conn) ?? new Set<string>();
    const done: string[] = [];
    for (const name of names) {
      if (applied.has(name)) continue;
      conn.db.exec(readFileSync(new URL(name, MIGRATIONS_DIR), 'utf8'));
      conn.stmt('INSERT INTO schema_migrations (name, applied_at) VALUES (?, ?)').run(name, now);
      done.push(name);
    }
    return done;
  });
}
