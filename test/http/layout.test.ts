// The dashboard's layout in headless Chromium at 1280 px and at 390 px (a phone), as a new user saw its
// defects: a finished item's lease ("worker-3 until" with nothing after), the event table's Actor and Data
// hidden in a sideways-scrolling box, times wrapping onto several lines, ids broken mid-string, a failed
// item's error cut off on a phone; times relative with the exact time on hover; a decision's answer sent in a
// POST body, never the URL, and an empty answer told as such; error pages with navigation; an axe-core pass
// with no serious or critical violations on every page (the Workflow SDK runs' list and a run's page among
// them). Screenshots go to test/http/screenshots/.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorldStorage } from '../../src/workflow-world/storage.js';
import { HAVE_CHROMIUM, launchChromium, SHOTS, seriousViolations, signedIn as signIn } from './chromium.js';
import { startTestServer, type TestServer } from './helpers.js';

type Browser = import('playwright-core').Browser;
type Page = import('playwright-core').Page;

let s: TestServer;
let browser: Browser;
const ids: Record<string, string> = {};
const WIDTHS = [1280, 390] as const;

beforeAll(async () => {
  if (!HAVE_CHROMIUM) return;
  s = await startTestServer(['ops']);
  const call = async (name: string, body: unknown) => {
    const r = await s.call('POST', `/api/v1/${name}`, { body, query: { instance: 'h/ops' } });
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    return r.json;
  };
  // A finished item that was held by worker-3, a failed one with a long error, one in flight, a decision.
  ids.done = (await call('enqueue', { title: 'Build the release notes', kind: 'docs' })).id;
  await call('claim', { worker: 'worker-3', id: ids.done });
  await call('resolve', { id: ids.done, worker: 'worker-3', status: 'done', result: { pages: 4 } });
  ids.failed = (await call('enqueue', { title: 'Deploy the parser fix to production', kind: 'deploy' })).id;
  await call('claim', { worker: 'worker-3', id: ids.failed });
  await call('resolve', {
    id: ids.failed,
    worker: 'worker-3',
    status: 'failed',
    error: `exit 1: ${'TypeError: cannot read properties of undefined (reading "offset") at parseDate (src/date.ts:42:17) '.repeat(4)}`,
  });
  ids.flying = (await call('enqueue', { title: 'Index the archive', kind: 'index' })).id;
  await call('claim', { worker: 'worker-9', id: ids.flying, lease_ms: 3_600_000 });
  await call('commit', {
    kind: 'task-ir',
    id: 'parser',
    expected_version: 0,
    body: {
      goal: 'Fix the date parser',
      acceptance_criteria: [{ id: 'ac1', text: 'npm test passes' }],
      ambiguities: [
        {
          id: 'q1',
          question: 'Preserve offsets or normalise to UTC?',
          status: 'open',
          options: ['preserve', 'utc'],
        },
      ],
    },
  });
  ids.decision = (await call('escalate', { id: 'parser' })).decisions[0].id;
  // A Workflow SDK run with a failed step, written through the World's storage (the Runs pages).
  const world = createWorldStorage(await s.instance('ops'));
  const created = await world.events.create(null, {
    eventType: 'run_created',
    eventData: {
      deploymentId: 'agentstate',
      workflowName: 'workflow//./src/workflows/release-notes.ts//buildReleaseNotes',
      input: new Uint8Array([0]),
    },
  });
  ids.run = created.run!.runId;
  await world.events.create(ids.run, { eventType: 'run_started' });
  const step = 'step_01HZX3K9Q2|collect+ü';
  await world.events.create(ids.run, {
    eventType: 'step_created',
    correlationId: step,
    eventData: {
      stepName: 'step//./src/workflows/release-notes.ts//collectMergedPullRequests',
      input: new Uint8Array([0]),
    },
  });
  await world.events.create(ids.run, { eventType: 'step_started', correlationId: step });
  await world.events.create(ids.run, {
    eventType: 'step_failed',
    correlationId: step,
    eventData: {
      error: {
        message: `GitHub answered 502: ${'upstream connect error or disconnect/reset before headers. '.repeat(3)}`,
      },
    },
  });
  await world.events.create(ids.run, {
    eventType: 'run_failed',
    eventData: {
      error: { message: 'collectMergedPullRequests failed after 1 attempt' },
      errorCode: 'STEP_FAILED',
    },
  });
  for (let k = 0; k < 3; k++) {
    await call('append_event', {
      type: 'deploy_note',
      stream: 'releases/2026-12-03/parser-fix-rollout',
      data: { step: k, host: 'eu-west-1.prod.internal.example.com', detail: 'x'.repeat(120) },
    });
  }
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await s?.close();
});

