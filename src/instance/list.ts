// The instances a store holds: the instance keys of a PostgreSQL schema, or the instance folders under an
// embedded root (<root>/<host>/agents/<name>/state.sqlite); listing creates nothing.
import { type Dirent, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { PostgresPoolOptions } from '../backends/postgres/connection.js';
import { instanceHead } from '../backends/sqlite/instances.js';
import type { InstanceSummary } from '../core/types.js';
import { StorageUnavailableError } from '../errors.js';
import { postgresTarget } from './instance.js';
import { instancePaths, instanceRoot, isInstanceName } from './paths.js';

/** Which store `listInstances` lists: a PostgreSQL database (`url`), else the embedded SQLite root. */
export interface ListInstancesOptions {
  /** Storage URL: `postgres://…` (optionally `?schema=name`) lists that schema; unset lists the embedded root. */
  url?: string | undefined;
  /** PostgreSQL schema to list (wins over `?schema=`). @default 'agentstate' */
  schema?: string | undefined;
  /**
   * PostgreSQL pool settings. Pass those the instances are opened with, so the listing uses their pool
   * instead of opening a connection of its own.
   */
  postgres?: Omit<PostgresPoolOptions, 'url'>;
  /** Folder holding `<host>/agents/<name>` (embedded SQLite). @default ~/.config */
  root?: string | undefined;
}

/**
 * Lists the instances a store holds, sorted by key, each with its event count (the head position) and the
 * time of its newest event. With a `url`, the instances of one PostgreSQL schema (one indexed query); else
 * every `<root>/<host>/agents/<name>/state.sqlite`, each read without creating or migrating anything (a
 * file that cannot be read is listed with `error`). A root or schema that does not exist lists none.
 * @example for (const i of await listInstances({ root: '/srv/agents' })) console.log(i.instance, i.events)
 */
export async function listInstances(options: ListInstancesOptions = {}): Promise<InstanceSummary[]> {
  if (options.url) {
    const target = postgresTarget(options.url, options.schema);
    const pg = await import('../backends/postgres/instances.js');
    return pg.listInstances({ ...options.postgres, ...target });
  }
  const out: InstanceSummary[] = [];
  for (const { host, name, dir } of instanceFolders(instanceRoot(options.root))) {
    const entry: InstanceSummary = {
      instance: `${host}/${name}`,
      host,
      name,
      events: null,
      last_event_at: null,
      dir,
    };
    try {
      Object.assign(entry, await instanceHead(instancePaths(dir).db));
    } catch (err) {
      entry.error = err instanceof Error ? err.message : String(err);
    }
    out.push(entry);
  }
  return out;
}

/** The folders under `root` that hold an instance's state.sqlite, sorted by host, then name. */
function instanceFolders(root: string): Array<{ host: string; name: string; dir: string }> {
  const found: Array<{ host: string; name: string; dir: string }> = [];
  for (const host of names(root, true)) {
    const agents = join(root, host, 'agents');
    for (const name of names(agents, false)) {
      const dir = join(agents, name);
      if (statSync(instancePaths(dir).db, { throwIfNoEntry: false })?.isFile())
        found.push({ host, name, dir });
    }
  }
  return found;
}

/**
 * The allowed instance names among the entries of `dir`, sorted; none when it is missing or not a folder.
 * Only the root itself failing otherwise (unreadable) is an error: a folder below it that cannot be read
 * holds no instance this user can open anyway.
 */
function names(dir: string, isRoot: boolean): string[] {
  let entries: Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR' || !isRoot) return [];
    throw new StorageUnavailableError(`cannot list instances under ${dir}: ${(err as Error).message}`, {
      path: dir,
    });
  }
  return entries
    .filter((e) => (e.isDirectory() || e.isSymbolicLink()) && isInstanceName(e.name))
    .map((e) => e.name)
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}
