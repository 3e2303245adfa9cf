// The Queue of a Workflow SDK World on agentstate work items. `queue()` writes one work item per message
// (durable on both backends, its id the message's id on every delivery); a worker (`createWorker`) claims the
// World's items under a heartbeated lease and POSTs each to the app's `/.well-known/workflow/v1/{flow|step}`
// route in the wire format of wire.ts, which `createQueueHandler` decodes on the other side. A `{ timeoutSeconds }` answer is a
// durable sleep of the item (no attempt spent), an error answer a failed attempt retried after a backoff.
//
// Each delivery is a durable step of the item's run, followed by a durable sleep when it asked for one: a
// later claim replays the deliveries already answered (from their records, not over HTTP) and POSTs only the
// next, so a message is POSTed once per claim and the attempt it carries is the item's claim count.
import { createHash } from 'node:crypto';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type {
  MessageId,
  Queue,
  QueueOptions,
  QueuePayload,
  QueuePrefix,
  Storage,
  ValidQueueName,
} from '@workflow/world';
import { getQueueTopicPrefix, reenqueueActiveRuns, resolveQueueNamespace } from '@workflow/world';
import { isPortableText, LIMITS } from '../core/input.js';
import type { JsonObject, WorkItem } from '../core/types.js';
import type { WorkQueue } from '../core/work/queue.js';
import { InvalidInputError } from '../errors.js';
import {
  createWorker,
  FailNow,
  type HandlerContext,
  type RetryPolicy,
  type Worker,
} from '../worker/worker.js';
import {
  createQueueHandler,
  encodeQueueMessage,
  encodeQueueNameHeader,
  H_ATTEMPT,
  H_ID,
  H_QUEUE,
  hasControl,
  messageIdOf,
  parseQueueName,
} from './wire.js';

/** What `getDeploymentId()` answers unless told otherwise: one deployment per store. */
export const DEFAULT_DEPLOYMENT_ID = 'agentstate';
/** The prefix of every work item kind this queue writes: `wf:` + the queue name's prefix. */
export const WORKFLOW_KIND_PREFIX = 'wf:';
/**
 * Attempts a message gets unless told otherwise. Only failed deliveries (an error answer, no answer) and
 * expired leases spend them; a `{ timeoutSeconds }` redelivery does not. Above the SDK's own budget
 * (MAX_QUEUE_DELIVERIES, 48), so the runtime gives up first and records why.
 */
export const DEFAULT_MAX_DELIVERIES = 64;
/**
 * The lease of a delivery unless told otherwise (5 min, heartbeated every third of it): long enough that a
 * flow handler blocking the event loop for a while does not lose it and get its message delivered twice.
 */
export const DEFAULT_DELIVERY_LEASE_MS = 300_000;

const RESERVED_HEADERS = new Set([H_QUEUE, H_ID, H_ATTEMPT, 'content-type', 'content-length', 'host']);

/** A header name: an HTTP token. */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** A header value Node sends as it is (Latin-1, no CR, LF or NUL). */
const HEADER_VALUE = /^[\t\u0020-\u007e\u0080-\u00ff]*$/;
/** The longest wait a `{ timeoutSeconds }` or `delaySeconds` may ask for: about 10 years. */
const MAX_DELAY_MS = 10 * 366 * 86_400_000;
/** Of an error answer's body, this many characters are kept as the attempt's error. */
const ERROR_TEXT_MAX = 2_000;
/** An answer's body is read up to this many bytes (more is dropped: only `{ timeoutSeconds }` matters). */
const RESPONSE_MAX = 64 * 1024;

/** The work item kind of a queue prefix's messages. */
export function kindOfPrefix(prefix: QueuePrefix): string {
  return `${WORKFLOW_KIND_PREFIX}${prefix}`;
}

// ---------------------------------------------------------------------------------------------------------
// Enqueue.

/** What a message's work item holds in its payload. */
interface StoredMessage {
  /** The queue name. */
  queue: string;
  /** The message, as the JSON text of the wire (`encodeQueueMessage`). */
  body: string;
  /** Headers the caller asked to send with it, as `[name, value]` pairs. */
  headers?: Array<[string, string]>;
}

