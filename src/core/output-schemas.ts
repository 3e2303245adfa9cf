// JSON Schemas of what operations return (tool output schemas, OpenAPI responses); a test checks every
// operation's real results against them.

import type { JsonSchema } from './json-schema.js';
import { ACTOR_KINDS, BLOCKER_FAILURE_POLICIES, WORK_ITEM_STATUSES } from './types.js';

const str: JsonSchema = { type: 'string' };
const strOrNull: JsonSchema = { type: ['string', 'null'] };
const int: JsonSchema = { type: 'integer' };
const intOrNull: JsonSchema = { type: ['integer', 'null'] };
const bool: JsonSchema = { type: 'boolean' };
const any: JsonSchema = {};
const obj = (properties: Record<string, JsonSchema>, open = false): JsonSchema => ({
  type: 'object',
  properties,
  required: Object.keys(properties),
  additionalProperties: open,
});
const nullable = (s: JsonSchema): JsonSchema => ({ anyOf: [s, { type: 'null' }] });
const list = (items: JsonSchema): JsonSchema => ({ type: 'array', items });

const ITEM_FIELDS = {
  id: str,
  title: str,
  kind: strOrNull,
  status: { type: 'string', enum: WORK_ITEM_STATUSES },
  priority: int,
  payload: any,
  notes: { type: 'object' },
  result: any,
  error: strOrNull,
  attempts: int,
  max_attempts: int,
  lease_owner: strOrNull,
  lease_expires_at: strOrNull,
  claimed_at: strOrNull,
  blocked_by: list(str),
  not_before: strOrNull,
  idempotency_key: strOrNull,
  created_at: str,
  updated_at: str,
  resolved_at: strOrNull,
  on_blocker_failure: { type: 'string', enum: BLOCKER_FAILURE_POLICIES },
  cascaded_from: strOrNull,
  concurrency_key: strOrNull,
  traceparent: strOrNull,
};

/** An item; get and list add `blocked_on_failure` to a pending item that waits on a failed blocker. */
export const WORK_ITEM: JsonSchema = {
  ...obj(ITEM_FIELDS),
  properties: { ...ITEM_FIELDS, blocked_on_failure: list(str) },
};

export const WORK_ITEMS: JsonSchema = list(WORK_ITEM);

/**
 * One record of a durable run (`work.steps`): a step (completed with its result, or failed with its error),
 * a sleep with its wake time, or a person's reset; every one with its place in the log.
 */
export const RUN_RECORD: JsonSchema = {
  type: 'object',
  properties: {
    type: { type: 'string', enum: ['step', 'sleep', 'waiting', 'waited', 'reset'] },
    status: { type: 'string', enum: ['completed', 'failed'] },
    seq: int,
    from_seq: int,
    name: str,
    occurrence: int,
    attempt: int,
    worker: str,
    result: any,
    error: str,
    started_at: str,
    duration_ms: { type: 'number' },
    tries: int,
    wake_at: str,
    timeout_at: strOrNull,
    outcome: { type: 'string', enum: ['signal', 'timeout'] },
    payload: any,
    signal_position: intOrNull,
    sent_by: strOrNull,
    actor: strOrNull,
    actor_kind: { type: 'string', enum: ACTOR_KINDS },
    reason: strOrNull,
    position: int,
    at: str,
  },
  required: ['type', 'name', 'occurrence', 'position', 'at'],
  additionalProperties: false,
};

export const RUN_RECORDS: JsonSchema = list(RUN_RECORD);

/** A signal sent to an item (`work.signal`), as the log keeps it. */
export const SIGNAL_RECORD: JsonSchema = obj({
  type: { type: 'string', enum: ['signal'] },
  name: str,
  payload: any,
  actor: strOrNull,
  actor_kind: { type: 'string', enum: ACTOR_KINDS },
  position: int,
  at: str,
});

/** A concurrency key's limit (`work.limits()`). */
export const WORK_LIMIT: JsonSchema = obj({
  key: str,
  max_in_flight: intOrNull,
  rate: nullable(obj({ count: int, period_ms: int })),
  created_at: str,
  updated_at: str,
});

export const WORK_LIMITS: JsonSchema = list(WORK_LIMIT);

export const EVENT: JsonSchema = obj({
  position: int,
  stream: str,
  stream_seq: int,
  type: str,
  data: any,
  actor: strOrNull,
  correlation_id: strOrNull,
  causation_id: strOrNull,
  work_item_id: strOrNull,
  created_at: str,
  prev_hash: str,
  hash: str,
});

export const EVENTS: JsonSchema = list(EVENT);

export const STATUS_COUNTS: JsonSchema = obj(Object.fromEntries(WORK_ITEM_STATUSES.map((s) => [s, int])));

const COMMIT_FIELDS = {
  kind: str,
  id: str,
  version: int,
  previous_version: int,
  changed: bool,
  noop: bool,
  replayed: bool,
  content_hash: str,
  write_id: strOrNull,
  committed_at: str,
  body: { type: 'object' },
} satisfies Record<string, JsonSchema>;

export const COMMIT_RESULT: JsonSchema = obj(COMMIT_FIELDS);

/** `escalate`: the commit, and every decision item of the document still waiting for a human. */
export const ESCALATE_RESULT: JsonSchema = obj({ ...COMMIT_FIELDS, decisions: WORK_ITEMS });

