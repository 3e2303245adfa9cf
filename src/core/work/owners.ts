// Who a work item belongs to, read from its idempotency key: a document's effect (`doc:`), a durable run's child
// or question (`run:`), a schedule's tick (`schedule:`); keys only the store writes. Waiting for a human, a
// document's decision or a run's question is answered, cancelled, put back or asked again only by a human:
// the refusals that say so are here too.
import { PermissionDeniedError } from '../../errors.js';
import type { WorkItem } from '../types.js';

/**
 * Idempotency keys of the work items a document's commit enqueues as effects: `doc:<kind>/<id>#<key>`.
 * Only the store writes them (a plain enqueue refuses the prefix), so such an item is known to belong to
 * its document; waiting for a human, it is a human decision that only a human's answer resolves.
 */
export const OWNED_KEY_PREFIX = 'doc:';

/**
 * Idempotency keys of the items a schedule's ticks enqueue: `schedule:<name>@<tick>`. Only the scheduler
 * writes them (a plain enqueue refuses the prefix), so no caller can take a tick's key first with an item of
 * its own, which the scheduler would then take for the tick's.
 */
export const SCHEDULE_KEY_PREFIX = 'schedule:';

/** Passed to `WorkQueue.enqueueMany` by the scheduler alone: it may write `schedule:` keys. Not exported by the package. */
export const AS_SCHEDULER: unique symbol = Symbol('agentstate.scheduler');

/**
 * Idempotency keys of the items a durable run enqueues: `run:<parent>#<role>#<step key>#<n>`, a child
 * (`spawn`) or a question for a person (`ask`). Only a run writes them (a plain enqueue refuses the prefix),
 * so such an item is known to belong to its parent's run, which its end wakes; a question waiting for a
 * human is answered, cancelled or put back only by a human.
 */
export const RUN_KEY_PREFIX = 'run:';

/** Passed to `WorkQueue.enqueueMany` by a durable run alone: it may write `run:` keys. Not exported by the package. */
export const AS_RUN: unique symbol = Symbol('agentstate.run');

/** What a durable run enqueued: a child of a spawn, or a question of an ask. */
export type RunRole = 'spawn' | 'ask';

/** The idempotency key of the `n`-th item the run of `parent` enqueues in the step whose key is `stepKey`. */
export function runKey(parent: string, role: RunRole, stepKey: string, n: number): string {
  return `${RUN_KEY_PREFIX}${parent}#${role}#${stepKey}#${n}`;
}

/** The run `item` belongs to (its parent, and what it is to it), or null for an item no run enqueued. */
export function runParentOf(
  item: Pick<WorkItem, 'idempotency_key'>,
): { parent: string; role: RunRole; stepKey: string; n: number } | null {
  const key = item.idempotency_key;
  if (key === null || !key.startsWith(RUN_KEY_PREFIX)) return null;
  const [parent, role, stepKey, n] = key.slice(RUN_KEY_PREFIX.length).split('#');
  // Stryker disable next-line StringLiteral: equivalent: with fewer than four parts the step key is missing first
  if (!parent || (role !== 'spawn' && role !== 'ask') || !stepKey || !/^\d+$/.test(n ?? '')) return null;
  return { parent, role, stepKey, n: Number(n) };
}

/** The signal a run's child or question sends its parent when it ends, which the parent's join or ask waits for. */
export function runSignalName(role: RunRole, stepKey: string): string {
  return `${role === 'ask' ? 'answer' : 'join'}:${stepKey}`;
}

/** Whether `item` is a durable run's question for a person (only a human answers, cancels or unparks it). */
export function isRunQuestion(item: Pick<WorkItem, 'idempotency_key'>): boolean {
  return runParentOf(item)?.role === 'ask';
}

/** Why anyone but a human may not answer, cancel or unpark a run's question. */
export function runQuestionRefusal(item: WorkItem, action: string): PermissionDeniedError {
  // Stryker disable next-line OptionalChaining: equivalent: only a run's question is refused this way
  const parent = runParentOf(item)?.parent;
  return new PermissionDeniedError(
    `cannot ${action} work item ${item.id}: it is a question the run of ${parent} asked a person; a human answers it (resolve it done with the answer as a human: actor_kind human and the name of who answered; CLI: agentstate resolve ${item.id} done --result '{"answer":…}' --actor <name> --actor-kind human)`,
    { id: item.id, run: parent, rule: 'human-decision' },
  );
}

/** The idempotency key of effect `key` of document `kind`/`id` (`doc:<kind>/<id>#<key>`), the key `ownerOf` reads. */
export function ownedKey(kind: string, id: string, key: string): string {
  return `${OWNED_KEY_PREFIX}${kind}/${id}#${key}`;
}

/** The document that enqueued `item` as an effect, or null for an ordinary item. */
export function ownerOf(item: Pick<WorkItem, 'idempotency_key'>): { kind: string; id: string } | null {
  const key = item.idempotency_key;
  if (key === null || !key.startsWith(OWNED_KEY_PREFIX)) return null;
  const slash = key.indexOf('/');
  const hash = key.lastIndexOf('#');
  // Stryker disable next-line EqualityOperator: equivalent: the slash comes after the four-character prefix, and # and / never share a place
  if (slash < 0 || hash < slash) return null;
  return { kind: key.slice(OWNED_KEY_PREFIX.length, slash), id: key.slice(slash + 1, hash) };
}

/** Why an item waiting for a human decision cannot be resolved, unparked or claimed like other work. */
export function humanDecisionRefusal(item: WorkItem, action: string): PermissionDeniedError {
  const owner = ownerOf(item)!;
  const how =
    action === 'cancel'
      ? `only a human cancels it (actor_kind human and the name of who cancels; ` +
        `CLI: agentstate cancel ${item.id} --actor <name> --actor-kind human)`
      : `a human answers it: resolve it done with the answer as a human (actor_kind human and the name of who answered; ` +
        `CLI: agentstate resolve ${item.id} done --result '{"answer":…}' --actor <name> --actor-kind human)`;
  return new PermissionDeniedError(
    `cannot ${action} work item ${item.id}: it is a human decision of ${owner.kind}/${owner.id}; ${how}`,
    { id: item.id, owner: `${owner.kind}/${owner.id}`, rule: 'human-decision' },
  );
}

/**
 * A document's human decision is never re-queued where a worker could take it: a person asks it again, on
 * its own (`retry` with actor_kind human puts it back to waiting_human).
 */
export function humanDecisionRetryRefusal(item: WorkItem): PermissionDeniedError {
  const owner = ownerOf(item)!;
  return new PermissionDeniedError(
    `cannot retry work item ${item.id}: it is a human decision of ${owner.kind}/${owner.id}; ` +
      `a human asks it again, on its own: retry it with actor_kind human and the name of who asks ` +
      `(CLI: agentstate retry ${item.id} --actor <name> --actor-kind human)`,
    { id: item.id, owner: `${owner.kind}/${owner.id}`, rule: 'human-decision' },
  );
}
