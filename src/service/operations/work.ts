// Work-item operations: the queue with leased claims, as the service table offers it to every edge.

import type { RunRecord } from '../../core/codecs/run-records.js';
import { inputSchema, type JsonSchema } from '../../core/json-schema.js';
import {
  RUN_RECORD,
  RUN_RECORDS,
  SIGNAL_RECORD,
  STATUS_COUNTS,
  WORK_ITEM,
  WORK_ITEMS,
} from '../../core/output-schemas.js';
import type {
  AnnotateInput,
  CancelInput,
  CancelManyInput,
  ClaimInput,
  EnqueueInput,
  HeartbeatInput,
  HistoryInput,
  ListInput,
  ReleaseInput,
  ResetStepInput,
  ResolveInput,
  RetryInput,
  RetryManyInput,
  SignalInput,
  StepsInput,
  WorkItem,
} from '../../core/types.js';
import { WORK_INPUTS } from '../../core/work/inputs.js';
import type { Instance } from '../../instance/instance.js';
import { type Operation, operation } from '../operation.js';

/** Upper bounds (ms) of queue_stats' claim→resolve duration buckets: the same as the Prometheus histogram's. */
export const DURATION_BUCKETS_MS = [
  100, 500, 1000, 5000, 15_000, 60_000, 300_000, 900_000, 3_600_000, 14_400_000,
];

const int: JsonSchema = { type: 'integer' };
export const QUEUE_STATS: JsonSchema = {
  type: 'object',
  properties: {
    groups: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          status: { type: 'string' },
          kind: { type: ['string', 'null'] },
          count: int,
          attempts: int,
          retried: int,
        },
      },
    },
    oldest_ready_since: { type: ['string', 'null'] },
    leases_expired: int,
    leases_expiring: int,
    blocked_on_failure: int,
    last_attempt: int,
    waiting_long: int,
    durations: { type: 'array', items: { type: 'object' } },
  },
  required: [
    'groups',
    'oldest_ready_since',
    'leases_expired',
    'leases_expiring',
    'blocked_on_failure',
    'last_attempt',
    'waiting_long',
    'durations',
  ],
};

const QUEUE_HISTORY: JsonSchema = {
  type: 'object',
  properties: {
    since: { type: 'string' },
    bucket_ms: int,
    open: int,
    buckets: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          start: { type: 'string' },
          created: int,
          done: int,
          failed: int,
          cancelled: int,
          open: int,
        },
        required: ['start', 'created', 'done', 'failed', 'cancelled', 'open'],
      },
    },
  },
  required: ['since', 'bucket_ms', 'open', 'buckets'],
};

/** queue_stats' input: its windows (also instance_metrics'). */
export const QUEUE_STATS_INPUT = inputSchema(
  {
    expiring_within_ms: { type: 'int', min: 0, max: 86_400_000 },
    waiting_longer_than_ms: { type: 'int', min: 0, max: 30 * 86_400_000 },
  },
  {
    expiring_within_ms: 'leases ending within this many ms count as expiring (default 60000)',
    waiting_longer_than_ms:
      'items waiting for a human longer than this count as waiting long (default 3600000)',
  },
);

/** queue_stats' windows: when a lease counts as expiring, an item as waiting long for a human. */
export interface QueueStatsInput {
  expiring_within_ms?: number;
  waiting_longer_than_ms?: number;
}

/** The queue's health as queue_stats answers it (also the queue part of instance_metrics). */
export async function queueStats(inst: Instance, i: QueueStatsInput) {
  const s = await inst.work.stats({
    expiringWithinMs: i.expiring_within_ms ?? 60_000,
    bucketsMs: DURATION_BUCKETS_MS,
    ...(i.waiting_longer_than_ms === undefined ? {} : { waitingLongerThanMs: i.waiting_longer_than_ms }),
  });
  return {
    groups: s.groups,
    oldest_ready_since: s.oldestReadySince === null ? null : new Date(s.oldestReadySince).toISOString(),
    leases_expired: s.leasesExpired,
    leases_expiring: s.leasesExpiring,
    blocked_on_failure: s.blockedOnFailure,
    last_attempt: s.lastAttempt,
    waiting_long: s.waitingLong,
    durations: s.durations.map((d) => ({
      kind: d.kind,
      count: d.count,
      sum_ms: d.sumMs,
      buckets: Object.fromEntries(DURATION_BUCKETS_MS.map((b, k) => [String(b), d.buckets[k] ?? 0])),
    })),
  };
}

/** What queue_stats answers. */
export type QueueStatsResult = Awaited<ReturnType<typeof queueStats>>;

const { limit: _limit, ...CLAIM_ONE } = WORK_INPUTS.claim;

const listInput = inputSchema(WORK_INPUTS.list, {
  ready: 'true: only items claimable now; false: only pending items still blocked or not yet due',
  blocked_on_failure:
    'true: only pending items blocked on a failed or cancelled blocker (retry it or cancel them); false: the others',
  after: 'page on: the items after this one in claim order (the id of the last item a page showed)',
});

