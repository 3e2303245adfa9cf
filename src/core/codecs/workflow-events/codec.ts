// The events of a Workflow SDK World (src/workflow-world/storage.ts) as events of the instance's hash chain,
// and the World's entities (runs, steps, hooks, waits) as the JSON text their rows keep. One codec, defined
// once here: how a World event's data is built (`workflowEvent`), how it is read back (`readWorkflowEvent`),
// and how a value with bytes and dates becomes JSON and back without loss (`toTagged` / `fromTagged`). Each
// World event is one store event of type WORKFLOW_EVENT on its run's stream (`wf_run:<runId>`), so the
// World's event id is the event's dense, 1-based `stream_seq`, allocated when the store's append commits.
// No backend builds these in SQL: they are appended as built. `append` refuses the type and the streams to
// outsiders (events/log.ts), so nothing but the World puts an event, or a gap, into a run's log. Beside this
// codec: the World's state machine over these events (rules.ts, deciding what decision.ts describes; it
// needs @workflow/world, an optional peer dependency, so only the World and verify load it), the rows its
// entities are written as (rows.ts) and the errors the rules throw (errors.ts).
import type { NewEvent } from '../../backend.js';
import type { EventRecord, Json, JsonObject } from '../../types.js';

/** The store's event type of every World event (the SDK's own type is in its data, `eventType`). */
export const WORKFLOW_EVENT = 'workflow_event';

/** The prefix of a World run's stream: its events are the stream `wf_run:<runId>`, and no one else's. */
export const WORKFLOW_RUN_STREAM_PREFIX = 'wf_run:';

/** The stream of World run `runId`'s events. */
export function workflowRunStream(runId: string): string {
  return `${WORKFLOW_RUN_STREAM_PREFIX}${runId}`;
}

/** The longest id (run, step, hook, wait, token) a World stores, in characters. */
export const WORKFLOW_ID_CHARS = 1024;

/**
 * The ids of a World's runs, steps, hooks and waits as its storage takes them (`checkId` of
 * src/workflow-world/storage.ts), as a pattern for an input schema: no control characters, no `/` or `\`, no
 * leading `.`, and not `__proto__`, `constructor` or `prototype`. Length (1 to WORKFLOW_ID_CHARS) and
 * portability (no unpaired surrogate) are the schema's other rules.
 */
export const WORKFLOW_ID_PATTERN =
  '^(?!\\.)(?!(?:__proto__|constructor|prototype)$)[^\\u0000-\\u001f\\u007f/\\\\]+$';

/** The statuses of a World run, and of a step (the SDK's). */
export const WORKFLOW_RUN_STATUSES = ['pending', 'running', 'completed', 'failed', 'cancelled'] as const;
/** The statuses of a World step (the SDK's; the same as a run's). */
export const WORKFLOW_STEP_STATUSES = ['pending', 'running', 'completed', 'failed', 'cancelled'] as const;

/** The prefix of a World event id; the rest is the event's place in its run, zero-padded to 26 digits. */
export const WORKFLOW_EVENT_ID_PREFIX = 'evnt_';

/** The World's id of the `seq`-th event of a run (1-based): `evnt_` and `seq` zero-padded to 26 digits. */
export function workflowEventId(seq: number): string {
  return `${WORKFLOW_EVENT_ID_PREFIX}${String(seq).padStart(26, '0')}`;
}

/** The place in its run that World event id `id` names, or null when `id` is no such id. */
export function workflowEventSeq(id: string): number | null {
  if (!/^evnt_\d{26}$/.test(id)) return null;
  const seq = Number(id.slice(WORKFLOW_EVENT_ID_PREFIX.length));
  return Number.isSafeInteger(seq) && seq >= 1 ? seq : null;
}

// ---- tagged JSON ---------------------------------------------------------------------------------------

/** The key of a tagged value: `{ "$t": tag, "v": value }` stands for a value JSON has no form of. */
const TAG = '$t';

/**
 * `value` as JSON, losslessly: a Uint8Array (any bytes, NUL among them) becomes `{ $t: 'bytes', v: base64 }`,
 * a Date `{ $t: 'date', v: ISO-8601 }`, `undefined` in an object is left out (as JSON.stringify does), and
 * an object that has a `$t` key of its own is wrapped (`{ $t: 'object', v: … }`) so no value is ever read as
 * a tag it was not. Throws on what JSON cannot hold (a function, a bigint, a non-finite number, a cycle).
 */
export function toTagged(value: unknown, seen: Set<object> = new Set()): Json {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new TypeError(`${value} has no JSON form`);
    return value;
  }
  if (value instanceof Uint8Array) return { [TAG]: 'bytes', v: Buffer.from(value).toString('base64') };
  if (value instanceof Date) {
    const t = value.getTime();
    if (Number.isNaN(t)) throw new TypeError('an invalid Date has no JSON form');
    return { [TAG]: 'date', v: value.toISOString() };
  }
  if (typeof value !== 'object') throw new TypeError(`a ${typeof value} has no JSON form`);
  if (seen.has(value)) throw new TypeError('a value that contains itself has no JSON form');
  seen.add(value);
  try {
    if (Array.isArray(value)) return value.map((x) => (x === undefined ? null : toTagged(x, seen)));
    const out: JsonObject = {};
    for (const [k, v] of Object.entries(value)) {
      if (v === undefined) continue;
      out[k] = toTagged(v, seen);
    }
    return Object.hasOwn(out, TAG) ? { [TAG]: 'object', v: out } : out;
  } finally {
    seen.delete(value);
  }
}