function checkHeaders(headers: unknown): Array<[string, string]> {
  if (headers === undefined) return [];
  const bad = (why: string): never => {
    throw new InvalidInputError(`queue: opts.headers ${why}`, { field: 'headers' });
  };
  if (typeof headers !== 'object' || headers === null || Array.isArray(headers)) bad('must be an object');
  const out: Array<[string, string]> = [];
  for (const [k, v] of Object.entries(headers as Record<string, unknown>)) {
    if (!TOKEN.test(k) || k.length > 200) bad(`has a name that is not an HTTP token: ${JSON.stringify(k)}`);
    if (RESERVED_HEADERS.has(k.toLowerCase())) bad(`must not set ${k} (the queue sets it)`);
    if (typeof v !== 'string') bad(`${k} must be a string`);
    if (!HEADER_VALUE.test(v as string) || (v as string).length > 8_000) {
      bad(`${k} has characters an HTTP header cannot carry (CR, LF, NUL, other controls, beyond Latin-1)`);
    }
    out.push([k, v as string]);
  }
  return out;
}

/** The store's idempotency key of an SDK key: `wf:<key>`, or its SHA-256 when that is no valid name. */
function storeKey(key: unknown): string | undefined {
  if (key === undefined) return undefined;
  if (typeof key !== 'string' || key.length === 0) {
    throw new InvalidInputError('queue: opts.idempotencyKey must be a non-empty string', {
      field: 'idempotencyKey',
    });
  }
  if (!isPortableText(key)) {
    throw new InvalidInputError('queue: opts.idempotencyKey must not contain NUL or unpaired surrogates', {
      field: 'idempotencyKey',
    });
  }
  const plain = `${WORKFLOW_KIND_PREFIX}${key}`;
  if (plain.length <= LIMITS.name && !hasControl(key)) return plain;
  return `wf-sha256:${createHash('sha256').update(key).digest('hex')}`;
}

function delayOf(delaySeconds: unknown): string | undefined {
  if (delaySeconds === undefined || delaySeconds === 0) return undefined;
  if (typeof delaySeconds !== 'number' || !Number.isFinite(delaySeconds) || delaySeconds < 0) {
    throw new InvalidInputError('queue: opts.delaySeconds must be a number of seconds, 0 or more', {
      field: 'delaySeconds',
    });
  }
  return `${Math.min(MAX_DELAY_MS, Math.ceil(delaySeconds * 1000))}ms`;
}

/** The longest run id a message's title names (the SDK's are `wrun_` and a ULID, 31 characters). */
const TITLE_RUN_ID_MAX = 200;

/**
 * The title of a message's work item: `flow <runId> <workflowName>` for a flow message (its `runId`), `step
 * <runId> <stepName>` for a step message (its `workflowRunId`), so a run's messages are found by its id in
 * the items' titles (the dashboard's text filter, `agentstate list`); `queue <queueName>` for any other
 * message (a health check) or a run id that is no plain text. At most LIMITS.title characters: a name that
 * would make it longer is cut, ending in `…`. Nothing reads the title back: delivery uses the payload.
 */
export function messageTitle(queueName: string, message: unknown): string {
  const parsed = parseQueueName(queueName);
  const m = typeof message === 'object' && message !== null ? (message as Record<string, unknown>) : {};
  const runId = parsed.kind === 'workflow' ? m.runId : m.workflowRunId;
  if (
    typeof runId !== 'string' ||
    runId.length === 0 ||
    runId.length > TITLE_RUN_ID_MAX ||
    hasControl(runId) ||
    !isPortableText(runId)
  ) {
    return `queue ${queueName}`;
  }
  const title = `${parsed.kind === 'workflow' ? 'flow' : 'step'} ${runId} ${parsed.id}`;
  if (title.length <= LIMITS.title) return title;
  // Cut before a surrogate pair is split: a title is portable text.
  let cut = title.slice(0, LIMITS.title - 1);
  if (/[\ud800-\udbff]$/.test(cut)) cut = cut.slice(0, -1);
  return `${cut}…`;
}

/**
 * `queue(queueName, message, opts)` of a World on `work`: one work item per call, or the item an earlier
 * call with the same `opts.idempotencyKey` wrote (its message id is answered again; nothing is written).
 * Checks everything before writing: a bad name, message or option is INVALID_INPUT with nothing written.
 */
