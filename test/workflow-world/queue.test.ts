// The Queue of the Workflow SDK World (issue 42) on both backends, against a real node:http server standing in
// for the SDK's `/.well-known/workflow/v1/{flow,step}` routes: it decodes every POST with the queue's own
// createQueueHandler and counts the POSTs per message id, so "delivered once", "redelivered with the same id"
// and "never two at once" are counted, not assumed. Times come from the store's injected clock; the tests
// wait for conditions (a POST arrived, the worker found nothing ready), never for wall time to pass.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { QueuePayload, Storage, ValidQueueName } from '@workflow/world';
import { afterEach, describe, expect, it } from 'vitest';
import { isAgentStateError } from '../../src/errors.js';
import type { Instance } from '../../src/instance/instance.js';
import {
  createWorkflowQueue,
  type QueueDeliveryOptions,
  recoverActiveRuns,
  startQueueDelivery,
} from '../../src/workflow-world/queue.js';
import {
  createQueueHandler,
  decodeQueueMessage,
  encodeQueueMessage,
  itemIdOf,
  type QueueMessageHandler,
} from '../../src/workflow-world/wire.js';
import { backendsForThisFile } from '../helpers/backends.js';

const T0 = Date.parse('2026-03-01T08:00:00.000Z');
/** A lease that cannot run out inside a test (the store's clock moves only when a test moves it). */
const LONG = 3_600_000;
const FLOW = '__wkf_workflow_';
const STEP = '__wkf_step_';
const WORKFLOW = `${FLOW}workflow//./src/wörk|flow+1//日本` as ValidQueueName;

/** One POST the stand-in route received: its raw headers, and what createQueueHandler decoded. */
interface Post {
  path: string;
  headers: IncomingHttpHeaders;
  messageId: string;
  attempt: number;
  queueName: string;
  message: unknown;
}

