// Reading a LangGraph thread back in tests: its checkpoints newest first, and where it forked.
import type { BaseCheckpointSaver, CheckpointTuple } from '@langchain/langgraph-checkpoint';

export async function history(saver: BaseCheckpointSaver, thread: string): Promise<CheckpointTuple[]> {
  const out: CheckpointTuple[] = [];
  for await (const t of saver.list({ configurable: { thread_id: thread, checkpoint_ns: '' } })) out.push(t);
  return out;
}

/** Parents with more than one child: where the thread forked. */
export function forks(tuples: CheckpointTuple[]): string[] {
  const children = new Map<string, number>();
  for (const t of tuples) {
    const p = t.parentConfig?.configurable?.checkpoint_id as string | undefined;
    if (p) children.set(p, (children.get(p) ?? 0) + 1);
  }
  return [...children].filter(([, n]) => n > 1).map(([p]) => p);
}
