// The dashboard's Runs pages in headless Chromium (issue 42): runs, steps, hooks, waits and streams written
// through the World's own storage, streams and queue (ids with `|`, `+`, spaces and non-ASCII), then the
// Runs list (newest first, filtered by status and by workflow, in keyset pages), a run's page (its header and
// error, the timeline of its events in order and paged, its steps paged, hooks without tokens, waits,
// streams) and its queue messages found in the work items list by the run id in their titles; the empty
// list says how to point the SDK at the store. At 1280 px and 390 px, with no sideways scrolling and no
// serious axe-core violation. Screenshots go to the server's temp folder (AGENTSTATE_SHOTS keeps them
// elsewhere, to look at). The World's clock is injected; nothing waits for wall time.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Storage, ValidQueueName } from '@workflow/world';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Instance, openInstance } from '../../src/instance/instance.js';
import { createWorkflowQueue } from '../../src/workflow-world/queue.js';
import { createWorldStorage } from '../../src/workflow-world/storage.js';
import { createWorldStreams } from '../../src/workflow-world/streams.js';
import { bytes, HOOK, ORDER, REFUND, STEP_1, STEP_2, STREAM, TOKEN, WAIT } from '../helpers/world-values.js';
import { HAVE_CHROMIUM, launchChromium, seriousViolations, signIn } from './chromium.js';
import { startTestServer, type TestServer } from './helpers.js';

type Browser = import('playwright-core').Browser;
type Page = import('playwright-core').Page;

const BATCH = 'workflow//./src/batch//importAll';
/** Steps of the batch run: more than a page of them (50), and so more than a page of events. */
const BATCH_STEPS = 55;

let s: TestServer;
let browser: Browser;
let page: Page;
let shots: string;
const open: Instance[] = [];
const runs: Record<'order' | 'refund' | 'live' | 'batch', string> = {
  order: '',
  refund: '',
  live: '',
  batch: '',
};
/** The step messages the live run's queue wrote (work item ids). */
const messages: string[] = [];

/** Writes the runs a second apart from `clock`: order completed, refund failed, live running, batch done. */
async function writeRuns(
  st: Storage,
  streams: ReturnType<typeof createWorldStreams>,
  clock: { now: number },
) {
  const newRun = async (workflowName: string) => {
    clock.now += 1000;
    const created = await st.events.create(null, {
      eventType: 'run_created',
      eventData: { deploymentId: 'dpl|1', workflowName, input: bytes(0, 1, 0) },
    });
    clock.now += 5;
    await st.events.create(created.run!.runId, { eventType: 'run_started' });
    return created.run!.runId;
  };
  const ev = (runId: string, eventType: string, correlationId?: string, eventData?: unknown) => {
    clock.now += 10;
    return st.events.create(runId, { eventType, correlationId, eventData } as never);
  };
  runs.order = await newRun(ORDER);
  await ev(runs.order, 'run_completed', undefined, { output: bytes(7) });
  runs.refund = await newRun(REFUND);
  await ev(runs.refund, 'step_created', 'step_charge', {
    stepName: 'step//./src/refund//charge',
    input: bytes(0),
  });
  await ev(runs.refund, 'step_started', 'step_charge');
  await ev(runs.refund, 'step_failed', 'step_charge', { error: { message: 'card declined ü' } });
  await ev(runs.refund, 'run_failed', undefined, {
    error: { message: 'card declined ü', stack: 'at charge (src/refund.ts:3:9)' },
    errorCode: 'E_CARD',
  });
  runs.batch = await newRun(BATCH);
  for (let n = 1; n <= BATCH_STEPS; n++) {
    const id = `step_${String(n).padStart(2, '0')}|+ü`;
    await ev(runs.batch, 'step_created', id, { stepName: `step//./src/batch//item${n}`, input: bytes(n) });
    await ev(runs.batch, 'step_started', id);
    await ev(runs.batch, 'step_completed', id, { result: bytes(0) });
  }
  await ev(runs.batch, 'run_completed', undefined, { output: bytes(1) });
  runs.live = await newRun(ORDER);
  await ev(runs.live, 'step_created', STEP_1, { stepName: 'step//./src/ordér//charge', input: bytes(0) });
  await ev(runs.live, 'step_started', STEP_1);
  await ev(runs.live, 'step_completed', STEP_1, { result: bytes(1, 0) });
  await ev(runs.live, 'step_created', STEP_2, { stepName: 'step//./src/ordér//ship', input: bytes(0) });
  await ev(runs.live, 'step_started', STEP_2);
  await ev(runs.live, 'step_retrying', STEP_2, {
    error: { message: 'carrier down' },
    retryAfter: new Date(clock.now + 60_000),
  });
  await ev(runs.live, 'hook_created', HOOK, { token: TOKEN, metadata: bytes(9) });
  await ev(runs.live, 'wait_created', WAIT, { resumeAt: new Date(clock.now + 3_600_000) });
  await streams.writeMulti(runs.live, STREAM, ['a', bytes(0, 0)]);
  await streams.close(runs.live, STREAM);
  await streams.write(runs.live, 'strm_2', 'x');
}

