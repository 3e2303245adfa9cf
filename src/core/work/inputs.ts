// The inputs of the work calls: their specs (WORK_INPUTS, shared by the library, the CLI, the workflows and the
// operation table's schemas), the defaults of a lease, and an enqueue's checks and defaults (normalizeEnqueue,
// shared with document effects).
import { InvalidInputError } from '../../errors.js';
import type { NewWorkItem } from '../backend.js';
import { newId } from '../ids.js';
import { checkInput, type InputSpec, LIMITS } from '../input.js';
import { parseTime } from '../time.js';
import { activeTraceparent, spanContextOf, TRACEPARENT_PATTERN } from '../tracing.js';
import { ACTOR_KINDS, BLOCKER_FAILURE_POLICIES, type EnqueueInput, WORK_ITEM_STATUSES } from '../types.js';
import { AS_RUN, AS_SCHEDULER, OWNED_KEY_PREFIX, RUN_KEY_PREFIX, SCHEDULE_KEY_PREFIX } from './owners.js';
import { STORE_ACTOR_KIND } from './rules.js';

/** Default lease length: one minute, extended by heartbeats. */
export const DEFAULT_LEASE_MS = 60_000;
/** Default attempts before an item whose lease keeps expiring is failed. */
export const DEFAULT_MAX_ATTEMPTS = 3;

const LEASE = { type: 'int', min: 1, max: LIMITS.leaseMs } as const;
const KIND = { type: 'string', enum: ACTOR_KINDS } as const;
/** Who acts: the actor its events record, and its kind. */
const ACTOR = { actor: { type: 'name' }, actor_kind: KIND } as const;
/** Whose lease a call acts under: the worker holding it, and the attempt it holds (the fencing token). */
const HOLDER = { worker: { type: 'name' }, attempt: { type: 'int', min: 1 } } as const;

/** Input specs, shared by the library, the CLI and the workflows (their payloads are these objects). */
export const WORK_INPUTS = {
  enqueue: {
    title: { type: 'string', required: true },
    kind: { type: 'name', nullable: true },
    payload: { type: 'json' },
    priority: { type: 'int', min: -1_000_000, max: 1_000_000 },
    idempotency_key: { type: 'name', nullable: true },
    blocked_by: { type: 'names' },
    not_before: { type: 'time', nullable: true },
    max_attempts: { type: 'int', min: 1, max: 1000 },
    waiting_human: { type: 'bool' },
    on_blocker_failure: { type: 'string', enum: BLOCKER_FAILURE_POLICIES },
    concurrency_key: { type: 'name', nullable: true },
    traceparent: {
      type: 'string',
      nullable: true,
      max: 55,
      pattern: { source: TRACEPARENT_PATTERN, what: 'a W3C traceparent (00-<32 hex>-<16 hex>-<2 hex>)' },
    },
    ...ACTOR,
  },
  retry: {
    id: { type: 'name', required: true },
    reason: { type: 'text' },
    ...ACTOR,
  },
  retry_many: {
    ids: { type: 'names', required: true, max: LIMITS.claimLimit },
    reason: { type: 'text' },
    ...ACTOR,
  },
  history: {
    window_ms: { type: 'int', min: 60_000, max: 30 * 86_400_000 },
    buckets: { type: 'int', min: 2, max: 200 },
  },
  cancel_many: {
    ids: { type: 'names', required: true, max: LIMITS.claimLimit },
    reason: { type: 'text' },
    ...ACTOR,
  },
  claim: {
    worker: { type: 'name' },
    lease_ms: LEASE,
    kind: { type: 'name' },
    id: { type: 'name' },
    key: { type: 'name' },
    limit: { type: 'int', min: 1, max: LIMITS.claimLimit },
    actor_kind: KIND,
  },
  heartbeat: {
    id: { type: 'name', required: true },
    worker: { type: 'name' },
    lease_ms: LEASE,
    attempt: { type: 'int', min: 1 },
  },
  resolve: {
    id: { type: 'name', required: true },
    status: { type: 'string', required: true, enum: ['done', 'failed'] },
    result: { type: 'json' },
    error: { type: 'text', nullable: true },
    retry_at: { type: 'time', nullable: true },
    ...HOLDER,
    ...ACTOR,
  },
  release: {
    id: { type: 'name', required: true },
    ...HOLDER,
    ...ACTOR,
  },
  annotate: {
    id: { type: 'name', required: true },
    notes: { type: 'object', required: true },
    ...ACTOR,
    ...HOLDER,
  },
  cancel: {
    id: { type: 'name', required: true },
    reason: { type: 'text' },
    ...ACTOR,
  },
  set_limit: {
    key: { type: 'name', required: true },
    max_in_flight: { type: 'int', min: 1, max: LIMITS.claimLimit * 1000, nullable: true },
    rate: { type: 'object', nullable: true },
    ...ACTOR,
  },
  remove_limit: {
    key: { type: 'name', required: true },
    ...ACTOR,
  },
  get: { id: { type: 'name', required: true } },
  signal: {
    id: { type: 'name', required: true },
    name: { type: 'name', required: true },
    payload: { type: 'json' },
    ...ACTOR,
  },
  reset_step: {
    id: { type: 'name', required: true },
    name: { type: 'name', required: true },
    occurrence: { type: 'int', min: 1 },
    reason: { type: 'text' },
    ...ACTOR,
  },
  list: {
    status: { type: 'string', enum: WORK_ITEM_STATUSES, many: WORK_ITEM_STATUSES.length },
    kind: { type: 'name' },
    limit: { type: 'int', min: 1, max: 100_000 },
    ready: { type: 'bool' },
    blocked_on_failure: { type: 'bool' },
    concurrency_key: { type: 'name' },
    after: { type: 'name' },
  },
  steps: {
    id: { type: 'name', required: true },
    after: { type: 'int', min: 1 },
    limit: { type: 'int', min: 1, max: 100_000 },
  },
} satisfies Record<string, InputSpec>;