/** A signed-in page at `width`. */
const signedIn = (width: number): Promise<Page> => signIn(browser, s.url, width);

/** Nothing on the page is wider than the window (no sideways scrolling of the page or of a table box). */
async function noSidewaysScroll(page: Page, where: string): Promise<void> {
  const over = (await page.evaluate(`(() => {
    const out = [];
    if (document.documentElement.scrollWidth > window.innerWidth + 1) out.push('page ' + document.documentElement.scrollWidth);
    for (const el of document.querySelectorAll('.wrap, pre.problem')) {
      if (el.scrollWidth > el.clientWidth + 1) out.push(el.className + ' ' + el.scrollWidth + '>' + el.clientWidth);
    }
    return out;
  })()`)) as string[];
  expect(over, where).toEqual([]);
}

/**
 * Every <time> is on one line: relative, with the exact time on hover; or, where exact times are the point
 * (an item's attempts, class `exact`), exact to the millisecond with the relative time on hover.
 */
async function timesReadable(page: Page, where: string): Promise<void> {
  const times = (await page.evaluate(`[...document.querySelectorAll('main time')].map((t) => {
    const r = t.getBoundingClientRect();
    const cs = getComputedStyle(t);
    const line = Number.parseFloat(cs.lineHeight) || Number.parseFloat(cs.fontSize) * 1.4;
    return { text: t.textContent || '', title: t.getAttribute('title') || '', exact: t.classList.contains('exact'), oneLine: r.height <= line * 1.5 || r.height === 0 };
  })`)) as Array<{ text: string; title: string; exact: boolean; oneLine: boolean }>;
  expect(times.length, where).toBeGreaterThan(0);
  const relative = /^(now|\d+ (s|min|h|d) ago|in \d+ (s|min|h|d))$/;
  for (const t of times) {
    expect(t.text, where).toMatch(t.exact ? /^(\d{4}-\d\d-\d\d )?\d\d:\d\d:\d\d\.\d{3}$/ : relative);
    expect(t.title, where).toMatch(t.exact ? relative : /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ$/);
    expect(t.oneLine, `${where}: ${t.text}`).toBe(true);
  }
}

/** axe-core on the page: no serious or critical violation. */
async function axe(page: Page, where: string): Promise<void> {
  expect(await seriousViolations(page), where).toEqual([]);
}