beforeAll(async () => {
  if (!HAVE_CHROMIUM) return;
  s = await startTestServer(['ops', 'empty']);
  shots = process.env.AGENTSTATE_SHOTS ?? join(s.root, 'screenshots');
  mkdirSync(shots, { recursive: true });
  // The World writes through its own handle on the instance the server serves, on a clock of its own.
  const clock = { now: Date.now() - 3 * 3_600_000 };
  const inst = await openInstance({ root: s.root, host: 'h', name: 'ops', clock: () => clock.now });
  open.push(inst);
  await writeRuns(createWorldStorage(inst), createWorldStreams(inst), clock);
  // The live run's queue messages (not delivered: no delivery is started), and an unrelated item.
  const queue = createWorkflowQueue({ instance: inst, baseUrl: 'http://127.0.0.1:9' });
  await queue.queue(`__wkf_workflow_${ORDER}` as ValidQueueName, { runId: runs.live });
  for (const stepId of [STEP_1, STEP_2]) {
    const { messageId } = await queue.queue('__wkf_step_step//./src/ordér//ship' as ValidQueueName, {
      workflowName: ORDER,
      workflowRunId: runs.live,
      workflowStartedAt: clock.now,
      stepId,
    });
    messages.push(messageId.slice('msg_'.length));
  }
  await queue.queue('__wkf_step_step//./src/refund//charge' as ValidQueueName, {
    workflowName: REFUND,
    workflowRunId: runs.refund,
    workflowStartedAt: clock.now,
    stepId: 'step_charge',
  });
  browser = await launchChromium();
  page = await signIn(await browser.newPage({ viewport: { width: 1280, height: 900 } }), s.url);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  for (const i of open) await i.close();
  await s?.close();
});

const shot = (name: string) => page.screenshot({ path: join(shots, `${name}.png`), fullPage: true });

/** The texts of the cells of column `n` (0-based) of the first table under `scope`. */
async function column(scope: string, n: number): Promise<string[]> {
  return page
    .locator(`${scope} table tbody tr`)
    .evaluateAll(
      (rows, i) => rows.map((r) => (r.querySelectorAll('td')[i as number]?.textContent ?? '').trim()),
      n,
    );
}

/** Nothing on the page is wider than the window (no sideways scrolling of the page or of a table box). */
async function noSidewaysScroll(where: string): Promise<void> {
  const over = (await page.evaluate(`(() => {
    const out = [];
    if (document.documentElement.scrollWidth > window.innerWidth + 1) out.push('page ' + document.documentElement.scrollWidth);
    for (const el of document.querySelectorAll('.wrap, pre')) {
      if (el.scrollWidth > el.clientWidth + 1) out.push(el.className + ' ' + el.scrollWidth + '>' + el.clientWidth);
    }
    return out;
  })()`)) as string[];
  expect(over, where).toEqual([]);
}

