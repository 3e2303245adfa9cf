// Resolves: a call finishes an item it holds (or one waiting for a human) as done or failed, alone, coalesced
// with overlapping resolves on the handle, or in a batch (all or none); a resolve repeated after it succeeded
// gets the item as it is. An item a durable run enqueued tells its parent when it ends (endedAll).
import { InvalidInputError, isAgentStateError } from '../../errors.js';
import type { ResolveQuery } from '../backend.js';
import { itemEvent } from '../events/log.js';
import { checkInput, LIMITS } from '../input.js';
import { parseTime } from '../time.js';
import type { ResolveInput, WorkItem } from '../types.js';
import type { CallProvenance, QueueParts } from './context.js';
import { WORK_INPUTS } from './inputs.js';
import { ownerOf, runParentOf, runSignalName } from './owners.js';
import { isRepeatedHumanResolution } from './refusals.js';
import { isTerminal, STORE_ACTOR_KIND } from './rules.js';

/** The body of `WorkQueue.resolve` (its comment says what it does). */
export async function resolve(w: QueueParts, input: ResolveInput, origin: CallProvenance): Promise<WorkItem> {
  const i = checkInput<ResolveInput>('resolve', input, WORK_INPUTS.resolve);
  if (i.actor_kind === 'human') {
    const current = await w.backend.work.get(i.id);
    if (current && ownerOf(current) && w.ctx.answer) {
      if (i.actor === undefined) {
        throw new InvalidInputError(
          `resolve: work item ${i.id} is a human decision: name who answered it (actor)`,
          { field: 'actor', id: i.id },
        );
      }
      return w.ctx.answer(current, {
        status: i.status,
        result: i.result ?? null,
        error: i.error ?? null,
        actor: i.actor,
        provenance: origin.provenance,
      });
    }
  }
  if (w.resolves) {
    // Overlapping resolves on this handle go in one transaction, each answered on its own.
    const q = resolveQueries(w, [i])[0]!;
    return ended(w, await w.resolves.submit(q).catch((err: unknown) => repeatedResolve(w, err, q)));
  }
  const [item] = await resolveChecked(w, resolveQueries(w, [i]));
  return ended(w, item as WorkItem);
}

/**
 * The item, when the resolve `q` that `err` refused is the retry of one that already finished it outside
 * a lease (an item waiting for a human); otherwise throws `err`. Only a refusal's path pays these reads.
 */
export async function repeatedResolve(w: QueueParts, err: unknown, q: ResolveQuery): Promise<WorkItem> {
  if (!isAgentStateError(err) || (err.code !== 'INVALID_TRANSITION' && err.code !== 'LEASE_LOST')) throw err;
  const current = await w.backend.work.get(q.id);
  if (current && isRepeatedHumanResolution(current, await itemEvent(w.backend, q.id, 'newest'), q))
    return current;
  throw err;
}

/** The body of `WorkQueue.resolveMany` (its comment says what it does). */
export async function resolveMany(w: QueueParts, inputs: ResolveInput[]): Promise<WorkItem[]> {
  if (!Array.isArray(inputs) || inputs.length > LIMITS.claimLimit) {
    throw new InvalidInputError(
      `resolveMany takes an array of at most ${LIMITS.claimLimit} resolves (as many as one claim can take)`,
      {
        field: 'resolves',
      },
    );
  }
  return endedAll(
    w,
    await resolveChecked(
      w,
      resolveQueries(
        w,
        inputs.map((input) => checkInput<ResolveInput>('resolve', input, WORK_INPUTS.resolve)),
      ),
    ),
  );
}

/**
 * Resolves checked queries in one transaction; a resolve repeated after it finished an item waiting for a
 * human gets that item as it is, and the rest of the batch runs again without it.
 */
export async function resolveChecked(w: QueueParts, qs: ResolveQuery[]): Promise<WorkItem[]> {
  if (qs.length === 0) return [];
  // Resolves retried after they finished items waiting for a human get those items as they are; the
  // rest of the batch runs again without them (all or nothing still holds for the rest).
  const repeated = new Map<string, WorkItem>();
  for (;;) {
    const rest = repeated.size === 0 ? qs : qs.filter((q) => !repeated.has(q.id));
    try {
      const items = rest.length === 0 ? [] : await w.backend.work.resolve(rest);
      if (repeated.size === 0) return items;
      const resolved = new Map(items.map((item) => [item.id, item]));
      return qs.map((q) => (repeated.get(q.id) ?? resolved.get(q.id))!);
    } catch (err) {
      const id = isAgentStateError(err) ? err.details.id : undefined;
      const q = rest.find((x) => x.id === id);
      if (!q) throw err;
      repeated.set(q.id, await repeatedResolve(w, err, q));
    }
  }
}

/** The backend's queries of resolves already checked. */
export function resolveQueries(w: QueueParts, checked: ResolveInput[]): ResolveQuery[] {
  const now = w.ctx.clock();
  const seen = new Set<string>();
  return checked.map((i) => {
    if (seen.has(i.id)) {
      throw new InvalidInputError(`resolveMany names ${i.id} twice`, { field: 'id', id: i.id });
    }
    seen.add(i.id);
    if (i.retry_at != null && i.status !== 'failed') {
      throw new InvalidInputError(
        `resolve: retry_at is for a failed attempt to try again; work item ${i.id} is resolved ${i.status}`,
        { field: 'retry_at', id: i.id },
      );
    }
    return {
      id: i.id,
      status: i.status,
      result: i.result ?? null,
      error: i.error ?? null,
      retry_at: i.retry_at == null ? null : parseTime(i.retry_at, 'retry_at', now, 'ahead'),
      worker: i.worker ?? i.actor ?? w.ctx.defaultWorker,
      actor_kind: i.actor_kind ?? STORE_ACTOR_KIND,
      attempt: i.attempt ?? null,
      now,
    };
  });
}

/**
 * Tells the durable runs whose children or questions among `items` have ended: a signal to each parent
 * (`join:<key>` / `answer:<key>`), which wakes its join or ask. Best effort, after the commit: a parent that
 * misses one (a crash in between, an end no call of this handle made) finds it at its wait's next check.
 */
export async function endedAll(w: QueueParts, items: WorkItem[]): Promise<WorkItem[]> {
  for (const item of items) {
    const run = runParentOf(item);
    if (run === null || !isTerminal(item.status)) continue;
    await w.queue
      .signal({
        id: run.parent,
        name: runSignalName(run.role, run.stepKey),
        payload: { item: item.id, status: item.status },
        actor: w.ctx.defaultWorker,
      })
      .catch(() => {});
  }
  return items;
}

/** `endedAll` for one item: tells its durable run, if it has one, that it ended. */
export async function ended(w: QueueParts, item: WorkItem): Promise<WorkItem> {
  await endedAll(w, [item]);
  return item;
}