describe.skipIf(!HAVE_CHROMIUM)('the dashboard layout in Chromium', () => {
  for (const width of WIDTHS) {
    it(`at ${width} px: work items, a failed item, the events, workflow runs, without the defects`, async () => {
      const page = await signedIn(width);
      try {
        // Work items: a finished item shows who last held it, never a dangling "until".
        await page.goto(`${s.url}/items?instance=h/ops`);
        const doneRow = page.locator('tr', { hasText: 'Build the release notes' });
        expect(await doneRow.textContent()).not.toMatch(/until\s*$|until\s/);
        expect(await doneRow.textContent()).toContain('last held by worker-3');
        const flyingRow = page.locator('tr', { hasText: 'Index the archive' });
        expect(await flyingRow.textContent()).toMatch(/worker-9, lease ends in (59|60) min/);
        // Ids stay whole: one line each.
        const idLines = (await page.evaluate(
          `[...document.querySelectorAll('.id')].map((e) => e.getClientRects().length === 1 && e.getBoundingClientRect().height < 30)`,
        )) as boolean[];
        expect(idLines.length).toBeGreaterThan(0);
        expect(idLines.every(Boolean)).toBe(true);
        await noSidewaysScroll(page, `items ${width}`);
        await timesReadable(page, `items ${width}`);
        await page.screenshot({ path: `${SHOTS}layout-items-${width}.png`, fullPage: true });
        await axe(page, `items ${width}`);

        // A failed item: the whole error is readable (wrapped, not cut off).
        await page.goto(`${s.url}/items/${ids.failed}?instance=h/ops`);
        const err = page.locator('pre.problem');
        expect(await err.textContent()).toContain('parseDate (src/date.ts:42:17)');
        const cut = await err.evaluate((e) => e.scrollWidth > e.clientWidth + 1);
        expect(cut).toBe(false);
        await noSidewaysScroll(page, `failed item ${width}`);
        await timesReadable(page, `failed item ${width}`);
        await page.screenshot({ path: `${SHOTS}layout-failed-${width}.png`, fullPage: true });
        await axe(page, `failed item ${width}`);

        // Events: Actor and Data are on screen, not in a box that scrolls sideways.
        await page.goto(`${s.url}/events?instance=h/ops`);
        // The first event's actor and data cells are on screen (at a phone's width its rows stack).
        const row = page.locator('tbody tr').first();
        for (const [name, cell] of [
          ['actor', row.locator('td').nth(4)],
          ['data', row.locator('td.data')],
        ] as const) {
          const box = await cell.boundingBox();
          expect(box, name).not.toBeNull();
          expect(box!.x, `${name} at ${width}`).toBeGreaterThanOrEqual(0);
          expect(box!.x + box!.width, `${name} at ${width}`).toBeLessThanOrEqual(width);
        }
        expect(await row.locator('td').nth(4).textContent()).toBe('ops');
        await noSidewaysScroll(page, `events ${width}`);
        await page.screenshot({ path: `${SHOTS}layout-events-${width}.png`, fullPage: true });
        await axe(page, `events ${width}`);

        // Workflow runs: the list, and a failed run with its timeline and steps.
        await page.goto(`${s.url}/runs?instance=h/ops`);
        expect(await page.locator('tbody tr').count()).toBe(1);
        await noSidewaysScroll(page, `runs ${width}`);
        await timesReadable(page, `runs ${width}`);
        await page.screenshot({ path: `${SHOTS}layout-runs-${width}.png`, fullPage: true });
        await axe(page, `runs ${width}`);
        await page.goto(`${s.url}/runs/${ids.run}?instance=h/ops`);
        expect(await page.locator('section[aria-labelledby="h-steps"] .problem').textContent()).toContain(
          'GitHub answered 502',
        );
        await noSidewaysScroll(page, `run ${width}`);
        await timesReadable(page, `run ${width}`);
        await page.screenshot({ path: `${SHOTS}layout-run-${width}.png`, fullPage: true });
        await axe(page, `run ${width}`);

        // The overview.
        await page.goto(`${s.url}/?instance=h/ops`);
        await noSidewaysScroll(page, `overview ${width}`);
        await page.screenshot({ path: `${SHOTS}layout-overview-${width}.png`, fullPage: true });
        await axe(page, `overview ${width}`);
      } finally {
        await page.close();
      }
    }, 120_000);
  }

  it("a decision's answer travels in a POST body; an empty answer is told so; error pages have navigation", async () => {
    const page = await signedIn(1280);
    try {
      await page.goto(`${s.url}/items/${ids.decision}?instance=h/ops`);
      // Empty: the confirmation says what is missing (the form lets it through: an option is not required).
      await page.getByRole('button', { name: 'Answer…' }).click();
      await page.waitForURL(/\/confirm/);
      expect(page.url()).not.toContain('answer');
      expect(await page.getByRole('alert').textContent()).toContain(
        'Write an answer or pick an option first.',
      );
      await page.getByRole('link', { name: 'Back to the decision' }).click();
      // With an option: the answer is in the body, not in any URL.
      const urls: string[] = [];
      page.on('request', (r) => urls.push(r.url()));
      await page.getByLabel('utc').check();
      await page.getByRole('button', { name: 'Answer…' }).click();
      await page.waitForURL(/\/confirm/);
      expect(await page.locator('main').textContent()).toContain('with utc?');
      await page.getByRole('button', { name: 'Yes, answer' }).click();
      await page.waitForURL(new RegExp(`/items/${ids.decision}`));
      expect(await page.locator('.badge').first().textContent()).toBe('done');
      expect(urls.filter((u) => u.includes('utc'))).toEqual([]);
      await page.screenshot({ path: `${SHOTS}layout-answered-1280.png`, fullPage: true });
      // An error page keeps the navigation.
      await page.goto(`${s.url}/items/wi_does_not_exist?instance=h/ops`);
      expect(await page.locator('nav[aria-label="Sections"] a').allTextContents()).toContain('Work items');
      await page.screenshot({ path: `${SHOTS}layout-error-1280.png`, fullPage: true });
      await axe(page, 'error page');
    } finally {
      await page.close();
    }
  }, 120_000);
});