describe.skipIf(!HAVE_CHROMIUM)('the Runs pages in Chromium', () => {
  it('lists the runs newest first with their statuses, filters them by status and by workflow, in keyset pages', async () => {
    await page.goto(`${s.url}/?instance=h/ops`);
    await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Runs' }).click();
    await page.waitForURL(/\/runs\?instance=h%2Fops$/);
    expect(await page.locator('h1').textContent()).toBe('Workflow runs');
    expect(await column('main', 0)).toEqual([runs.live, runs.batch, runs.refund, runs.order]);
    expect(await column('main', 1)).toEqual(['running', 'completed', 'failed', 'completed']);
    // Statuses are badges, coloured as item statuses are.
    expect(await page.locator('tbody .badge').first().getAttribute('class')).toBe('badge st-running');
    const refundRow = page.locator('tbody tr', { hasText: runs.refund });
    expect(await refundRow.locator('.problem').textContent()).toBe('card declined ü [E_CARD]');
    await shot('runs-list-1280');

    // By status.
    await page.getByLabel('Status').selectOption('failed');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/status=failed/);
    expect(await column('main', 0)).toEqual([runs.refund]);
    await page.getByLabel('Status').selectOption('cancelled');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/status=cancelled/);
    expect(await page.locator('main').textContent()).toContain('No run matches these filters.');
    // By workflow: typed, or the workflow's link in a row.
    await page.getByLabel('Status').selectOption('');
    await page.getByLabel('Workflow (its full name)').fill(ORDER);
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/workflow=/);
    expect(await column('main', 0)).toEqual([runs.live, runs.order]);
    await page.goto(`${s.url}/runs?instance=h/ops`);
    await page
      .locator('tbody tr', { hasText: runs.refund })
      .getByRole('link', { name: /refund/ })
      .click();
    await page.waitForURL(/workflow=/);
    expect(await column('main', 0)).toEqual([runs.refund]);

    // Keyset pages of two: each page starts after the last run the one before showed; the last has no "Older".
    await page.goto(`${s.url}/runs?instance=h/ops&limit=2`);
    expect(await column('main', 0)).toEqual([runs.live, runs.batch]);
    await page.getByRole('link', { name: 'Older runs' }).click();
    await page.waitForURL(/after=/);
    expect(await column('main', 0)).toEqual([runs.refund, runs.order]);
    expect(await page.getByRole('link', { name: 'Older runs' }).count()).toBe(0);
    await page.getByRole('link', { name: 'Newest runs' }).click();
    await page.waitForURL((u) => !u.search.includes('after='));
    expect(await column('main', 0)).toEqual([runs.live, runs.batch]);
    expect(await seriousViolations(page)).toEqual([]);
  });

  it("a run's page: header, the timeline of its events in order, steps, live hooks without tokens, waits, streams", async () => {
    await page.goto(`${s.url}/runs?instance=h/ops`);
    await page.getByRole('link', { name: runs.live }).click();
    await page.waitForURL(new RegExp(`/runs/${runs.live}\\?`));
    expect(await page.locator('h1').textContent()).toBe('Run of placeOrder');
    const kv = await page.locator('main dl.kv').textContent();
    expect(kv).toContain(runs.live);
    expect(kv).toContain(ORDER);
    expect(await page.locator('dl.kv .badge').textContent()).toBe('running');
    // The timeline: the SDK's event types in the order they were recorded, each with its step, hook or wait.
    const order = [
      ['1', 'run_created', ''],
      ['2', 'run_started', ''],
      ['3', 'step_created', STEP_1],
      ['4', 'step_started', STEP_1],
      ['5', 'step_completed', STEP_1],
      ['6', 'step_created', STEP_2],
      ['7', 'step_started', STEP_2],
      ['8', 'step_retrying', STEP_2],
      ['9', 'hook_created', HOOK],
      ['10', 'wait_created', WAIT],
    ];
    const timeline = 'section[aria-labelledby="h-timeline"]';
    const [seq, type, corr] = await Promise.all([0, 1, 2].map((n) => column(timeline, n)));
    expect(seq!.map((x, n) => [x, type![n], corr![n]])).toEqual(order);
    // Its times never go backwards.
    const times = await page
      .locator(`${timeline} time`)
      .evaluateAll((ts) => ts.map((t) => t.getAttribute('datetime')!));
    expect(times).toEqual([...times].sort());
    // Steps: status, attempt, start, error.
    const steps = 'section[aria-labelledby="h-steps"]';
    expect(await column(steps, 0)).toEqual([
      `step//./src/ordér//charge${STEP_1}`,
      `step//./src/ordér//ship${STEP_2}`,
    ]);
    expect(await column(steps, 1)).toEqual(['completed', expect.stringMatching(/^pending retry /)]);
    expect(await column(steps, 2)).toEqual(['1', '1']);
    expect(await column(steps, 5)).toEqual(['', 'carrier down']);
    // Hooks without their token; waits; streams with chunks and whether closed.
    expect(await column('section[aria-labelledby="h-hooks"]', 0)).toEqual([HOOK]);
    expect(await column('section[aria-labelledby="h-hooks"]', 2)).toEqual(['no']);
    expect(await page.content()).not.toContain('secret-token');
    expect(await column('section[aria-labelledby="h-waits"]', 0)).toEqual([WAIT]);
    expect(await column('section[aria-labelledby="h-waits"]', 1)).toEqual(['waiting']);
    const streams = 'section[aria-labelledby="h-streams"]';
    expect(await column(streams, 0)).toEqual(['strm_2', STREAM]);
    expect(await column(streams, 1)).toEqual(['1', '2']);
    expect(await column(streams, 2)).toEqual(['no', 'yes']);
    await noSidewaysScroll('live run 1280');
    await shot('run-live-1280');
    expect(await seriousViolations(page)).toEqual([]);

    // A failed run: its error and code; its step's error; the events up to run_failed.
    await page.goto(`${s.url}/runs/${encodeURIComponent(runs.refund)}?instance=h/ops`);
    expect(await page.locator('dl.kv pre.problem').textContent()).toBe('card declined ü [E_CARD]');
    expect(await column('section[aria-labelledby="h-steps"]', 5)).toEqual(['card declined ü']);
    expect(await column(timeline, 1)).toEqual([
      'run_created',
      'run_started',
      'step_created',
      'step_started',
      'step_failed',
      'run_failed',
    ]);
    expect(await page.locator('section[aria-labelledby="h-hooks"]').textContent()).toContain(
      'a run’s hooks end with it',
    );
    await shot('run-failed-1280');
  });

  it("pages a long run's timeline and steps: every event and every step once, in order", async () => {
    await page.goto(`${s.url}/runs/${encodeURIComponent(runs.batch)}?instance=h/ops`);
    const timeline = 'section[aria-labelledby="h-timeline"]';
    const seen: string[] = [];
    for (;;) {
      seen.push(...(await column(timeline, 0)));
      const later = page.locator(timeline).getByRole('link', { name: 'Later events' });
      if ((await later.count()) === 0) break;
      await later.click();
      await page.waitForURL(/events_after=\d+/);
      expect(await page.locator(timeline).getByRole('link', { name: 'First events' }).count()).toBe(1);
    }
    // run_created, run_started, three events a step, run_completed: positions 1… with no gap or repeat.
    const total = 2 + 3 * BATCH_STEPS + 1;
    expect(seen).toEqual(Array.from({ length: total }, (_, n) => String(n + 1)));
    expect((await column(timeline, 1)).at(-1)).toBe('run_completed');

    await page.goto(`${s.url}/runs/${encodeURIComponent(runs.batch)}?instance=h/ops`);
    const steps = 'section[aria-labelledby="h-steps"]';
    const first = await column(steps, 0);
    expect(first).toHaveLength(50);
    await page.locator(steps).getByRole('link', { name: 'More steps' }).click();
    await page.waitForURL(/steps_after=/);
    const rest = await column(steps, 0);
    expect(rest).toHaveLength(BATCH_STEPS - 50);
    expect(await page.locator(steps).getByRole('link', { name: 'More steps' }).count()).toBe(0);
    expect([...first, ...rest]).toEqual(
      Array.from(
        { length: BATCH_STEPS },
        (_, n) => `step//./src/batch//item${n + 1}step_${String(n + 1).padStart(2, '0')}|+ü`,
      ),
    );
    await shot('run-batch-steps-page-2-1280');
  });

  it("finds a run's queue messages in the work items by the run id in their titles", async () => {
    await page.goto(`${s.url}/runs/${encodeURIComponent(runs.live)}?instance=h/ops`);
    const section = page.locator('section[aria-labelledby="h-messages"]');
    expect(await section.textContent()).toContain(`step ${runs.live} <step>`);
    await section.getByRole('link', { name: 'its step messages' }).click();
    await page.waitForURL(/\/items\?/);
    const ids = await page.locator('tbody tr .id').allTextContents();
    expect(ids.sort()).toEqual([...messages].sort());
    expect(await page.locator('tbody tr a').first().textContent()).toBe(
      `step ${runs.live} step//./src/ordér//ship`,
    );
    await page.goBack();
    await section.getByRole('link', { name: 'its flow messages' }).click();
    await page.waitForURL(/\/items\?/);
    expect(await page.locator('tbody tr a').allTextContents()).toEqual([`flow ${runs.live} ${ORDER}`]);
  });

  it('an instance without runs says how to point the SDK at it; an unknown run is a 404 in the dashboard’s frame', async () => {
    await page.goto(`${s.url}/runs?instance=h/empty`);
    const none = page.locator('section[aria-labelledby="h-none"]');
    expect(await none.locator('h2').textContent()).toBe('No workflow runs yet');
    const how = await none.locator('pre').textContent();
    expect(how).toContain('WORKFLOW_TARGET_WORLD=@agentstate/store/workflow-world');
    expect(how).toContain(`AGENTSTATE_WORKFLOW_DIR=${join(s.root, 'h', 'agents', 'empty')}`);
    await shot('runs-empty-1280');
    expect(await seriousViolations(page)).toEqual([]);

    const r = await page.goto(`${s.url}/runs/wrun_01ARZ3NDEKTSV4RRFFQ69G5FAV?instance=h/ops`);
    expect(r?.status()).toBe(404);
    expect(await page.locator('h1').textContent()).toBe('No such run');
    expect(await page.getByRole('alert').textContent()).toContain('wrun_01ARZ3NDEKTSV4RRFFQ69G5FAV');
    expect(await page.locator('nav a[aria-current="page"]').textContent()).toBe('Runs');
    await shot('run-unknown-1280');
    expect(await seriousViolations(page)).toEqual([]);
  });

  it('at a phone’s width (390 px): the list and a run read without sideways scrolling', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    try {
      await page.goto(`${s.url}/runs?instance=h/ops`);
      await noSidewaysScroll('runs 390');
      await shot('runs-list-390');
      expect(await seriousViolations(page)).toEqual([]);
      for (const [name, id] of [
        ['live', runs.live],
        ['failed', runs.refund],
      ] as const) {
        await page.goto(`${s.url}/runs/${encodeURIComponent(id)}?instance=h/ops`);
        await noSidewaysScroll(`run ${name} 390`);
        await shot(`run-${name}-390`);
        expect(await seriousViolations(page)).toEqual([]);
      }
      await page.goto(`${s.url}/runs?instance=h/empty`);
      await noSidewaysScroll('runs empty 390');
      await shot('runs-empty-390');
    } finally {
      await page.setViewportSize({ width: 1280, height: 900 });
    }
  });
});