const FORKED_FROM = nullable(obj({ kind: str, id: str, version: int }));

export const DOCUMENT: JsonSchema = obj({
  kind: str,
  id: str,
  version: int,
  body: { type: 'object' },
  content_hash: str,
  created_at: str,
  updated_at: str,
  forked_from: FORKED_FROM,
});

/** One part of a large value (`outlineOf`): its JSON Pointer, type, size, and entries. */
const OUTLINE_PART: JsonSchema = {
  type: 'object',
  properties: {
    path: str,
    type: { type: 'string', enum: ['object', 'array', 'string', 'number', 'boolean', 'null'] },
    chars: int,
    length: int,
  },
  required: ['path', 'type', 'chars'],
  additionalProperties: false,
};

/** What a read over its `max_chars` gives instead of the large value: its parts, and what was left out. */
const OUTLINE_FIELDS = {
  /** Characters of the value that was left out. */
  chars: int,
  outline: list(OUTLINE_PART),
  /** Parts not listed (past the outline's own share of max_chars). */
  more_parts: int,
  omitted: str,
};

/** A document whose body is over the read's max_chars: its metadata and the outline of the body. */
export const DOCUMENT_OUTLINE: JsonSchema = obj({
  ...Object.fromEntries(
    Object.entries((DOCUMENT as { properties: Record<string, JsonSchema> }).properties).filter(
      ([k]) => k !== 'body',
    ),
  ),
  ...OUTLINE_FIELDS,
});

/** A projection some of whose values are over the read's max_chars: those are outlined, not returned. */
export const PROJECTION_OUTLINE: JsonSchema = obj({
  kind: str,
  id: str,
  version: int,
  values: { type: 'object' },
  missing: list(str),
  /** The paths whose values were left out. */
  too_large: list(str),
  ...OUTLINE_FIELDS,
});

export const DOCUMENT_SUMMARIES: JsonSchema = list(
  obj({
    kind: str,
    id: str,
    version: int,
    content_hash: str,
    created_at: str,
    updated_at: str,
    forked_from: FORKED_FROM,
  }),
);

export const PROJECTION: JsonSchema = obj({
  kind: str,
  id: str,
  version: int,
  values: { type: 'object' },
  missing: list(str),
});

export const HISTORY: JsonSchema = obj({
  entries: list(
    obj({
      seq: int,
      version: int,
      parent_version: int,
      noop: bool,
      content_hash: str,
      actor: str,
      actor_kind: { type: 'string', enum: ACTOR_KINDS },
      provenance: nullable({ type: 'object' }),
      write_id: strOrNull,
      reason: strOrNull,
      override: nullable({ type: 'object' }),
      created_at: str,
    }),
  ),
  next_after: intOrNull,
});

export const DIFF: JsonSchema = obj({
  kind: str,
  id: str,
  from: int,
  to: int,
  patch: list({ type: 'object' }),
});

export const PRUNED: JsonSchema = obj({ removed: int });

/** `verify`: the chain and the tables against the log (docs/concepts.md, What verify proves). */
export const VERIFY_RESULT: JsonSchema = {
  type: 'object',
  properties: {
    ok: bool,
    events: int,
    head: strOrNull,
    anchor: strOrNull,
    problems: list({ type: 'object' }),
    problem_count: int,
  },
  required: ['ok', 'events', 'head'],
  additionalProperties: true,
};

/** Results whose shape belongs to another module (scaffold, dashboard, retro, file views): any object. */
export const OBJECT: JsonSchema = { type: 'object', additionalProperties: true };

const WORLD_ERROR = nullable(obj({ message: strOrNull, code: strOrNull }));

const WORLD_RUN_FIELDS = {
  run_id: str,
  workflow_name: str,
  status: str,
  created_at: str,
  updated_at: str,
  started_at: strOrNull,
  completed_at: strOrNull,
  error: WORLD_ERROR,
} satisfies Record<string, JsonSchema>;

/** A Workflow SDK World run as `workflow_runs` lists it. */
export const WORKFLOW_RUN_SUMMARY: JsonSchema = obj(WORLD_RUN_FIELDS);

export const WORKFLOW_RUN_SUMMARIES: JsonSchema = list(WORKFLOW_RUN_SUMMARY);

/**
 * `workflow_run`: the run (not its input or output), a page of its steps, its live hooks (not their tokens),
 * its waits, its streams with their chunk counts, and the parts not shown with why.
 */
export const WORKFLOW_RUN_DETAIL: JsonSchema = obj({
  run: obj({
    ...WORLD_RUN_FIELDS,
    deployment_id: strOrNull,
    spec_version: intOrNull,
    expired_at: strOrNull,
    attributes: { type: 'object', additionalProperties: str },
  }),
  steps: list(
    obj({
      step_id: str,
      step_name: strOrNull,
      status: str,
      attempt: int,
      created_at: str,
      updated_at: str,
      started_at: strOrNull,
      completed_at: strOrNull,
      retry_after: strOrNull,
      error: WORLD_ERROR,
    }),
  ),
  hooks: list(obj({ hook_id: str, created_at: str, is_webhook: bool })),
  waits: list(
    obj({ wait_id: str, status: str, created_at: str, resume_at: strOrNull, completed_at: strOrNull }),
  ),
  streams: list(obj({ name: str, chunks: int, done: bool })),
  not_included: list(obj({ part: str, reason: str })),
});
