// The Workflow SDK World on agentstate: `createWorld()` assembles the storage (runs, steps, events, hooks
// as views of each run's events in the instance's hash chain), the streams and the queue (work items
// delivered over HTTP) over one open instance, embedded SQLite or PostgreSQL. The SDK loads it by name through
// WORKFLOW_TARGET_WORLD and calls `createWorld()` with no arguments, so every option also has an environment
// variable.
import { join } from 'node:path';
import { SPEC_VERSION_CURRENT, type World } from '@workflow/world';
import { InvalidInputError } from '../errors.js';
import { type Instance, type OpenInstanceOptions, openInstance } from '../instance/instance.js';
import { type BaseUrlOption, createWorkflowQueue, recoverActiveRuns } from './queue.js';
import { createWorldStorage } from './storage.js';
import { createWorldStreams } from './streams.js';

/** How `createWorld` opens its store and delivers its queue; each falls back to an environment variable. */
export interface AgentstateWorldOptions {
  /** An instance already open: the World uses it and `close()` leaves it open. */
  instance?: Instance;
  /**
   * The instance folder (embedded SQLite) [default: `AGENTSTATE_WORKFLOW_DIR`, else
   * `.workflow-data/agentstate` under the working directory].
   */
  dir?: string;
  /** A PostgreSQL URL instead of SQLite [default: `AGENTSTATE_WORKFLOW_URL`]. */
  url?: string;
  /** The PostgreSQL schema [default: `AGENTSTATE_WORKFLOW_SCHEMA`, else the store's default]. */
  schema?: string;
  /**
   * More options of `openInstance` (pool size, clock …); `durability` [default: `AGENTSTATE_DURABILITY`, else
   * `full`: every commit synced, surviving power loss; `normal` survives a process crash and syncs at
   * checkpoints, several times faster per commit on SQLite].
   */
  open?: Omit<OpenInstanceOptions, 'dir' | 'url' | 'schema'>;
  /** The app's base URL the queue POSTs to [default: `WORKFLOW_LOCAL_BASE_URL`, else `http://localhost:$PORT`]. */
  baseUrl?: BaseUrlOption;
  /** The queue namespace [default: `WORKFLOW_QUEUE_NAMESPACE`]. */
  namespace?: string;
  /** Deliveries under way at once [default: `AGENTSTATE_WORKFLOW_CONCURRENCY`, else 50]. */
  concurrency?: number;
}

/** A World on agentstate, with the instance it runs on. */
export interface AgentstateWorld extends World {
  /** The instance holding the World's runs, events, streams and queue. */
  readonly instance: Instance;
  /** Starts the queue's delivery and re-enqueues the runs left pending or running. */
  start(): Promise<void>;
  /** Stops delivering and closes the instance (unless it was given open). */
  close(): Promise<void>;
}

function envDurability(): 'full' | 'normal' | undefined {
  const v = process.env.AGENTSTATE_DURABILITY;
  if (v === undefined || v === '') return undefined;
  if (v !== 'full' && v !== 'normal') {
    throw new InvalidInputError(`AGENTSTATE_DURABILITY must be full or normal, got ${JSON.stringify(v)}`, {
      field: 'AGENTSTATE_DURABILITY',
    });
  }
  return v;
}

function envNumber(name: string): number | undefined {
  const v = process.env[name];
  if (v === undefined || v === '') return undefined;
  const n = Number(v);
  if (!Number.isSafeInteger(n) || n < 1) {
    throw new InvalidInputError(`${name} must be a whole number of 1 or more, got ${JSON.stringify(v)}`, {
      field: name,
    });
  }
  return n;
}

/**
 * Creates a Workflow SDK World on an agentstate store (`WORKFLOW_TARGET_WORLD=@agentstate/store/workflow-world`
 * calls this with no arguments). Its runs, steps, hooks and waits are views of each run's events, which are
 * events of the instance's hash chain (`agentstate verify` checks them); its queue is work items; its streams
 * are chunks in the same store.
 * @example const world = await createWorld({ dir: '.workflow-data/agentstate' }); await world.start();
 */
export async function createWorld(options: AgentstateWorldOptions = {}): Promise<AgentstateWorld> {
  const env = process.env;
  const owned = options.instance === undefined;
  const url = options.url ?? env.AGENTSTATE_WORKFLOW_URL;
  const schema = options.schema ?? env.AGENTSTATE_WORKFLOW_SCHEMA;
  const dir =
    options.dir ?? env.AGENTSTATE_WORKFLOW_DIR ?? join(process.cwd(), '.workflow-data', 'agentstate');
  // Every setting is read, and refused if bad, before anything is opened or created.
  const durability = owned ? (options.open?.durability ?? envDurability()) : undefined;
  const concurrency = options.concurrency ?? envNumber('AGENTSTATE_WORKFLOW_CONCURRENCY');
  const instance =
    options.instance ??
    (await openInstance({
      ...options.open,
      ...(durability === undefined ? {} : { durability }),
      dir,
      ...(url ? { url } : {}),
      ...(schema ? { schema } : {}),
    }));
  const namespace = options.namespace ?? env.WORKFLOW_QUEUE_NAMESPACE;
  const baseUrl = options.baseUrl ?? (() => env.WORKFLOW_LOCAL_BASE_URL || undefined);
  let parts: [
    ReturnType<typeof createWorldStorage>,
    ReturnType<typeof createWorldStreams>,
    ReturnType<typeof createWorkflowQueue>,
  ];
  try {
    parts = [
      createWorldStorage(instance),
      createWorldStreams(instance),
      createWorkflowQueue({
        instance,
        baseUrl,
        ...(namespace ? { namespace } : {}),
        ...(concurrency === undefined ? {} : { concurrency }),
      }),
    ];
  } catch (err) {
    // A setting refused here (a bad namespace …) leaves no store open behind it.
    if (owned) await instance.close();
    throw err;
  }
  const [storage, streams, queue] = parts;
  return {
    instance,
    specVersion: SPEC_VERSION_CURRENT,
    getDeploymentId: queue.getDeploymentId,
    queue: queue.queue,
    createQueueHandler: queue.createQueueHandler,
    runs: storage.runs,
    steps: storage.steps,
    events: storage.events,
    hooks: storage.hooks,
    streams,
    start: async () => {
      await queue.start();
      await recoverActiveRuns(storage.runs, queue.queue, namespace);
    },
    close: async () => {
      await queue.close();
      if (owned) await instance.close();
    },
  };
}
