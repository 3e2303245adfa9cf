// What a run throws to end an attempt: a suspension (a durable sleep or wait handed the item back), and a
// join whose children did not all end done.
import type { WorkItem } from '../work/types.js';
import type { ChildOutcome } from './types.js';

/**
 * Thrown by a durable sleep (or wait) once the item is handed back: the attempt ends here, without a result,
 * and the run continues on the item's next claim. The worker runtime catches it; code of its own that holds a
 * claim must let it end the attempt (`isSuspended(err)`) and not resolve the item.
 */
export class RunSuspended extends Error {
  /** The item handed back. */
  readonly item: WorkItem;
  /** When the item is claimable again. */
  readonly until: string;
  constructor(item: WorkItem, until: number) {
    super(`run of ${item.id} suspended until ${new Date(until).toISOString()}`);
    this.name = 'RunSuspended';
    this.item = item;
    this.until = new Date(until).toISOString();
  }
}

/** Whether `err` is a durable sleep or wait ending the attempt (RunSuspended). */
export function isSuspended(err: unknown): err is RunSuspended {
  return err instanceof RunSuspended;
}

/**
 * A join whose children did not all end done: the attempt fails with it, and retrying cannot help (the join's
 * look at them is recorded), so the worker does not retry it. `failed` names them.
 */
export class JoinFailed extends Error {
  /** The children that ended failed or cancelled, in spawn order. */
  readonly failed: ChildOutcome[];
  constructor(id: string, name: string, failed: ChildOutcome[]) {
    super(
      `work item ${id}: join ${JSON.stringify(name)}: ${failed.length} child${failed.length === 1 ? '' : 'ren'} did not end done (${failed
        .slice(0, 5)
        .map((c) => `${c.id} ${c.status}${c.error ? `: ${c.error}` : ''}`)
        .join('; ')})`,
    );
    this.name = 'JoinFailed';
    this.failed = failed;
  }
}
