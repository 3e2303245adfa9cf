// The wire format of a Workflow SDK World's queue on agentstate, both ends of it: queue names (the SDK's
// ValidQueueName, checked further), message ids (`msg_` + the work item id), the JSON body with tagged
// binary, the `x-vqs-*` headers (world-local's, so the SDK's tooling reads them alike), and the receiving
// side, `createQueueHandler`. queue.ts writes and delivers what this decodes.
import type { MessageId, Queue, QueuePrefix, ValidQueueName } from '@workflow/world';
import { isPortableText, LIMITS } from '../core/input.js';
import type { WorkItem } from '../core/types.js';
import { InvalidInputError } from '../errors.js';

/** Headers of the wire format (world-local's, so the SDK's tooling reads them alike). */
export const H_QUEUE = 'x-vqs-queue-name';
export const H_ID = 'x-vqs-message-id';
export const H_ATTEMPT = 'x-vqs-message-attempt';
const PREFIX_PATTERN = /^__(?:[a-z][a-z0-9]*_)?wkf_(?:workflow|step)_$/;
const NAME_PATTERN = /^(__(?:[a-z][a-z0-9]*_)?wkf_(workflow|step)_)(.+)$/s;
/** Whether `s` holds a C0 or C1 control, DEL, or a line or paragraph separator: never in a queue name or key. */
export function hasControl(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || (c >= 0x7f && c <= 0x9f) || c === 0x2028 || c === 0x2029) return true;
  }
  return false;
}
/** The longest queue name (so a message's title `queue <name>`, when it names no run, fits). */
const NAME_MAX = LIMITS.title - 'queue '.length;
/** The parts of a queue name: its prefix, whether it is a workflow or a step queue, and the id after it. */
export interface ParsedQueueName {
  /** `__wkf_workflow_`, `__wkf_step_`, or a namespaced `__<ns>_wkf_…_`. */
  prefix: QueuePrefix;
  /** Which route delivers it: `workflow` → `/flow`, `step` → `/step`. */
  kind: 'workflow' | 'step';
  /** What follows the prefix (the workflow's or step's name). */
  id: string;
}

/**
 * Checks a queue name as the SDK's `ValidQueueName` does (a known prefix, optionally namespaced, and a
 * non-empty rest), and further: portable text, no control characters, at most 994 characters. Throws
 * INVALID_INPUT naming `field` otherwise.
 */
export function parseQueueName(name: unknown, field = 'queueName'): ParsedQueueName {
  const bad = (why: string): never => {
    throw new InvalidInputError(`queue: ${field} ${why}`, { field });
  };
  if (typeof name !== 'string') return bad(`must be a string, got ${name === null ? 'null' : typeof name}`);
  if (name.length > NAME_MAX) bad(`is longer than ${NAME_MAX} characters`);
  if (!isPortableText(name)) bad('must not contain NUL or unpaired surrogates');
  if (hasControl(name)) bad('must not contain control characters');
  const m = NAME_PATTERN.exec(name);
  if (!m) {
    bad(
      `must be __wkf_workflow_<name>, __wkf_step_<name> or __<namespace>_wkf_{workflow|step}_<name>, got ${JSON.stringify(name.slice(0, 80))}`,
    );
  }
  return { prefix: m![1] as QueuePrefix, kind: m![2] as 'workflow' | 'step', id: m![3]! };
}

/** The message id of a work item: `msg_` + its id, the same on every delivery of it. */
export function messageIdOf(item: Pick<WorkItem, 'id'>): MessageId {
  return `msg_${item.id}` as MessageId;
}

/** The work item id of a message id this queue gave, or null for any other string. */
export function itemIdOf(messageId: string): string | null {
  return messageId.startsWith('msg_') && messageId.length > 4 ? messageId.slice(4) : null;
}

// ---------------------------------------------------------------------------------------------------------
// The body: JSON, lossless for what a QueuePayload holds.

/** How a Uint8Array travels: `{ __type: 'Uint8Array', data: <base64> }` (world-local's tag). */
const TAG_BYTES = 'Uint8Array';
/** How a plain object with a `__type` key of its own travels, so that it is never read back as a tag. */
const TAG_OBJECT = 'Object';