/** The stand-in for the SDK's routes: decodes with createQueueHandler, answers as `respond` says. */
async function flowRoute(respond: QueueMessageHandler = async () => {}) {
  const posts: Post[] = [];
  const statuses: number[] = [];
  const inFlight = new Map<string, number>();
  let maxOverlap = 0;
  /** The raw request of each message id under way (never two of one id at once: that is what is tested). */
  const raw = new Map<string, Pick<Post, 'path' | 'headers'>>();
  const onMessage: QueueMessageHandler = async (message, meta) => {
    const { messageId, attempt, queueName } = meta;
    posts.push({ ...raw.get(messageId)!, message, messageId, attempt, queueName });
    return respond(message, meta);
  };
  const routes: Record<string, (req: Request) => Promise<Response>> = {
    '/.well-known/workflow/v1/flow': createQueueHandler(FLOW, onMessage),
    '/.well-known/workflow/v1/step': createQueueHandler(STEP, onMessage),
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      const route = routes[path];
      if (!route || req.method !== 'POST') {
        res.writeHead(404).end();
        return;
      }
      const id = String(req.headers['x-vqs-message-id']);
      const now = (inFlight.get(id) ?? 0) + 1;
      inFlight.set(id, now);
      maxOverlap = Math.max(maxOverlap, now);
      const headers = new Headers();
      for (const [k, v] of Object.entries(req.headers)) {
        for (const x of Array.isArray(v) ? v : v === undefined ? [] : [v]) headers.append(k, x);
      }
      raw.set(id, { path, headers: req.headers });
      try {
        const response = await route(
          new Request(`http://127.0.0.1${path}`, { method: 'POST', headers, body: Buffer.concat(chunks) }),
        );
        statuses.push(response.status);
        res.writeHead(response.status, { 'content-type': 'application/json' });
        res.end(await response.text());
      } finally {
        inFlight.set(id, (inFlight.get(id) ?? 1) - 1);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    posts,
    statuses,
    maxOverlap: () => maxOverlap,
    of: (messageId: string) => posts.filter((p) => p.messageId === messageId),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Waits until `cond` holds (polling), or fails naming `what` after 20 s. */
async function until(what: string, cond: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

for (const backend of await backendsForThisFile({ pooled: true })) {
  describe(`the World's queue on ${backend.name}`, () => {
    /** An instance on the injected clock, a stand-in route, and a started delivery (all closed after). */
    async function setup(
      respond?: QueueMessageHandler,
      extra: Partial<QueueDeliveryOptions> & { key?: string } = {},
    ) {
      const clock = { now: T0 };
      const inst = await backend.open(extra.key, { clock: () => clock.now });
      const route = await flowRoute(respond);
      const errors: unknown[] = [];
      const queue = createWorkflowQueue({
        instance: inst,
        baseUrl: route.url,
        leaseMs: LONG,
        pollIntervalMs: 5,
        retry: { baseMs: 1_000, jitter: 0 },
        onError: (e) => errors.push(e),
        ...extra,
      });
      cleanups.push(async () => {
        await queue.close();
        await route.close();
        await inst.close();
        expect(errors).toEqual([]);
      });
      return { inst, route, queue, clock, errors };
    }

    /** Counts the delivery worker's idle events: two more mean it claimed and found nothing ready, twice. */
    function idles(queue: ReturnType<typeof createWorkflowQueue>) {
      let n = 0;
      queue.delivery!.worker.on('idle', () => n++);
      return async (what: string) => {
        const from = n;
        await until(what, () => n >= from + 2);
      };
    }

    const items = (inst: Instance) => inst.work.list({ limit: 1000 });

    it('POSTs a message once, with the x-vqs headers; binary with NUL bytes, NUL in strings and non-ASCII survive', async () => {
      const { inst, route, queue } = await setup();
      const bytes = new Uint8Array([0, 1, 0, 255, 0, 10, 0]);
      const runInput = {
        input: bytes,
        deploymentId: 'agentstate',
        workflowName: 'workflow//./src/wörk|flow+1//日本',
        specVersion: 2,
        attributes: { note: 'a\u0000b' },
      };
      const message = {
        runId: 'wrun_01HZ|+é日本',
        requestedAt: new Date(T0),
        runInput,
        // Not tags: a plain object that only looks like one, and keys JSON stores as they are.
        lookalike: { __type: 'Uint8Array', data: 'AAE=' },
        constructor: 'kept',
        nothing: undefined,
      } as unknown as QueuePayload;
      const { messageId } = await queue.queue(WORKFLOW, message, { headers: { 'x-trace': 'abc+|' } });
      const step = await queue.queue(`${STEP}step//x|é` as ValidQueueName, {
        workflowName: 'w',
        workflowRunId: 'wrun_2',
        workflowStartedAt: T0,
        stepId: 'step_1',
      });
      expect(messageId).toMatch(/^msg_wi_/);
      await queue.start();
      await until('both delivered', async () => (await items(inst)).every((i) => i.status === 'done'));
      await queue.close();

      expect(route.posts.map((p) => [p.path, p.messageId])).toEqual(
        expect.arrayContaining([
          ['/.well-known/workflow/v1/flow', messageId],
          ['/.well-known/workflow/v1/step', step.messageId],
        ]),
      );
      expect(route.posts).toHaveLength(2);
      const flow = route.of(messageId)[0]!;
      expect(flow.headers).toMatchObject({
        'content-type': 'application/json',
        'x-vqs-message-id': messageId,
        'x-vqs-message-attempt': '1',
        'x-trace': 'abc+|',
      });
      expect(flow.attempt).toBe(1);
      expect(flow.queueName).toBe(WORKFLOW);
      const got = flow.message as { runInput: { input: Uint8Array } };
      expect(got.runInput.input).toBeInstanceOf(Uint8Array);
      expect([...got.runInput.input]).toEqual([...bytes]);
      expect(got).toEqual({
        runId: 'wrun_01HZ|+é日本',
        requestedAt: new Date(T0).toISOString(),
        runInput,
        lookalike: { __type: 'Uint8Array', data: 'AAE=' },
        constructor: 'kept',
      });
      expect(Object.hasOwn(got, 'nothing')).toBe(false);
      const item = await inst.work.get(itemIdOf(messageId)!);
      expect(item).toMatchObject({
        status: 'done',
        attempts: 1,
        kind: `wf:${FLOW}`,
        result: { status: 200 },
      });
    });

    it("titles a run's messages with its run id (flow <runId> <workflow>, step <runId> <step>), the rest by queue; delivery is the same", async () => {
      const { inst, route, queue } = await setup();
      const RUN = 'wrun_01HZ|+é日本';
      const flow = await queue.queue(WORKFLOW, { runId: RUN });
      const step = await queue.queue(`${STEP}step//./src/ä|b+c//charge` as ValidQueueName, {
        workflowName: 'w',
        workflowRunId: RUN,
        workflowStartedAt: T0,
        stepId: 'step_1',
      });
      const health = await queue.queue(`${STEP}health` as ValidQueueName, {
        __healthCheck: true,
        correlationId: 'c1',
      });
      // A run id that is no plain text (a control character, too long, not a string): titled by the queue.
      const odd = await Promise.all(
        ['wrun_a\u001bb', 'x'.repeat(201), 42].map((runId) =>
          queue.queue(WORKFLOW, { runId } as unknown as QueuePayload),
        ),
      );
      // A step name (the longest a queue name holds) that takes the title past its 1,000 characters: cut at
      // 999 and `…`, here just before an emoji, never inside its surrogate pair.
      const before = 999 - `step ${RUN} `.length;
      const longName = `${'x'.repeat(before - 1)}😀yyy`;
      expect(`${STEP}${longName}`).toHaveLength(994);
      const long = await queue.queue(`${STEP}${longName}` as ValidQueueName, {
        workflowName: 'w',
        workflowRunId: RUN,
        workflowStartedAt: T0,
        stepId: 'step_2',
      });
      const title = async (m: { messageId: string }) => (await inst.work.get(itemIdOf(m.messageId)!)).title;
      expect(await title(flow)).toBe(`flow ${RUN} workflow//./src/wörk|flow+1//日本`);
      expect(await title(step)).toBe(`step ${RUN} step//./src/ä|b+c//charge`);
      expect(await title(health)).toBe(`queue ${STEP}health`);
      expect(await Promise.all(odd.map(title))).toEqual(Array(3).fill(`queue ${WORKFLOW}`));
      const cut = await title(long);
      expect(cut).toBe(`step ${RUN} ${'x'.repeat(before - 1)}…`);
      // The run's messages are the items whose title holds its id.
      const mine = (await items(inst)).filter((i) => i.title.includes(` ${RUN} `)).map((i) => i.id);
      expect(mine.sort()).toEqual([flow, step, long].map((m) => itemIdOf(m.messageId)!).sort());
      // Delivered as before: every message once, its body as queued.
      await queue.start();
      await until('all delivered', async () => (await items(inst)).every((i) => i.status === 'done'));
      expect(route.posts).toHaveLength(7);
      expect(route.of(step.messageId)[0]!.message).toEqual({
        workflowName: 'w',
        workflowRunId: RUN,
        workflowStartedAt: T0,
        stepId: 'step_1',
      });
    });

    it('reads the base URL at delivery time: PORT set after the delivery started is where it POSTs', async () => {
      const saved = process.env.PORT;
      delete process.env.PORT;
      cleanups.push(async () => {
        if (saved === undefined) delete process.env.PORT;
        else process.env.PORT = saved;
      });
      const { inst, route, queue } = await setup(undefined, { baseUrl: undefined });
      await queue.start();
      process.env.PORT = String(route.port);
      const { messageId } = await queue.queue(WORKFLOW, { runId: 'wrun_port' });
      await until('delivered', async () => (await inst.work.get(itemIdOf(messageId)!)).status === 'done');
      expect(route.of(messageId)).toHaveLength(1);
    });

    it('honours delaySeconds by the store clock: nothing before the time, one POST after it', async () => {
      const { inst, route, queue, clock } = await setup();
      await queue.start();
      const idle = idles(queue);
      const { messageId } = await queue.queue(WORKFLOW, { runId: 'wrun_late' }, { delaySeconds: 90 });
      const item = await inst.work.get(itemIdOf(messageId)!);
      expect(item.not_before).toBe(new Date(T0 + 90_000).toISOString());
      await idle('claims that find nothing ready');
      expect(route.posts).toHaveLength(0);
      clock.now = T0 + 89_999;
      await idle('claims one millisecond early');
      expect(route.posts).toHaveLength(0);
      clock.now = T0 + 90_000;
      await until('delivered', async () => (await inst.work.get(item.id)).status === 'done');
      expect(route.of(messageId)).toHaveLength(1);
    });

    it('{ timeoutSeconds } redelivers the same message once after that long, attempt + 1, no attempt spent', async () => {
      const waits = [60, 30];
      const { inst, route, queue, clock } = await setup(async (_m, meta) =>
        meta.attempt <= waits.length ? { timeoutSeconds: waits[meta.attempt - 1]! } : undefined,
      );
      const { messageId } = await queue.queue(WORKFLOW, { runId: 'wrun_sleepy' });
      const id = itemIdOf(messageId)!;
      const before = await inst.work.get(id);
      await queue.start();
      const idle = idles(queue);
      let at = T0;
      for (const [n, wait] of waits.entries()) {
        const wake = new Date(at + wait * 1000).toISOString();
        await until(`handed back ${n + 1}`, async () => (await inst.work.get(id)).not_before === wake);
        const asleep = await inst.work.get(id);
        expect(asleep).toMatchObject({ status: 'pending', attempts: n + 1 });
        // The budget is whole: as many attempts left as before the first delivery.
        expect(asleep.max_attempts - asleep.attempts).toBe(before.max_attempts - before.attempts);
        await idle('claims while it sleeps');
        expect(route.of(messageId)).toHaveLength(n + 1);
        at += wait * 1000;
        clock.now = at;
      }
      await until('redelivered', async () => (await inst.work.get(id)).status === 'done');
      expect(route.of(messageId).map((p) => p.attempt)).toEqual([1, 2, 3]);
      expect(route.posts).toHaveLength(3);
      expect(await inst.work.get(id)).toMatchObject({ attempts: 3, result: { status: 200 } });
    });

    it('a 500 is retried after the backoff with the same message id, the error kept', async () => {
      const { inst, route, queue, clock } = await setup(async (_m, meta) => {
        if (meta.attempt === 1) throw new Error('flow handler crashed: état|+');
      });
      const { messageId } = await queue.queue(WORKFLOW, { runId: 'wrun_flaky' });
      const id = itemIdOf(messageId)!;
      await queue.start();
      const idle = idles(queue);
      await until('failed once', async () => (await inst.work.get(id)).error !== null);
      const failed = await inst.work.get(id);
      expect(failed).toMatchObject({ status: 'pending', attempts: 1 });
      expect(failed.error).toContain('HTTP 500');
      expect(failed.error).toContain('flow handler crashed: état|+');
      expect(failed.not_before).toBe(new Date(T0 + 1_000).toISOString());
      await idle('claims before the retry time');
      expect(route.statuses).toEqual([500]);
      clock.now = T0 + 1_000;
      await until('retried', async () => (await inst.work.get(id)).status === 'done');
      expect(route.of(messageId).map((p) => p.attempt)).toEqual([1, 2]);
      expect(route.statuses).toEqual([500, 200]);
    });

    it('an idempotencyKey already used answers the same message id and writes nothing; it is delivered once', async () => {
      const { inst, route, queue } = await setup();
      const key = 'step_01|+ключ';
      const a = await queue.queue(WORKFLOW, { runId: 'wrun_first' }, { idempotencyKey: key });
      const b = await queue.queue(WORKFLOW, { runId: 'wrun_second' }, { idempotencyKey: key });
      expect(b.messageId).toBe(a.messageId);
      expect(await items(inst)).toHaveLength(1);
      await queue.start();
      await until('delivered', async () => (await inst.work.get(itemIdOf(a.messageId)!)).status === 'done');
      const c = await queue.queue(WORKFLOW, { runId: 'wrun_third' }, { idempotencyKey: key });
      expect(c.messageId).toBe(a.messageId);
      await queue.close();
      expect(route.posts.map((p) => (p.message as { runId: string }).runId)).toEqual(['wrun_first']);
    });

    it('two workers racing on one store never deliver a message twice, nor two deliveries of one at once', async () => {
      const key = `race-${Math.random().toString(36).slice(2)}`;
      let release: () => void = () => {};
      const gate = new Promise<void>((r) => {
        release = r;
      });
      const { inst, route, queue } = await setup(
        async () => {
          await gate;
        },
        { key, concurrency: 4, worker: 'w1' },
      );
      const other = await backend.open(key, { clock: () => T0 });
      const second = startQueueDelivery({
        instance: other,
        baseUrl: route.url,
        leaseMs: LONG,
        pollIntervalMs: 5,
        concurrency: 4,
        worker: 'w2',
      });
      cleanups.push(async () => {
        await second.stop();
        await other.close();
      });
      const resolvedBy = { w1: 0, w2: 0 };
      second.worker.on('resolved', () => resolvedBy.w2++);
      const ids: string[] = [];
      for (let i = 0; i < 12; i++)
        ids.push((await queue.queue(WORKFLOW, { runId: `wrun_${i}|+` })).messageId);
      await queue.start();
      queue.delivery!.worker.on('resolved', () => resolvedBy.w1++);
      // Both workers fill their slots (4 + 4 of 12) and hold them while the route holds every answer.
      await until('eight deliveries under way', () => route.posts.length === 8);
      release();
      await until('all delivered', async () => (await items(inst)).every((i) => i.status === 'done'));
      await queue.close();
      await second.stop();
      for (const id of ids) expect(route.of(id), id).toHaveLength(1);
      expect(route.posts).toHaveLength(12);
      expect(route.maxOverlap()).toBe(1);
      expect(resolvedBy.w1 + resolvedBy.w2).toBe(12);
      expect(resolvedBy.w1).toBeGreaterThanOrEqual(4);
      expect(resolvedBy.w2).toBeGreaterThanOrEqual(4);
    });

    it('stop() ends cleanly: a delivery cut short is handed back unspent and redelivered with the same id', async () => {
      let answer: () => void = () => {};
      const { inst, route, queue } = await setup((_m, meta) =>
        meta.attempt === 1
          ? new Promise<undefined>((r) => {
              answer = () => r(undefined);
            })
          : Promise.resolve(),
      );
      const { messageId } = await queue.queue(WORKFLOW, { runId: 'wrun_stopped' });
      const id = itemIdOf(messageId)!;
      const fresh = await inst.work.get(id);
      await queue.start();
      await until('the first POST', () => route.posts.length === 1);
      const d = queue.delivery!;
      let stopped = false;
      d.worker.on('stopped', () => {
        stopped = true;
      });
      await d.stop({ graceMs: 0 });
      // Stopped when stop() resolves: nothing held, the cut delivery handed back already.
      expect(stopped).toBe(true);
      expect(d.worker.held).toBe(0);
      const back = await inst.work.get(id);
      expect(back).toMatchObject({ status: 'pending', lease_owner: null, not_before: null });
      expect(back.max_attempts - back.attempts).toBe(fresh.max_attempts - fresh.attempts);
      await d.done;
      answer();
      // Delivery starts again (a new process would): the same message, its next attempt, once.
      await queue.close();
      await queue.start();
      await until('redelivered', async () => (await inst.work.get(id)).status === 'done');
      expect(route.of(messageId).map((p) => p.attempt)).toEqual([1, 2]);
    });

    it('refuses hostile and malformed queue names and options with INVALID_INPUT, writing nothing', async () => {
      const { inst, queue } = await setup();
      const head = await inst.events.head();
      const names: unknown[] = [
        '../',
        '../../etc/passwd',
        '__proto__',
        'constructor',
        `${FLOW}`,
        `${FLOW}a\u0000b`,
        `${FLOW}a\nb`,
        `${FLOW}a\u2028b`,
        `${FLOW}\ud800`,
        '__WKF_workflow_x',
        '__Bad_wkf_workflow_x',
        '__wkf_job_x',
        `${FLOW}${'x'.repeat(1000)}`,
        null,
        42,
      ];
      for (const name of names) {
        await expect(
          queue.queue(name as ValidQueueName, { runId: 'wrun_x' }),
          String(name),
        ).rejects.toSatisfy((e) => isAgentStateError(e, 'INVALID_INPUT'));
      }
      const bad: Array<[unknown, object?]> = [
        [{ runId: 1n }],
        [{ runId: 'r', m: new Map() }],
        [{ runId: 'r', n: Number.NaN }],
        [{ runId: 'r' }, { delaySeconds: -1 }],
        [{ runId: 'r' }, { delaySeconds: Number.NaN }],
        [{ runId: 'r' }, { idempotencyKey: '' }],
        [{ runId: 'r' }, { idempotencyKey: 'a\u0000b' }],
        [{ runId: 'r' }, { headers: { 'x-a': 'b\r\nx-injected: 1' } }],
        [{ runId: 'r' }, { headers: { 'x-vqs-message-id': 'msg_forged' } }],
        [{ runId: 'r' }, { headers: { 'bad name': 'v' } }],
      ];
      for (const [message, opts] of bad) {
        await expect(queue.queue(WORKFLOW, message as QueuePayload, opts)).rejects.toSatisfy((e) =>
          isAgentStateError(e, 'INVALID_INPUT'),
        );
      }
      expect(await items(inst)).toEqual([]);
      expect(await inst.events.head()).toEqual(head);
    });

    it('recoverActiveRuns enqueues every pending and running run again, and they are delivered', async () => {
      const { inst, route, queue } = await setup();
      const pages: Record<string, Array<{ data: object[]; cursor: string | null; hasMore: boolean }>> = {
        pending: [{ data: [{ runId: 'wrun_p|1', workflowName: 'wf//a' }], cursor: null, hasMore: false }],
        running: [
          { data: [{ runId: 'wrun_r|1', workflowName: 'wf//b' }], cursor: 'c1', hasMore: true },
          { data: [{ runId: 'wrun_r|2', workflowName: 'wf//b' }], cursor: null, hasMore: false },
        ],
      };
      const runs = {
        list: async (p: { status: string; pagination?: { cursor?: string } }) =>
          pages[p.status]![p.pagination?.cursor === 'c1' ? 1 : 0],
      } as unknown as Storage['runs'];
      // Unbound, as the SDK's reenqueueActiveRuns calls it.
      const { queue: enqueue } = queue;
      await recoverActiveRuns(runs, enqueue);
      await queue.start();
      await until('delivered', async () => (await items(inst)).every((i) => i.status === 'done'));
      expect(route.posts.map((p) => [p.queueName, (p.message as { runId: string }).runId]).sort()).toEqual([
        [`${FLOW}wf//a`, 'wrun_p|1'],
        [`${FLOW}wf//b`, 'wrun_r|1'],
        [`${FLOW}wf//b`, 'wrun_r|2'],
      ]);
    });
  });
}

describe('createQueueHandler', () => {
  const headers = {
    'x-vqs-queue-name': `${FLOW}w`,
    'x-vqs-message-id': 'msg_wi_1',
    'x-vqs-message-attempt': '3',
    'content-type': 'application/json',
  };
  const req = (h: Record<string, string | undefined>, body: string | null = '{"runId":"r"}') =>
    new Request('http://127.0.0.1/.well-known/workflow/v1/flow', {
      method: 'POST',
      headers: Object.fromEntries(Object.entries(h).filter(([, v]) => v !== undefined)) as Record<
        string,
        string
      >,
      ...(body === null ? {} : { body }),
    });

  it('works unbound; answers { timeoutSeconds }, { ok: true }, or 500 with the message', async () => {
    const { createQueueHandler: unbound } = createWorkflowQueue({ instance: { work: {} as never } });
    const calls: unknown[] = [];
    const answers: Array<() => Promise<undefined | { timeoutSeconds: number }>> = [
      async () => ({ timeoutSeconds: 7 }),
      async () => undefined,
      async () => {
        throw new Error('boom|é');
      },
    ];
    const handle = unbound(FLOW, async (message, meta) => {
      calls.push([message, meta]);
      return answers[calls.length - 1]!();
    });
    const a = await handle(req(headers, encodeQueueMessage({ runId: 'r', b: new Uint8Array([0, 0]) })));
    expect([a.status, await a.json()]).toEqual([200, { timeoutSeconds: 7 }]);
    const b = await handle(req(headers));
    expect([b.status, await b.json()]).toEqual([200, { ok: true }]);
    const c = await handle(req(headers));
    expect([c.status, await c.json()]).toEqual([500, { error: 'boom|é' }]);
    expect(calls[0]).toEqual([
      { runId: 'r', b: new Uint8Array([0, 0]) },
      { attempt: 3, queueName: `${FLOW}w`, messageId: 'msg_wi_1' },
    ]);
  });

  it('answers 400 to a malformed request without calling the handler', async () => {
    let called = 0;
    const handle = createQueueHandler(FLOW, async () => {
      called++;
    });
    const cases: Array<[string, Request]> = [
      ['no queue name', req({ ...headers, 'x-vqs-queue-name': undefined })],
      ['no message id', req({ ...headers, 'x-vqs-message-id': undefined })],
      ['no attempt', req({ ...headers, 'x-vqs-message-attempt': undefined })],
      ['attempt 0', req({ ...headers, 'x-vqs-message-attempt': '0' })],
      ['attempt not a number', req({ ...headers, 'x-vqs-message-attempt': 'two' })],
      ['a step queue on the flow route', req({ ...headers, 'x-vqs-queue-name': `${STEP}s` })],
      ['another namespace', req({ ...headers, 'x-vqs-queue-name': '__ns_wkf_workflow_w' })],
      ['no queue name at all', req({ ...headers, 'x-vqs-queue-name': '__proto__' })],
      ['a NUL in the name', req({ ...headers, 'x-vqs-queue-name': `${FLOW}a%00b` })],
      ['bad percent-encoding', req({ ...headers, 'x-vqs-queue-name': `${FLOW}a%E0%A4` })],
      ['a body that is not JSON', req(headers, '{"runId":')],
      ['no body', req(headers, null)],
    ];
    for (const [what, r] of cases) {
      const res = await handle(r);
      expect(res.status, what).toBe(400);
      expect(((await res.json()) as { error: string }).error, what).toMatch(/\S/);
    }
    expect(called).toBe(0);
    expect(() => createQueueHandler('__nope_' as never, async () => {})).toThrow(/not a queue prefix/);
  });

  it('round-trips what JSON alone would lose: bytes, NUL, lone surrogates, __proto__ and __type keys', () => {
    const value = JSON.parse('{"__proto__":{"x":1}}') as Record<string, unknown>;
    value.bytes = new Uint8Array([0, 255, 0]);
    value.text = 'nul\u0000 lone\ud800 é';
    value.tagged = { __type: 'Object', data: { y: 2 } };
    const back = decodeQueueMessage(encodeQueueMessage(value)) as Record<string, unknown>;
    expect(Object.getPrototypeOf(back)).toBe(Object.prototype);
    expect(Object.hasOwn(back, '__proto__')).toBe(true);
    expect(Object.getOwnPropertyDescriptor(back, '__proto__')?.value).toEqual({ x: 1 });
    expect(back.bytes).toEqual(new Uint8Array([0, 255, 0]));
    expect(back.text).toBe('nul\u0000 lone\ud800 é');
    expect(back.tagged).toEqual({ __type: 'Object', data: { y: 2 } });
  });
});
