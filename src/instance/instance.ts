// An open instance: one agent persona's store plus its folder, with the services hung off it.

import { existsSync, statSync } from 'node:fs';
import type { PostgresOptions } from '../backends/postgres/connection.js';
import { type Durability, openSqliteBackend } from '../backends/sqlite/backend.js';
import type { StoreBackend } from '../core/backend.js';
import type { CoalesceOptions } from '../core/coalesce.js';
import type { DocumentStore } from '../core/documents/store.js';
import type { EventLog } from '../core/events/log.js';
import { redactUrl } from '../core/redact.js';
import { type Clock, systemClock, wholeMs } from '../core/time.js';
import type { WorkQueue } from '../core/work/queue.js';
import { InvalidInputError, isAgentStateError, NotFoundError, StorageUnavailableError } from '../errors.js';
import { ensureDir } from '../fs/files.js';
import {
  type InstanceLocation,
  type InstancePaths,
  instancePaths,
  locateInstance,
  NO_SUCH_INSTANCE,
} from './paths.js';
import { createStore } from './store.js';

/** Where an instance is (`host`, `name`, or a `dir`) and how to open it. */
export interface OpenInstanceOptions extends InstanceLocation {
  /**
   * Storage URL: `postgres://…` (optionally `?schema=name`) for a PostgreSQL store shared by many
   * instances; unset means the embedded SQLite file `state.sqlite` in the instance folder.
   */
  url?: string | undefined;
  /** PostgreSQL schema holding the tables (several stores can share a database). @default 'agentstate' */
  schema?: string | undefined;
  /** Further PostgreSQL settings (pool size, lock timeout, NOTIFY, …); see docs/postgres.md. */
  postgres?: Omit<PostgresOptions, 'url' | 'instance' | 'schema' | 'create'>;
  /** SQLite durability: `full` (default) survives power loss; `normal` trades that for speed. @default 'full' */
  durability?: Durability;
  /** How long a writer waits for another writer's lock before LOCK_TIMEOUT. @default 15000 */
  busyTimeoutMs?: number;
  /** Lease owner / event actor when a call names none. @default the instance name */
  worker?: string;
  /** Time source (tests move time with it). @default Date.now */
  clock?: Clock;
  /** Document history to keep: the newest N versions of each document, or 'all'. @default 'all' */
  retention?: number | 'all';
  /**
   * Create the instance (database and migrations; the folder too on SQLite) when it does not exist yet. With
   * false, a missing instance is NOT_FOUND (`details.reason: 'no_such_instance'`) and nothing is created:
   * what every CLI command and workflow but `init` / ScaffoldFolders and `instance import` uses, so a
   * mistyped name or folder never makes a new empty instance. @default true
   */
  create?: boolean;
  /**
   * Overlapping `work.claim()`, `work.resolve()` and `work.heartbeat()` calls on this handle are served by
   * one batched statement each (one event per batch), each caller keeping its own result or error; a call
   * with nothing else in flight goes at once. `false` turns it off (every call its own transaction);
   * `{ windowMs }` lets a batch wait that long for more calls (see docs/concepts.md). @default {}
   */
  coalesce?: CoalesceOptions | false;
}

/**
 * One agent's store, open: its three primitives over one backend — `work` (the queue with leased claims),
 * `events` (the append-only, hash-chained log) and `docs` (versioned documents, every write a CAS) — sharing
 * one clock and one default actor. Made by `openInstance`; `close()` it when done (a PostgreSQL pool is
 * shared between handles of one process and closed with the last).
 * @example
 * const inst = await openInstance({ host: 'laptop', name: 'planner' });
 * try { await inst.work.enqueue({ title: 'compile' }); } finally { await inst.close(); }
 */
export class Instance {
  /** The machine (or group) the instance belongs to: the first part of its key `host/name`. */
  readonly host: string;
  /** The instance's name, unique under its host. */
  readonly name: string;
  /** The instance folder and the files in it (the SQLite file, dashboard, retrospectives, locks). */
  readonly paths: InstancePaths;
  /**
   * The storage under the services. For backends and tools of this package: a caller that writes through it
   * skips the services' checks (kinds, CAS, provenance), so use `work`, `events` and `docs`.
   */
  readonly backend: StoreBackend;
  /** The time source every write of this handle is stamped with. @default Date.now */
  readonly clock: Clock;
  /** Work items: enqueue, claim under a lease, heartbeat, resolve, release, cancel, retry, list. */
  readonly work: WorkQueue;
  /** The event log: append, read, tail, verify the hash chain. */
  readonly events: EventLog;
  /** Versioned documents of the registered kinds: commit (CAS), get, history, apply a kind's operation. */
  readonly docs: DocumentStore;
  /** Where the store is: the SQLite file, or the PostgreSQL URL (secrets redacted by redactUrl) and schema. */
  readonly storage: string;