/** Checks an enqueue input and fills its defaults (shared with document effects). */
export function normalizeEnqueue(
  raw: EnqueueInput,
  now: number,
  defaultActor: string,
  as?: typeof AS_SCHEDULER | typeof AS_RUN,
): NewWorkItem {
  const i = checkInput<EnqueueInput>('enqueue', raw, WORK_INPUTS.enqueue);
  if (i.title.trim() === '')
    throw new InvalidInputError('enqueue: title must not be blank', { field: 'title' });
  if (typeof i.traceparent === 'string' && !spanContextOf(i.traceparent))
    throw new InvalidInputError('enqueue: traceparent has an all-zero trace or span id (invalid by W3C)', {
      field: 'traceparent',
    });
  if (i.idempotency_key?.startsWith(OWNED_KEY_PREFIX)) {
    throw new InvalidInputError(
      `enqueue: idempotency keys starting with ${OWNED_KEY_PREFIX} belong to the work items documents enqueue themselves; use another key`,
      { field: 'idempotency_key' },
    );
  }
  if (as !== AS_RUN && i.idempotency_key?.startsWith(RUN_KEY_PREFIX)) {
    throw new InvalidInputError(
      `enqueue: idempotency keys starting with ${RUN_KEY_PREFIX} belong to the items durable runs enqueue (their children and questions); use another key`,
      { field: 'idempotency_key' },
    );
  }
  if (as !== AS_SCHEDULER && i.idempotency_key?.startsWith(SCHEDULE_KEY_PREFIX)) {
    throw new InvalidInputError(
      `enqueue: idempotency keys starting with ${SCHEDULE_KEY_PREFIX} belong to the items schedules enqueue; use another key`,
      { field: 'idempotency_key' },
    );
  }
  return {
    id: newId('wi', now),
    title: i.title,
    kind: i.kind ?? null,
    status: i.waiting_human ? 'waiting_human' : 'pending',
    priority: i.priority ?? 0,
    payload: i.payload ?? null,
    idempotency_key: i.idempotency_key ?? null,
    blocked_by: [...new Set(i.blocked_by ?? [])],
    not_before: i.not_before ? parseTime(i.not_before, 'not_before', now, 'ahead') : null,
    max_attempts: i.max_attempts ?? DEFAULT_MAX_ATTEMPTS,
    on_blocker_failure: i.on_blocker_failure ?? 'wait',
    concurrency_key: i.concurrency_key ?? null,
    traceparent: i.traceparent === undefined ? activeTraceparent() : i.traceparent,
    created_at: now,
    actor: i.actor ?? defaultActor,
    actor_kind: i.actor_kind ?? STORE_ACTOR_KIND,
  };
}
