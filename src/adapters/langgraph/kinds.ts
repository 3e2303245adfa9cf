// The document kinds the LangGraph adapters store: a thread's checkpoints, a checkpoint's pending writes,
// a thread's namespaces, and BaseStore items. Each write appends its audit event in the same transaction.
import {
  type CommitEffects,
  type Json,
  type JsonObject,
  type KindDefinition,
  registerKind,
} from '../../index.js';
import { canonical as canon } from './encoding.js';

/** One version per checkpoint of one (thread, namespace); the latest version is the head. */
export const THREAD_KIND = 'langgraph-thread';
/** The pending writes of one checkpoint. */
export const WRITES_KIND = 'langgraph-writes';
/** The namespaces a thread has checkpoints in (the root namespace and each subgraph's). */
export const NAMESPACES_KIND = 'langgraph-namespaces';
/** Which run holds a thread, and which runs wait for it (AgentStateSaver.runOnThread). */
export const RUNS_KIND = 'langgraph-thread-runs';
/** One item of LangGraph's BaseStore: (namespace, key) → value, versioned. */
export const STORE_KIND = 'langgraph-store';

/** The per-version limit of the store is 1 MiB of JSON; these bodies hold serialized values, so say so. */
const MAX_BYTES = 1024 * 1024;

function str(v: Json | undefined): string | null {
  return typeof v === 'string' ? v : null;
}

const threadKind: KindDefinition = {
  name: THREAD_KIND,
  description:
    'A LangGraph thread namespace: each version is one checkpoint with the channel values it changed (AgentStateSaver).',
  schema: {
    type: 'object',
    required: ['thread_id', 'checkpoint_ns'],
    properties: { thread_id: { type: 'string' }, checkpoint_ns: { type: 'string' } },
  },
  maxBytes: MAX_BYTES,
  check(next): CommitEffects {
    if (next.deleted === true) {
      return {
        events: [
          {
            type: 'langgraph_thread_deleted',
            data: { thread_id: next.thread_id ?? null, checkpoint_ns: next.checkpoint_ns ?? null },
          },
        ],
      };
    }
    if (next.pruned === true) return {};
    return {
      events: [
        {
          type: 'langgraph_checkpoint',
          data: {
            thread_id: str(next.thread_id),
            checkpoint_ns: str(next.checkpoint_ns),
            checkpoint_id: str(next.checkpoint_id),
            parent_checkpoint_id: str(next.parent_checkpoint_id),
            step: typeof next.step === 'number' ? next.step : null,
            source: str(next.source),
            nodes: Array.isArray(next.nodes) ? next.nodes : [],
          },
        },
      ],
    };
  },
};

type WriteRow = [string, number, string, Json, string];

const writesKind: KindDefinition = {
  name: WRITES_KIND,
  description: "The pending writes of one LangGraph checkpoint, by task (AgentStateSaver's putWrites).",
  schema: {
    type: 'object',
    required: ['thread_id', 'checkpoint_ns', 'checkpoint_id', 'writes'],
    properties: { writes: { type: 'array' } },
  },
  maxBytes: MAX_BYTES,
  check(next, prev): CommitEffects {
    if (next.deleted === true) return {};
    const before = new Set(
      ((prev?.writes as WriteRow[] | undefined) ?? []).map((w) => `${w[0]}\u0000${w[1]}\u0000${canon(w[3])}`),
    );
    const added = (next.writes as WriteRow[]).filter(
      (w) => !before.has(`${w[0]}\u0000${w[1]}\u0000${canon(w[3])}`),
    );
    const tasks = [...new Set(added.map((w) => w[0]))];
    return {
      events: [
        {
          type: 'langgraph_writes',
          data: {
            thread_id: str(next.thread_id),
            checkpoint_ns: str(next.checkpoint_ns),
            checkpoint_id: str(next.checkpoint_id),
            tasks,
            channels: [...new Set(added.map((w) => w[2]))],
          },
        },
      ],
    };
  },
};

const namespacesKind: KindDefinition = {
  name: NAMESPACES_KIND,
  description: 'The checkpoint namespaces of one LangGraph thread (AgentStateSaver).',
  schema: {
    type: 'object',
    required: ['thread_id', 'namespaces'],
    properties: { thread_id: { type: 'string' }, namespaces: { type: 'array', items: { type: 'string' } } },
  },
  maxBytes: MAX_BYTES,
};

const storeKind: KindDefinition = {
  name: STORE_KIND,
  description:
    "An item of LangGraph's BaseStore: (namespace, key) → value, every put a version (AgentStateStore).",
  schema: {
    type: 'object',
    required: ['namespace', 'key'],
    properties: {
      namespace: { type: 'array', items: { type: 'string' } },
      key: { type: 'string' },
      value: { type: ['object', 'null'] },
    },
  },
  maxBytes: MAX_BYTES,
  check(next: JsonObject): CommitEffects {
    return {
      events: [
        {
          type: next.value === null ? 'langgraph_store_deleted' : 'langgraph_store_put',
          data: { namespace: next.namespace ?? null, key: next.key ?? null },
        },
      ],
    };
  },
};

const holderRun = (b: JsonObject | null | undefined): string | null => {
  const h = b?.holder;
  return h && typeof h === 'object' && !Array.isArray(h) && typeof h.run === 'string' ? h.run : null;
};

const runsKind: KindDefinition = {
  name: RUNS_KIND,
  description:
    'The run that holds a LangGraph thread and the runs waiting their turn (multitask reject/enqueue, AgentStateSaver.runOnThread).',
  emits: ['langgraph_run_started', 'langgraph_run_ended'],
  schema: {
    type: 'object',
    required: ['thread_id', 'checkpoint_ns', 'holder', 'waiting'],
    properties: {
      thread_id: { type: 'string' },
      checkpoint_ns: { type: 'string' },
      holder: {
        type: ['object', 'null'],
        required: ['run', 'by', 'since', 'expires_at'],
        properties: { run: { type: 'string' }, by: { type: 'string' }, expires_at: { type: 'number' } },
      },
      waiting: {
        type: 'array',
        items: {
          type: 'object',
          required: ['run', 'by', 'since', 'expires_at'],
          properties: { run: { type: 'string' }, by: { type: 'string' }, expires_at: { type: 'number' } },
        },
      },
    },
  },
  maxBytes: MAX_BYTES,
  check(next, prev): CommitEffects {
    const to = holderRun(next);
    const from = holderRun(prev);
    // A lease renewed, or a run joining the queue, is a commit in the history, not an event of its own.
    if (to === from) return {};
    return {
      events: [
        {
          type: to === null ? 'langgraph_run_ended' : 'langgraph_run_started',
          data: {
            thread_id: str(next.thread_id),
            checkpoint_ns: str(next.checkpoint_ns),
            run: to ?? from,
            previous_run: to === null ? null : from,
            waiting: Array.isArray(next.waiting) ? next.waiting.length : 0,
          },
        },
      ],
    };
  },
};

/** The kinds the LangGraph adapters write. */
export const LANGGRAPH_KINDS = [THREAD_KIND, WRITES_KIND, NAMESPACES_KIND, RUNS_KIND, STORE_KIND] as const;

let registered = false;

/** Registers the adapters' kinds (once per process); the saver and the store call it. */
export function registerLangGraphKinds(): void {
  if (registered) return;
  for (const k of [threadKind, writesKind, namespacesKind, runsKind, storeKind]) registerKind(k);
  registered = true;
}
