// The document kinds the LangGraph adapters store: a thread's checkpoints, a checkpoint's pending writes,
// a thread's namespaces, the runs on a thread, and BaseStore items, assembled from their schemas
// (./schema.ts) and rules (./rules.ts); body types: ./model.ts. Each write appends its audit event in the
// same transaction.
import { type KindDefinition, registerKind } from '../../../index.js';
import { checkStore, checkThread, checkThreadRuns, checkWrites } from './rules.js';
import { namespacesSchema, storeSchema, threadRunsSchema, threadSchema, writesSchema } from './schema.js';

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

const KINDS: KindDefinition[] = [
  {
    name: THREAD_KIND,
    description:
      'A LangGraph thread namespace: each version is one checkpoint with the channel values it changed (AgentStateSaver).',
    schema: threadSchema,
    maxBytes: MAX_BYTES,
    check: checkThread,
  },
  {
    name: WRITES_KIND,
    description: "The pending writes of one LangGraph checkpoint, by task (AgentStateSaver's putWrites).",
    schema: writesSchema,
    maxBytes: MAX_BYTES,
    check: checkWrites,
  },
  {
    name: NAMESPACES_KIND,
    description: 'The checkpoint namespaces of one LangGraph thread (AgentStateSaver).',
    schema: namespacesSchema,
    maxBytes: MAX_BYTES,
  },
  {
    name: RUNS_KIND,
    description:
      'The run that holds a LangGraph thread and the runs waiting their turn (multitask reject/enqueue, AgentStateSaver.runOnThread).',
    emits: ['langgraph_run_started', 'langgraph_run_ended'],
    schema: threadRunsSchema,
    maxBytes: MAX_BYTES,
    check: checkThreadRuns,
  },
  {
    name: STORE_KIND,
    description:
      "An item of LangGraph's BaseStore: (namespace, key) → value, every put a version (AgentStateStore).",
    schema: storeSchema,
    maxBytes: MAX_BYTES,
    check: checkStore,
  },
];

/** The names of the kinds the LangGraph adapters write. */
export const LANGGRAPH_KINDS = [THREAD_KIND, WRITES_KIND, NAMESPACES_KIND, RUNS_KIND, STORE_KIND] as const;

let registered = false;

/**
 * Registers the adapters' kinds (once per process: later calls do nothing); AgentStateSaver and
 * AgentStateStore call it when constructed.
 */
export function registerLangGraphKinds(): void {
  if (registered) return;
  for (const k of KINDS) registerKind(k);
  registered = true;
}