function isPlainObject(v: object): boolean {
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

function encodeValue(v: unknown, path: string): unknown {
  const refuse = (what: string): never => {
    throw new InvalidInputError(`queue: message${path} ${what}`, { field: 'message' });
  };
  if (v === null || typeof v === 'string' || typeof v === 'boolean') return v;
  if (typeof v === 'number') return Number.isFinite(v) ? v : refuse(`is ${v} (JSON cannot carry it)`);
  if (typeof v !== 'object') return refuse(`holds a ${typeof v}`);
  if (v instanceof Uint8Array) return { __type: TAG_BYTES, data: Buffer.from(v).toString('base64') };
  if (v instanceof Date) {
    return Number.isNaN(v.getTime()) ? refuse('is an invalid Date') : v.toISOString();
  }
  if (Array.isArray(v)) return v.map((x, i) => (x === undefined ? null : encodeValue(x, `${path}[${i}]`)));
  if (!isPlainObject(v)) return refuse(`holds a ${v.constructor?.name ?? 'non-plain object'}`);
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) {
    if (x === undefined) continue;
    Object.defineProperty(out, k, {
      value: encodeValue(x, `${path}.${k}`),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return Object.hasOwn(v, '__type') ? { __type: TAG_OBJECT, data: out } : out;
}

/**
 * Encodes a queue message as the JSON text of the wire: Uint8Array values as `{ __type: 'Uint8Array', data:
 * <base64> }`, a Date as its ISO string, `undefined` fields left out; a plain object with a `__type` key of
 * its own is wrapped so it is read back as itself. Strings travel as JSON escapes them (NUL and lone
 * surrogates included). Throws INVALID_INPUT for what JSON cannot carry (a Map, a bigint, NaN, a class).
 */
export function encodeQueueMessage(message: unknown): string {
  return JSON.stringify(encodeValue(message, ''));
}

function decodeValue(v: unknown): unknown {
  if (v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) return v.map(decodeValue);
  const o = v as Record<string, unknown>;
  const keys = Object.keys(o);
  if (keys.length === 2 && typeof o.__type === 'string' && 'data' in o) {
    if (o.__type === TAG_BYTES && typeof o.data === 'string') {
      return new Uint8Array(Buffer.from(o.data, 'base64'));
    }
    if (o.__type === TAG_OBJECT && typeof o.data === 'object' && o.data !== null && !Array.isArray(o.data)) {
      return decodeObject(o.data as Record<string, unknown>);
    }
  }
  return decodeObject(o);
}

function decodeObject(o: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(o)) {
    // defineProperty: a `__proto__` key stays a key, never the object's prototype.
    Object.defineProperty(out, k, {
      value: decodeValue(x),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}

/** Decodes the JSON text `encodeQueueMessage` wrote (throws SyntaxError for text that is not JSON). */
export function decodeQueueMessage(text: string): unknown {
  return decodeValue(JSON.parse(text));
}

/**
 * A queue name as an HTTP header value: characters outside printable ASCII, and `%`, percent-encoded
 * (UTF-8), so a name with non-ASCII characters travels; an ASCII name without `%` travels as it is.
 */
export function encodeQueueNameHeader(name: string): string {
  return name.replace(/[^\u0021-\u0024\u0026-\u007e]/gu, (c) => encodeURIComponent(c));
}

// ---------------------------------------------------------------------------------------------------------
// The receiving side.

/** The handler `createQueueHandler` calls: `{ timeoutSeconds }` asks for the message again after that long. */
export type QueueMessageHandler = Parameters<Queue['createQueueHandler']>[1];

const json = (body: unknown, status: number): Response =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

/**
 * The SDK's `createQueueHandler`: a `(req: Request) => Promise<Response>` for the app's
 * `/.well-known/workflow/v1/{flow|step}` route, decoding what this queue's delivery sends (the `x-vqs-*`
 * headers and the JSON body with tagged binary) and calling `handler(message, { attempt, queueName,
 * messageId })`. Answers 200 `{ timeoutSeconds }` when the handler asks to be called again, 200 `{ ok: true }`
 * when it returns, 500 `{ error }` when it throws, and 400 `{ error }` without calling it for a malformed
 * request (a header missing or invalid, a body that is not JSON, a queue name outside `prefix`). Needs no
 * `this` (the SDK calls it unbound); throws INVALID_INPUT at once for a `prefix` that is no queue prefix.
 */
export function createQueueHandler(
  prefix: QueuePrefix,
  handler: QueueMessageHandler,
): (req: Request) => Promise<Response> {
  if (typeof prefix !== 'string' || !PREFIX_PATTERN.test(prefix)) {
    throw new InvalidInputError(`createQueueHandler: ${JSON.stringify(prefix)} is not a queue prefix`, {
      field: 'prefix',
    });
  }
  if (typeof handler !== 'function') {
    throw new InvalidInputError('createQueueHandler: handler must be a function', { field: 'handler' });
  }
  return async (req) => {
    const rawName = req.headers.get(H_QUEUE);
    const messageId = req.headers.get(H_ID);
    const rawAttempt = req.headers.get(H_ATTEMPT);
    if (rawName === null || messageId === null || rawAttempt === null) {
      return json(
        {
          error: `missing header: ${[H_QUEUE, H_ID, H_ATTEMPT].filter((h) => !req.headers.has(h)).join(', ')}`,
        },
        400,
      );
    }
    let queueName: string;
    try {
      queueName = decodeURIComponent(rawName);
      parseQueueName(queueName, H_QUEUE);
    } catch (err) {
      return json({ error: `invalid ${H_QUEUE}: ${(err as Error).message}` }, 400);
    }
    if (!queueName.startsWith(prefix)) {
      return json({ error: `queue ${JSON.stringify(queueName)} is not handled here (${prefix}…)` }, 400);
    }
    if (!/^[\u0021-\u007e]{1,256}$/.test(messageId)) return json({ error: `invalid ${H_ID}` }, 400);
    if (!/^[1-9][0-9]{0,8}$/.test(rawAttempt)) return json({ error: `invalid ${H_ATTEMPT}` }, 400);
    let message: unknown;
    try {
      const text = await req.text();
      if (text.trim() === '') return json({ error: 'missing request body' }, 400);
      message = decodeQueueMessage(text);
    } catch (err) {
      return json({ error: `invalid request body: ${(err as Error).message}` }, 400);
    }
    try {
      const result = await handler(message, {
        attempt: Number(rawAttempt),
        queueName: queueName as ValidQueueName,
        messageId: messageId as MessageId,
      });
      const t = (result as { timeoutSeconds?: unknown } | undefined)?.timeoutSeconds;
      if (typeof t === 'number' && Number.isFinite(t)) return json({ timeoutSeconds: Math.max(0, t) }, 200);
      return json({ ok: true }, 200);
    } catch (err) {
      return json({ error: err instanceof Error ? err.message || err.name : String(err) }, 500);
    }
  };
}