  constructor(
    id: { host: string; name: string; dir: string },
    backend: StoreBackend,
    clock: Clock,
    worker: string,
    retention: number | 'all' = 'all',
    storage?: string,
    coalesce?: CoalesceOptions | false,
  ) {
    this.storage = storage ?? instancePaths(id.dir).db;
    this.host = id.host;
    this.name = id.name;
    this.paths = instancePaths(id.dir);
    this.backend = backend;
    this.clock = wholeMs(clock);
    const store = createStore(backend, {
      clock: this.clock,
      actor: worker,
      keepVersions: retention === 'all' ? null : retention,
      ...(coalesce === undefined ? {} : { coalesce }),
    });
    this.docs = store.docs;
    this.work = store.work;
    this.events = store.events;
  }

  /** Closes the storage (a shared PostgreSQL pool when its last handle closes). Calls after it fail. */
  async close(): Promise<void> {
    await this.backend.close();
  }
}

/**
 * Opens an instance, creating it when missing (unless `create: false`): on SQLite its folder and database
 * (with migrations); on PostgreSQL its rows only, the local folder (dashboard, retros) being made by the
 * first file written there.
 * @example const inst = await openInstance({ host: 'laptop', name: 'planner' });
 */
export async function openInstance(options: OpenInstanceOptions): Promise<Instance> {
  const id = locateInstance(options);
  if (options.retention !== undefined && options.retention !== 'all') {
    if (!Number.isSafeInteger(options.retention) || options.retention < 1) {
      throw new InvalidInputError('retention must be a whole number of versions >= 1, or "all"', {
        field: 'retention',
      });
    }
  }
  const hint =
    '(with `create: false` only an existing instance is opened; leave `create` unset to create it)';
  if (options.create === false && !options.url && !existsSync(instancePaths(id.dir).db)) {
    if (existsSync(id.dir) && !statSync(id.dir).isDirectory()) {
      throw new StorageUnavailableError(`the instance folder ${id.dir} is a file, not a folder`, {
        path: id.dir,
      });
    }
    throw new NotFoundError(`no agentstate instance at ${id.dir} ${hint}`, {
      dir: id.dir,
      name: id.name,
      host: id.host,
      reason: NO_SUCH_INSTANCE,
    });
  }
  try {
    if (options.create !== false && !options.url) ensureDir(id.dir);
  } catch (err) {
    throw new StorageUnavailableError(
      `cannot create the instance folder ${id.dir}: ${(err as Error).message}`,
      {
        path: id.dir,
      },
    );
  }
  const backend = options.url
    ? await openUrl(
        options.url,
        `${id.host}/${id.name}`,
        options.schema,
        options.postgres,
        options.create,
      ).catch((err: unknown) => {
        // The backend words a missing instance for the CLI; the library says it with its own options.
        if (options.create === false && isAgentStateError(err, 'NOT_FOUND')) {
          const { schema } = err.details;
          throw new NotFoundError(
            `no agentstate instance ${id.host}/${id.name} in schema ${String(schema)} of ${redactUrl(options.url!)} ${hint}`,
            {
              instance: `${id.host}/${id.name}`,
              name: id.name,
              host: id.host,
              schema,
              reason: NO_SUCH_INSTANCE,
            },
          );
        }
        throw err;
      })
    : await openSqliteBackend({
        path: instancePaths(id.dir).db,
        durability: options.durability ?? 'full',
        busyTimeoutMs: options.busyTimeoutMs ?? 15_000,
      });
  return new Instance(
    id,
    backend,
    options.clock ?? systemClock,
    options.worker ?? id.name,
    options.retention,
    options.url
      ? `${redactUrl(options.url)}${options.schema ? ` (schema ${options.schema})` : ''}`
      : undefined,
    options.coalesce,
  );
}

/**
 * The PostgreSQL URL and schema a storage URL names: `?schema=` is taken out of the URL (the `schema` option
 * wins over it). INVALID_INPUT for a URL that does not parse or names another scheme.
 */
export function postgresTarget(url: string, schema: string | undefined): { url: string; schema?: string } {
  if (!/^postgres(ql)?:\/\//i.test(url)) {
    throw new InvalidInputError(
      `storage URL ${redactUrl(url)} is not supported: use postgres://… or leave it unset for embedded SQLite`,
      { field: 'url' },
    );
  }
  let clean: string;
  let fromUrl: string | undefined;
  try {
    const u = new URL(url);
    fromUrl = u.searchParams.get('schema') ?? undefined;
    u.searchParams.delete('schema');
    clean = u.toString();
  } catch {
    throw new InvalidInputError(`storage URL ${redactUrl(url)} is not a valid URL`, { field: 'url' });
  }
  const chosen = schema ?? fromUrl;
  return chosen ? { url: clean, schema: chosen } : { url: clean };
}

/** Opens the backend a URL names; the PostgreSQL driver is loaded only here. */
async function openUrl(
  url: string,
  instance: string,
  schema: string | undefined,
  extra: OpenInstanceOptions['postgres'],
  create: boolean | undefined,
): Promise<StoreBackend> {
  const target = postgresTarget(url, schema);
  const { openPostgresBackend } = await import('../backends/postgres/backend.js');
  return openPostgresBackend({
    ...extra,
    ...target,
    instance,
    ...(create === false ? { create } : {}),
  });
}