/** The value `toTagged` made `json` from: bytes as a Uint8Array, dates as Dates. */
export function fromTagged(json: Json): unknown {
  if (json === null || typeof json !== 'object') return json;
  if (Array.isArray(json)) return json.map(fromTagged);
  if (Object.hasOwn(json, TAG)) {
    const v = json.v as Json;
    switch (json[TAG]) {
      case 'bytes':
        return new Uint8Array(Buffer.from(v as string, 'base64'));
      case 'date':
        return new Date(v as string);
      case 'object':
        return untagObject(v as JsonObject);
    }
  }
  return untagObject(json);
}

function untagObject(json: JsonObject): Record<string, unknown> {
  // A plain object with no prototype setter: a key `__proto__` stays a key.
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(json)) {
    Object.defineProperty(out, k, {
      value: fromTagged(v),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}

/** An entity (run, step, hook, wait) as the text its row keeps: its tagged JSON. */
export function encodeWorkflowEntity(value: object): string {
  return JSON.stringify(toTagged(value));
}

/** The entity `encodeWorkflowEntity` made `text` from. */
export function decodeWorkflowEntity<T>(text: string): T {
  return fromTagged(JSON.parse(text) as Json) as T;
}

// ---- events --------------------------------------------------------------------------------------------

/** A World event as the World hands it to the store: the SDK's event less its id, which the store assigns. */
export interface WorkflowEventDraft {
  /** The run whose log it goes to. */
  runId: string;
  /** The SDK's event type (`run_created`, `step_started`, …). */
  eventType: string;
  /** The step, hook or wait the event is about (also the store event's `correlation_id`), if any. */
  correlationId?: string | undefined;
  /** The SDK's event data, any value (bytes and dates kept). */
  eventData?: unknown;
  /** The spec version the event was written under. */
  specVersion?: number | undefined;
}

/** A World event read back from the log: the draft, with its id and its time. */
export interface WorkflowEventRead extends WorkflowEventDraft {
  /** `evnt_` and its place in the run's log. */
  eventId: string;
  /** Its place in the run's log (1-based, dense). */
  seq: number;
  /** When it was committed, as the store's clock had it. */
  createdAt: Date;
  /** Its position in the instance's log. */
  position: number;
}

/** The store event of World event `e`, recorded at `now` by `actor`. */
export function workflowEvent(e: WorkflowEventDraft, now: number, actor: string | null): NewEvent {
  const data: JsonObject = { run_id: e.runId, event_type: e.eventType };
  if (e.correlationId !== undefined) data.correlation_id = e.correlationId;
  if (e.eventData !== undefined) data.event_data = toTagged(e.eventData);
  if (e.specVersion !== undefined) data.spec_version = e.specVersion;
  return {
    type: WORKFLOW_EVENT,
    stream: workflowRunStream(e.runId),
    data,
    actor,
    correlation_id: e.correlationId ?? null,
    causation_id: null,
    work_item_id: null,
    created_at: now,
  };
}

const isObj = (x: unknown): x is JsonObject => typeof x === 'object' && x !== null && !Array.isArray(x);

/** What a hook's token reads as wherever events are shown. */
export const HOOK_TOKEN_MASK = '***';

/**
 * `e` as the store's views show it (read_events, watch_events and every edge over them): a World hook event's
 * `token` masked, since the token resumes the hook as a webhook URL would, and reading the log is not meant
 * to grant that. The stored event, its hash and what verify and `instance export` read are untouched.
 */
export function viewableEvent<E extends Pick<EventRecord, 'type' | 'data'>>(e: E): E {
  if (e.type !== WORKFLOW_EVENT || !isObj(e.data)) return e;
  const d = e.data;
  if (typeof d.event_type !== 'string' || !d.event_type.startsWith('hook_') || !isObj(d.event_data)) return e;
  if (!('token' in d.event_data)) return e;
  return { ...e, data: { ...d, event_data: { ...d.event_data, token: HOOK_TOKEN_MASK } } };
}

/** A World event read back from its store event, or null when the event is none (another type, malformed). */
export function readWorkflowEvent(
  e: Pick<EventRecord, 'type' | 'data' | 'stream' | 'stream_seq' | 'created_at' | 'position'>,
): WorkflowEventRead | null {
  if (e.type !== WORKFLOW_EVENT || !isObj(e.data)) return null;
  const d = e.data;
  if (typeof d.run_id !== 'string' || typeof d.event_type !== 'string') return null;
  if (e.stream !== workflowRunStream(d.run_id)) return null;
  return {
    runId: d.run_id,
    eventType: d.event_type,
    ...(typeof d.correlation_id === 'string' ? { correlationId: d.correlation_id } : {}),
    ...(d.event_data === undefined ? {} : { eventData: fromTagged(d.event_data) }),
    ...(typeof d.spec_version === 'number' ? { specVersion: d.spec_version } : {}),
    eventId: workflowEventId(e.stream_seq),
    seq: e.stream_seq,
    createdAt: new Date(e.created_at),
    position: e.position,
  };
}