/** list_steps' page size when the call names none (the library's `work.steps` returns every record). */
const STEPS_PAGE = 1000;

/** An operation that changes one work item and answers it (the item as it is now). */
function itemChange<I>(op: Pick<Operation<I>, 'name' | 'description' | 'input' | 'idempotent' | 'run'>) {
  return operation<I, unknown>({ group: 'work', output: WORK_ITEM, writes: true, ...op });
}

export const WORK_OPERATIONS = [
  itemChange({
    name: 'enqueue',
    description: 'Add a work item (an idempotency_key already used returns the existing item).',
    input: inputSchema(WORK_INPUTS.enqueue, {
      blocked_by: 'ids of items that must be done first',
      not_before: 'not claimable before this ISO-8601 time or duration from now (5m)',
      waiting_human: 'start parked for a human instead of pending',
      on_blocker_failure: 'if a blocker fails or is cancelled: wait (default) or cascade (cancel with it)',
    }),
    idempotent: false,
    run: (inst, i: EnqueueInput) => inst.work.enqueue(i),
  }),
  operation({
    name: 'claim',
    group: 'work',
    description: 'Atomically claim the highest-priority ready item under a lease; null when none is ready.',
    input: inputSchema(CLAIM_ONE, {
      lease_ms: 'lease length in milliseconds (default 60000)',
      key: 'hold a name instead, e.g. path:src/a.ts (release when done)',
    }),
    output: { anyOf: [WORK_ITEM, { type: 'null' }] },
    writes: true,
    run: (inst, i: ClaimInput) => inst.work.claim(i),
  }),
  operation({
    name: 'claim_many',
    group: 'work',
    description: 'Claim up to limit ready items in one statement.',
    input: inputSchema(WORK_INPUTS.claim),
    output: WORK_ITEMS,
    writes: true,
    run: (inst, i: ClaimInput) => inst.work.claimMany(i),
  }),
  itemChange({
    name: 'heartbeat',
    description: 'Extend your lease on a claimed item (LEASE_LOST if it is no longer yours).',
    input: inputSchema(WORK_INPUTS.heartbeat, { attempt: 'fencing token: the attempts value of your claim' }),
    idempotent: true,
    run: (inst, i: HeartbeatInput) => inst.work.heartbeat(i),
  }),
  itemChange({
    name: 'resolve',
    description:
      'Finish a claimed item as done or failed (LEASE_LOST if the lease is no longer yours); a human answers a decision with actor_kind human.',
    input: inputSchema(WORK_INPUTS.resolve, {
      attempt: 'fencing token: the attempts value of your claim',
      actor: 'who resolves an item waiting for a human',
      retry_at: 'failed: retry not before (time or 30s) if attempts remain',
    }),
    idempotent: true,
    run: (inst, i: ResolveInput, ctx) => inst.work.resolve(i, ctx),
  }),
  itemChange({
    name: 'release',
    description: 'Hand a claimed item back to the queue without spending the attempt (graceful stop).',
    input: inputSchema(WORK_INPUTS.release, {
      worker: 'whose lease it is',
      actor: 'who hands it back, when not the worker (a person releasing a stuck lease)',
    }),
    run: (inst, i: ReleaseInput) => inst.work.release(i),
  }),
  itemChange({
    name: 'annotate',
    description: "Merge a JSON object into an item's notes (RFC 7396: a null value removes a key).",
    input: inputSchema(WORK_INPUTS.annotate, {
      worker: 'only while this worker holds the lease',
    }),
    idempotent: true,
    run: (inst, i: AnnotateInput) => inst.work.annotate(i),
  }),
  itemChange({
    name: 'cancel',
    description:
      'Cancel an unfinished item (a human decision a document asked for: by a human only; a human retry asks it again).',
    input: inputSchema(WORK_INPUTS.cancel),
    run: (inst, i: CancelInput, ctx) => inst.work.cancel(i, ctx),
  }),
  itemChange({
    name: 'retry',
    description:
      'Put a failed or cancelled item back to pending, fresh attempts, same id; items its failure cancelled re-open. A human decision: by a human only, back to waiting for a human.',
    input: inputSchema(WORK_INPUTS.retry, { reason: 'why it is retried (kept in its history)' }),
    run: (inst, i: RetryInput) => inst.work.retry(i),
  }),
  operation({
    name: 'retry_many',
    group: 'work',
    description: 'Retry several failed or cancelled items in one transaction: all of them, or none.',
    input: inputSchema(WORK_INPUTS.retry_many, { ids: 'ids of the failed or cancelled items' }),
    output: WORK_ITEMS,
    writes: true,
    run: (inst, i: RetryManyInput) => inst.work.retryMany(i),
  }),
  operation({
    name: 'cancel_many',
    group: 'work',
    description:
      'Cancel several unfinished items in one transaction: all of them, or none (a human decision: by a human only).',
    input: inputSchema(WORK_INPUTS.cancel_many, { ids: 'ids of the unfinished items' }),
    output: WORK_ITEMS,
    writes: true,
    run: (inst, i: CancelManyInput, ctx) => inst.work.cancelMany(i, ctx),
  }),
  itemChange({
    name: 'park',
    description: 'Park a pending item for a human (waiting_human).',
    input: inputSchema(WORK_INPUTS.cancel),
    run: (inst, i: CancelInput) => inst.work.park(i),
  }),
  itemChange({
    name: 'unpark',
    description: 'Return a parked item to the queue (not a decision a document asked for).',
    input: inputSchema(WORK_INPUTS.cancel),
    run: (inst, i: CancelInput, ctx) => inst.work.unpark(i, ctx),
  }),
  operation({
    name: 'get_item',
    group: 'work',
    description: 'Read one work item by id (NOT_FOUND when there is none).',
    input: inputSchema(WORK_INPUTS.get),
    output: WORK_ITEM,
    writes: false,
    run: (inst, i: { id: string }) => inst.work.get(i),
  }),
  operation({
    name: 'list_steps',
    group: 'work',
    description:
      "What an item's durable run recorded, in order: steps (completed with their result, or failed), sleeps and resets.",
    input: inputSchema(WORK_INPUTS.steps, {
      after: 'page on: the records after this position (of the last record a page showed)',
      limit: `at most this many records (default ${STEPS_PAGE})`,
    }),
    output: RUN_RECORDS,
    writes: false,
    page: {
      limit: 'limit',
      defaultLimit: STEPS_PAGE,
      next: (last: RunRecord) => ({ after: last.position }),
    },
    run: (inst, i: StepsInput) => inst.work.steps({ ...i, limit: i.limit ?? STEPS_PAGE }),
  }),
  operation({
    name: 'signal',
    group: 'work',
    description:
      "Send a signal to an unfinished item: a durable run's wait for that name takes it (kept until one does) and wakes.",
    input: inputSchema(WORK_INPUTS.signal, {
      name: 'the name a wait takes it by',
      payload: 'what the wait returns (JSON)',
    }),
    output: SIGNAL_RECORD,
    writes: true,
    run: (inst, i: SignalInput) => inst.work.signal(i),
  }),
  operation({
    name: 'reset_step',
    group: 'work',
    description:
      "Re-run a recorded step of an item's durable run, and everything after it, on its next attempt (a person's decision; not while in flight).",
    input: inputSchema(WORK_INPUTS.reset_step, {
      name: 'the recorded step',
      occurrence: 'which step of that name (1 the first)',
      reason: 'why it runs again (kept in the log)',
    }),
    output: RUN_RECORD,
    writes: true,
    run: (inst, i: ResetStepInput) => inst.work.resetStep(i),
  }),
  operation({
    name: 'list_items',
    group: 'work',
    description: 'Work items in claim order, by status and kind (default 100).',
    input: listInput,
    output: WORK_ITEMS,
    writes: false,
    // Claim order is (priority DESC, created_at, id), none of which changes: the next page is after the last
    // item's id, with the same filters.
    page: { limit: 'limit', defaultLimit: 100, next: (last: WorkItem) => ({ after: last.id }) },
    run: (inst, i: ListInput & { ready?: boolean }) => inst.work.list(i),
  }),
  operation({
    name: 'count_items',
    group: 'work',
    description: 'How many items there are in each status.',
    input: inputSchema({}),
    output: STATUS_COUNTS,
    writes: false,
    run: (inst) => inst.work.counts(),
  }),
  operation({
    name: 'queue_history',
    group: 'work',
    description:
      'The queue over time: per span of a window, items created, done, failed and cancelled, and how many were unfinished.',
    input: inputSchema(WORK_INPUTS.history, {
      window_ms: 'how far back, in ms (default 86400000: 24 h)',
      buckets: 'how many equal spans (default 48)',
    }),
    output: QUEUE_HISTORY,
    writes: false,
    run: (inst, i: HistoryInput) => inst.work.history(i),
  }),
  operation({
    name: 'queue_stats',
    group: 'work',
    description:
      'Queue health: items by status and kind, the oldest ready item, leases, items blocked on a failure, on their last attempt or waiting long for a human, durations.',
    input: QUEUE_STATS_INPUT,
    output: QUEUE_STATS,
    writes: false,
    run: (inst, i: QueueStatsInput) => queueStats(inst, i),
  }),
  operation({
    name: 'replay',
    group: 'work',
    description: 'Reclaim expired leases, re-emit every unfinished item as work_item_replayed, return them.',
    input: inputSchema({}),
    output: WORK_ITEMS,
    writes: true,
    run: (inst) => inst.work.replayPending(),
  }),
] as const;
