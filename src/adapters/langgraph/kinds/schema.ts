// JSON Schemas of the LangGraph adapters' kinds: the fields the adapters rely on; the rest of a body (the
// serialized checkpoint, writes and values) is LangGraph's and stays open.

const strings = { type: 'array', items: { type: 'string' } } as const;

/** A run holding or waiting for a thread: who runs it, since when, until when its lease lasts. */
const threadRun = {
  type: 'object',
  required: ['run', 'by', 'since', 'expires_at'],
  properties: { run: { type: 'string' }, by: { type: 'string' }, expires_at: { type: 'number' } },
} as const;

/** `langgraph-thread`: one version per checkpoint of one (thread, namespace). */
export const threadSchema = {
  type: 'object',
  required: ['thread_id', 'checkpoint_ns'],
  properties: { thread_id: { type: 'string' }, checkpoint_ns: { type: 'string' } },
};

/** `langgraph-writes`: the pending writes of one checkpoint, as [task, index, channel, value, path] rows. */
export const writesSchema = {
  type: 'object',
  required: ['thread_id', 'checkpoint_ns', 'checkpoint_id', 'writes'],
  properties: { writes: { type: 'array' } },
};

/** `langgraph-namespaces`: the checkpoint namespaces of one thread. */
export const namespacesSchema = {
  type: 'object',
  required: ['thread_id', 'namespaces'],
  properties: { thread_id: { type: 'string' }, namespaces: strings },
};

/** `langgraph-store`: one BaseStore item; a null value is a deleted item. */
export const storeSchema = {
  type: 'object',
  required: ['namespace', 'key'],
  properties: {
    namespace: strings,
    key: { type: 'string' },
    value: { type: ['object', 'null'] },
  },
};

/** `langgraph-thread-runs`: the run that holds a thread, and the runs waiting their turn. */
export const threadRunsSchema = {
  type: 'object',
  required: ['thread_id', 'checkpoint_ns', 'holder', 'waiting'],
  properties: {
    thread_id: { type: 'string' },
    checkpoint_ns: { type: 'string' },
    holder: { ...threadRun, type: ['object', 'null'] },
    waiting: { type: 'array', items: threadRun },
  },
};