function enqueueOn(
  work: WorkQueue,
  maxDeliveries: number,
): (
  queueName: ValidQueueName,
  message: QueuePayload,
  opts?: QueueOptions,
) => Promise<{ messageId: MessageId }> {
  return async (queueName, message, opts) => {
    const parsed = parseQueueName(queueName);
    if (opts !== undefined && (typeof opts !== 'object' || opts === null)) {
      throw new InvalidInputError('queue: opts must be an object', { field: 'opts' });
    }
    const body = encodeQueueMessage(message);
    const headers = checkHeaders(opts?.headers);
    const notBefore = delayOf(opts?.delaySeconds);
    const key = storeKey(opts?.idempotencyKey);
    const payload: StoredMessage = { queue: queueName, body, ...(headers.length ? { headers } : {}) };
    const item = await work.enqueue({
      title: messageTitle(queueName, message),
      kind: kindOfPrefix(parsed.prefix),
      payload: payload as unknown as JsonObject,
      max_attempts: maxDeliveries,
      ...(notBefore === undefined ? {} : { not_before: notBefore }),
      ...(key === undefined ? {} : { idempotency_key: key }),
    });
    if (!item.kind?.startsWith(WORKFLOW_KIND_PREFIX)) {
      throw new InvalidInputError(
        `queue: idempotency key ${JSON.stringify(opts?.idempotencyKey)} belongs to work item ${item.id}, not a workflow message`,
        { field: 'idempotencyKey', id: item.id },
      );
    }
    return { messageId: messageIdOf(item) };
  };
}

// ---------------------------------------------------------------------------------------------------------
// Delivery.

/** Where deliveries go: a base URL, a function answering one at delivery time, or (unset) `process.env.PORT`. */
export type BaseUrlOption = string | (() => string | undefined | Promise<string | undefined>);

/** How `startQueueDelivery` runs. */
export interface QueueDeliveryOptions {
  /** The open instance whose work items carry the messages (`{ work }` is enough). */
  instance: { work: WorkQueue };
  /**
   * The app's base URL (`http://localhost:3000`), or a function answering it. Read at each delivery, not at
   * start: the SDK's server learns its port only once it listens. [default: `http://localhost:$PORT`]
   */
  baseUrl?: BaseUrlOption;
  /** The queue namespace whose messages to deliver [default: `WORKFLOW_QUEUE_NAMESPACE`, else none]. */
  namespace?: string;
  /** Deliveries under way at once [default: 50]. */
  concurrency?: number;
  /** The lease of each delivery, heartbeated every third of it, in ms [default: 300000]. */
  leaseMs?: number;
  /** How failed deliveries are retried (the worker's policy) [default: the worker's: 1 s doubling to 5 min]. */
  retry?: RetryPolicy;
  /** How long to wait before claiming again when nothing was ready, in ms [default: the worker's, 1000]. */
  pollIntervalMs?: number;
  /** How long `stop()` lets deliveries under way finish before aborting them, in ms [default: 30000]. */
  graceMs?: number;
  /** The lease owner [default: `<host>:<pid>:<random>`]. */
  worker?: string;
  /** Told of store failures the worker rides out (a claim that failed) [default: `console.error`]. */
  onError?: (err: unknown) => void;
}

/** A running delivery (see `startQueueDelivery`). */
export interface QueueDelivery {
  /** The worker delivering (its events: `claimed`, `resolved`, `suspended`, `idle`, …). */
  readonly worker: Worker;
  /** Resolves once the worker has stopped (every completion committed). */
  readonly done: Promise<void>;
  /**
   * Stops delivering: no more claims; deliveries under way get `graceMs` to finish, then are aborted and
   * their messages handed back (no attempt spent) for the next delivery. Resolves once stopped.
   */
  stop(opts?: { graceMs?: number }): Promise<void>;
}

async function resolveBaseUrl(option: BaseUrlOption | undefined): Promise<string> {
  const given = typeof option === 'function' ? await option() : option;
  if (given !== undefined && given !== '') return given;
  const port = process.env.PORT;
  if (port && /^[0-9]{1,5}$/.test(port)) return `http://localhost:${port}`;
  throw new Error('no base URL to deliver to: set the baseUrl option or PORT');
}

