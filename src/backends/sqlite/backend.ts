// The SQLite backend: one file per instance, opened with the runtime's driver.
import type { DumpOptions, DumpRecord, StoreBackend } from '../../core/backend.js';
import { SqliteConnection, type SqliteOptions } from './connection.js';
import { createDocumentBackend } from './documents.js';
import { dumpRows, loadRows } from './dump.js';
import { createEventBackend, listenForAppends } from './events.js';
import { migrate } from './migrate.js';
import { createWorkItemBackend } from './work/backend.js';
import { createLimitBackend } from './work/limits.js';
import { createWorkflowRunBackend } from './workflow-runs.js';
import { createWorkflowStreamBackend } from './workflow-streams.js';

export type { Durability, SqliteOptions } from './connection.js';

/** Opens (creating if needed) a SQLite store and applies its migrations. */
export async function openSqliteBackend(
  opts: SqliteOptions & { now?: number },
): Promise<StoreBackend & { driver: string }> {
  const conn = await SqliteConnection.open(opts);
  const listeners = new Set<() => Promise<void>>();
  let closed = false;
  const backend = {
    name: 'sqlite',
    migrationsApplied: [] as string[],
    driver: conn.driver,
    // Hints of appends: right after this process's commits, and soon after other processes' (connection.ts).
    capabilities: { notify: true },
    work: createWorkItemBackend(conn),
    events: createEventBackend(conn),
    docs: createDocumentBackend(conn),
    limits: createLimitBackend(conn),
    workflowStreams: createWorkflowStreamBackend(conn),
    workflowRuns: createWorkflowRunBackend(conn),
    dump: (options?: DumpOptions) => dumpRows(conn, options),
    async load(records: DumpRecord[]) {
      loadRows(conn, records);
    },
    async migrate() {
      return migrate(conn, Date.now());
    },
    async listen(onAppend: (position: number) => void) {
      const stop = await listenForAppends(conn, onAppend);
      const once = async () => {
        listeners.delete(once);
        await stop();
      };
      listeners.add(once);
      return once;
    },
    async close() {
      if (closed) return;
      closed = true;
      await Promise.all([...listeners].map((stop) => stop()));
      conn.close();
    },
  };
  try {
    backend.migrationsApplied = await backend.migrate();
  } catch (err) {
    conn.close();
    throw err;
  }
  return backend;
}
