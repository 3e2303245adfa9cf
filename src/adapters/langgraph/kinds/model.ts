// Body types of the LangGraph adapters' kinds: what their schemas (./schema.ts) admit and the adapters
// write.
import type { Json } from '../../../index.js';

/** One pending write in a `langgraph-writes` body: task id, index, channel, serialized value, task path. */
export type WriteRow = [task: string, idx: number, channel: string, value: Json, path: string];

/** A run holding a thread, or waiting for it. `expires_at` is milliseconds since the epoch. */
export interface RunEntry {
  run: string;
  by: string;
  since: string;
  expires_at: number;
}

/** A `langgraph-thread-runs` body: the run that holds one (thread, namespace), and the runs waiting. */
export interface RunsBody {
  thread_id: string;
  checkpoint_ns: string;
  holder: RunEntry | null;
  waiting: RunEntry[];
}