/** One POST; answers the status and (the start of) the body; rejects on a network error or an abort. */
function post(
  url: URL,
  headers: Record<string, string>,
  body: string,
  signal: AbortSignal,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const data = Buffer.from(body, 'utf8');
    const req = send(
      url,
      { method: 'POST', headers: { ...headers, 'content-length': String(data.length) }, signal },
      (res: IncomingMessage) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          if (size >= RESPONSE_MAX) return;
          chunks.push(c);
          size += c.length;
        });
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(data);
  });
}

/** What a delivery's durable step records: the answer's status, and the wait it asked for, if any. */
interface Answer {
  status: number;
  timeoutSeconds?: number;
}

function readStored(item: WorkItem): StoredMessage {
  const p = item.payload as Partial<StoredMessage> | null;
  if (
    p === null ||
    typeof p !== 'object' ||
    typeof p.queue !== 'string' ||
    typeof p.body !== 'string' ||
    (p.headers !== undefined && !Array.isArray(p.headers))
  ) {
    throw new FailNow(`work item ${item.id} holds no workflow queue message`);
  }
  return p as StoredMessage;
}

/** The worker's handler: replays the deliveries answered before, POSTs the next, sleeps if asked to. */
function deliverer(baseUrl: BaseUrlOption | undefined) {
  return async (item: WorkItem, ctx: HandlerContext): Promise<Answer> => {
    const m = readStored(item);
    const route = parseQueueName(m.queue).kind === 'workflow' ? 'flow' : 'step';
    for (;;) {
      const answer = await ctx.step('deliver', async (): Promise<Answer> => {
        const base = await resolveBaseUrl(baseUrl);
        const url = new URL(`${base.replace(/\/+$/, '')}/.well-known/workflow/v1/${route}`);
        const res = await post(
          url,
          {
            ...Object.fromEntries(m.headers ?? []),
            'content-type': 'application/json',
            [H_QUEUE]: encodeQueueNameHeader(m.queue),
            [H_ID]: messageIdOf(item),
            [H_ATTEMPT]: String(ctx.attempt),
          },
          m.body,
          ctx.signal,
        );
        if (res.status < 200 || res.status > 299) {
          throw new Error(`HTTP ${res.status} from ${url.pathname}: ${res.text.slice(0, ERROR_TEXT_MAX)}`);
        }
        let t: unknown;
        try {
          t = (JSON.parse(res.text) as { timeoutSeconds?: unknown } | null)?.timeoutSeconds;
        } catch {
          t = undefined;
        }
        return typeof t === 'number' && Number.isFinite(t)
          ? { status: res.status, timeoutSeconds: Math.max(0, t) }
          : { status: res.status };
      });
      if (answer.timeoutSeconds === undefined) return answer;
      // At least 1 ms: the next delivery is a claim of its own (its attempt one more), never this one again.
      const ms = Math.min(MAX_DELAY_MS, Math.max(1, Math.ceil(answer.timeoutSeconds * 1000)));
      await ctx.sleep('redeliver', ms);
    }
  };
}

/**
 * Starts delivering the World's messages of one namespace from `options.instance`: a worker
 * (`createWorker`) claims them under a heartbeated lease (so one message is never delivered twice at once,
 * also across processes) and POSTs each to `<baseUrl>/.well-known/workflow/v1/flow` (`/step` for step
 * queues) with the `x-vqs-queue-name`, `x-vqs-message-id` and `x-vqs-message-attempt` headers. A 2xx answer
 * `{ timeoutSeconds: n }` hands the message back for n seconds without spending an attempt; another 2xx
 * completes it; another status or no answer fails the attempt, retried after the backoff while attempts last.
 */
