// The checks of the LangGraph adapters' kinds: each commit's audit event, appended in the same transaction
// (a checkpoint, the writes it added, a store item put or deleted, a run taking or leaving a thread).
import type { CommitEffects, Json, JsonObject } from '../../../index.js';
import { canonical as canon } from '../encoding.js';
import type { RunsBody, WriteRow } from './model.js';

function str(v: Json | undefined): string | null {
  return typeof v === 'string' ? v : null;
}

/** `langgraph-thread`: a checkpoint stored, or the thread deleted (pruning records nothing). */
export function checkThread(next: JsonObject): CommitEffects {
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
}

/** `langgraph-writes`: the tasks and channels of the writes this commit added. */
export function checkWrites(next: JsonObject, prev: JsonObject | null): CommitEffects {
  if (next.deleted === true) return {};
  const key = (w: WriteRow) => `${w[0]}\u0000${w[1]}\u0000${canon(w[3])}`;
  const before = new Set(((prev?.writes as WriteRow[] | undefined) ?? []).map(key));
  const added = (next.writes as WriteRow[]).filter((w) => !before.has(key(w)));
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
}

/** `langgraph-store`: an item put, or deleted (a null value). */
export function checkStore(next: JsonObject): CommitEffects {
  return {
    events: [
      {
        type: next.value === null ? 'langgraph_store_deleted' : 'langgraph_store_put',
        data: { namespace: next.namespace ?? null, key: next.key ?? null },
      },
    ],
  };
}

const holderRun = (b: JsonObject | null | undefined): string | null => {
  const h = (b as Partial<RunsBody> | null | undefined)?.holder;
  return h && typeof h === 'object' && !Array.isArray(h) && typeof h.run === 'string' ? h.run : null;
};

/** `langgraph-thread-runs`: a run started (took the thread) or ended (left it). */
export function checkThreadRuns(next: JsonObject, prev: JsonObject | null): CommitEffects {
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
}
