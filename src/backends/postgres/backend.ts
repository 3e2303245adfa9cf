// The PostgreSQL backend: one shared database (one schema per store) for agents on many hosts, each
// instance's rows kept apart by its instance key.
import type { DumpOptions, DumpRecord, StoreBackend } from '../../core/backend.js';
import { NotFoundError } from '../../errors.js';
import { PostgresConnection, type PostgresOptions } from './connection.js';
import { createDocumentBackend } from './documents.js';
import { dumpRows, loadRows } from './dump.js';
import {
  AppendHint,
  createEventBackend,
  ensureEventHead,
  eventHeadExists,
  listenForAppends,
} from './events.js';
import { migrate } from './migrate.js';
import { createWorkItemBackend } from './work/backend.js';
import { createLimitBackend } from './work/limits.js';
import { createWorkflowRunBackend } from './workflow-runs.js';
import { createWorkflowStreamBackend } from './workflow-streams.js';

export { redactUrl } from '../../core/redact.js';
export type { InstanceSummary } from '../../core/types.js';
export type { PostgresOptions, PostgresPoolOptions } from './connection.js';
export { listInstances, type PostgresListOptions } from './instances.js';
export { migrationNames } from './migrate.js';

/** How often an idle worker or scheduler polls behind a transaction pooler, where no hint wakes it. */
export const POOLED_IDLE_POLL_MS = 250;

/** A StoreBackend on PostgreSQL, plus what only PostgreSQL offers. */
export interface PostgresBackend extends StoreBackend {
  readonly instance: string;
  readonly schema: string;
  /**
   * Calls `onAppend` soon after events of this instance commit (LISTEN on a dedicated connection). A hint
   * only: hints can be lost, so keep polling and use it to poll sooner. Resolves to a stop function.
   */
  listen(onAppend: (position: number) => void): Promise<() => Promise<void>>;
}

/**
 * Opens a PostgreSQL store for one instance and applies pending migrations to its schema. Stores opened in
 * this process with the same URL and pool settings share one pg pool, which ends when the last of them
 * closes; each store keeps its own instance, schema, NOTIFY hint, listeners and closed state.
 * Connection failures are STORAGE_UNAVAILABLE, with the password redacted from every message.
 * @example const b = await openPostgresBackend({ url: 'postgres://me@db/agents', instance: 'laptop/planner' })
 */
export async function openPostgresBackend(opts: PostgresOptions): Promise<PostgresBackend> {
  const conn = await PostgresConnection.open(opts);
  // Behind a transaction pooler a LISTEN holds no session to be told on: nothing listens, idle workers poll
  // sooner instead, and hints are sent only when asked (for listeners connected directly).
  const pooled = conn.shared.transactionMode;
  const notify = opts.notify ?? !pooled;
  const hint = notify ? new AppendHint(conn) : null;
  const listeners = new Set<() => Promise<void>>();
  let closed = false;
  const backend = {
    name: 'postgres',
    instance: conn.instance,
    schema: conn.schema,
    migrationsApplied: [] as string[],
    capabilities: { notify: notify && !pooled, idlePollMs: pooled ? POOLED_IDLE_POLL_MS : 1000 },
    work: createWorkItemBackend(conn, hint),
    events: createEventBackend(conn, hint),
    docs: createDocumentBackend(conn, hint),
    limits: createLimitBackend(conn, hint),
    workflowStreams: createWorkflowStreamBackend(conn, hint),
    workflowRuns: createWorkflowRunBackend(conn, hint),
    async migrate() {
      return migrate(conn, Date.now());
    },
    dump: (options?: DumpOptions) => dumpRows(conn, options),
    async load(records: DumpRecord[]) {
      await loadRows(conn, records);
    },
    async listen(onAppend: (position: number) => void) {
      // No session to LISTEN in: a stop that stops nothing (capabilities.notify says no hints come).
      if (pooled) return async () => {};
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
      await hint?.drain();
      await conn.close();
    },
  };
  try {
    if (opts.create === false && !(await eventHeadExists(conn))) {
      throw new NotFoundError(
        `no agentstate instance ${conn.instance} in schema ${conn.schema}: run \`agentstate init\` first (or check --name / --host / --url)`,
        { instance: conn.instance, schema: conn.schema },
      );
    }
    backend.migrationsApplied = await backend.migrate();
    await ensureEventHead(conn);
  } catch (err) {
    await conn.close().catch(() => {});
    throw err;
  }
  return backend;
}