export function startQueueDelivery(options: QueueDeliveryOptions): QueueDelivery {
  const ns = resolveQueueNamespace(options.namespace);
  const handler = deliverer(options.baseUrl);
  const kinds = (['workflow', 'step'] as const).map((k) => kindOfPrefix(getQueueTopicPrefix(k, ns)));
  const worker = createWorker({
    instance: options.instance,
    handlers: Object.fromEntries(kinds.map((k) => [k, handler])),
    concurrency: options.concurrency ?? 50,
    leaseMs: options.leaseMs ?? DEFAULT_DELIVERY_LEASE_MS,
    ...(options.retry === undefined ? {} : { retry: options.retry }),
    ...(options.pollIntervalMs === undefined ? {} : { pollIntervalMs: options.pollIntervalMs }),
    ...(options.graceMs === undefined ? {} : { graceMs: options.graceMs }),
    ...(options.worker === undefined ? {} : { worker: options.worker }),
  });
  const onError = options.onError ?? ((err: unknown) => console.error('[agentstate world] queue:', err));
  worker.on('storeError', onError);
  const done = worker.start();
  // A failure ends the worker; it is reported, and `done` still rejects for whoever awaits it.
  done.catch(onError);
  return {
    worker,
    done,
    stop: async (opts) => {
      await worker.stop(opts).catch(() => {});
    },
  };
}

// ---------------------------------------------------------------------------------------------------------
// The Queue of a World.

/** How `createWorkflowQueue` makes the Queue of a World. */
export interface WorkflowQueueOptions extends QueueDeliveryOptions {
  /** What `getDeploymentId()` answers [default: `agentstate`]. */
  deploymentId?: string;
  /** Attempts per message (failed deliveries spend them; `{ timeoutSeconds }` does not) [default: 64]. */
  maxDeliveries?: number;
}

/** The SDK's `Queue` on a store, with the start and stop of its delivery. */
export interface WorkflowQueue extends Queue {
  /** Writes the message as a work item (see `createWorkflowQueue`); always answers a message id. */
  queue(
    queueName: ValidQueueName,
    message: QueuePayload,
    opts?: QueueOptions,
  ): Promise<{ messageId: MessageId }>;
  /** Starts delivering (`startQueueDelivery`); a second call while running does nothing. */
  start(): Promise<void>;
  /** Stops delivering (see `QueueDelivery.stop`); the queue may be started again. */
  close(): Promise<void>;
  /** The delivery running, if started. */
  readonly delivery: QueueDelivery | undefined;
}

/**
 * The Queue part of a Workflow SDK World on an agentstate instance: `queue` writes a work item per message,
 * `createQueueHandler` decodes what the delivery sends, `getDeploymentId` names the store, and `start` /
 * `close` run and stop the delivery (`startQueueDelivery`). Every method works unbound (the SDK copies them).
 */
export function createWorkflowQueue(options: WorkflowQueueOptions): WorkflowQueue {
  const maxDeliveries = options.maxDeliveries ?? DEFAULT_MAX_DELIVERIES;
  if (!Number.isSafeInteger(maxDeliveries) || maxDeliveries < 1 || maxDeliveries > 1000) {
    throw new InvalidInputError('createWorkflowQueue: maxDeliveries must be a whole number from 1 to 1000', {
      field: 'maxDeliveries',
    });
  }
  // The SDK's own rule for a namespace (checked by it only when the queue starts): refused here, at once.
  const ns = resolveQueueNamespace(options.namespace);
  if (ns !== undefined && !/^[a-z][a-z0-9]{0,62}$/.test(ns)) {
    throw new InvalidInputError(
      `queue namespace must be lowercase letters and digits, starting with a letter (at most 63), got ${JSON.stringify(ns.slice(0, 100))}`,
      { field: 'namespace' },
    );
  }
  const deploymentId = options.deploymentId ?? DEFAULT_DEPLOYMENT_ID;
  let delivery: QueueDelivery | undefined;
  return {
    getDeploymentId: async () => deploymentId,
    queue: enqueueOn(options.instance.work, maxDeliveries),
    createQueueHandler,
    get delivery() {
      return delivery;
    },
    start: async () => {
      delivery ??= startQueueDelivery(options);
    },
    close: async () => {
      const d = delivery;
      delivery = undefined;
      await d?.stop();
    },
  };
}

/**
 * The recovery of a World's `start()`: enqueues every `pending` or `running` run again (the SDK's
 * `reenqueueActiveRuns`; replaying a run is idempotent, so a message that was still queued costs one more
 * replay, nothing else).
 */
export async function recoverActiveRuns(
  runs: Storage['runs'],
  queue: Queue['queue'],
  namespace?: string,
): Promise<void> {
  await reenqueueActiveRuns(runs, queue, 'agentstate world', namespace);
}
