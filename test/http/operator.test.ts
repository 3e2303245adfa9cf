// The operator's ways out on the dashboard (issue 28), in Chromium at 1280 and 390 px with an axe-core pass:
// cancel by filter or selection after a preview of exactly those items (one transaction, recorded as the
// signed-in human), and the refusals of a hand-made bulk URL; fork a document from any version; an item's
// attempt timeline, made with an injected clock; the overview's charts of the last 24 hours; pending items
// marked by what they wait for (a failed blocker, a scheduled time).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openInstance } from '../../src/instance/instance.js';
import { HAVE_CHROMIUM, launchChromium, SHOTS, seriousViolations, signIn } from './chromium.js';
import { startTestServer, type TestServer } from './helpers.js';

type Browser = import('playwright-core').Browser;

let s: TestServer;
let browser: Browser;

const call = async (name: string, body: unknown) =>
  (await s.call('POST', `/api/v1/${name}`, { body, query: { instance: 'h/ops' } })).json;
const get = async (name: string, query: Record<string, string>) =>
  (await s.call('GET', `/api/v1/${name}`, { query: { instance: 'h/ops', ...query } })).json;

beforeAll(async () => {
  if (!HAVE_CHROMIUM) return;
  s = await startTestServer(['ops', 'trend']);
  browser = await launchChromium();
  // One sign-in for the file (sign-ins are rate-limited per address); each test opens its pages in it.
  session = await browser.newContext();
  await (await signIn(await session.newPage(), s.url)).close();
}, 60_000);

let session: import('playwright-core').BrowserContext;

/** A page at `width` in the signed-in session; any request elsewhere fails the test. */
async function pageAt(width: number) {
  const page = await session.newPage();
  await page.setViewportSize({ width, height: 900 });
  page.on('request', (r) => {
    if (!r.url().startsWith(s.url) && !r.url().startsWith('data:'))
      throw new Error(`external request ${r.url()}`);
  });
  await page.goto(`${s.url}/`);
  return page;
}

afterAll(async () => {
  await browser?.close();
  await s?.close();
});

describe.skipIf(!HAVE_CHROMIUM)('bulk cancel', () => {
  for (const width of [1280, 390]) {
    it(`at ${width} px: every pending item a filter matches, after a preview of exactly those, with a notice`, async () => {
      const kind = `obsolete-${width}`;
      const doomed: string[] = [];
      for (const title of ['Crawl site A', 'Crawl site B', 'Crawl site C'])
        doomed.push((await call('enqueue', { title, kind })).id);
      const held = (await call('enqueue', { title: 'Crawl site D', kind })).id as string;
      await call('claim', { worker: 'w1', id: held });
      const kept = (await call('enqueue', { title: 'Keep me', kind: `kept-${width}` })).id as string;
      const page = await pageAt(width);
      try {
        await page.goto(`${s.url}/items?instance=h/ops&status=pending&kind=${kind}`);
        await page.getByRole('link', { name: 'Cancel every pending item this filter matches…' }).click();
        expect(await page.locator('h1').textContent()).toBe('Cancel 3 pending items?');
        expect(await page.locator('main li').allTextContents()).toEqual([
          expect.stringContaining('Crawl site A'),
          expect.stringContaining('Crawl site B'),
          expect.stringContaining('Crawl site C'),
        ]);
        await page.getByLabel('Reason (optional)').fill('site retired');
        expect(await seriousViolations(page)).toEqual([]);
        await page.screenshot({ path: `${SHOTS}bulk-cancel-preview-${width}.png`, fullPage: true });
        await page.getByRole('button', { name: 'Yes, cancel 3' }).click();
        await page.waitForURL(/cancelled=3/);
        expect(await page.getByRole('status').filter({ hasText: 'Cancelled 3 items' }).count()).toBe(1);
        await page.screenshot({ path: `${SHOTS}bulk-cancel-done-${width}.png`, fullPage: true });
        // Back on the list it was picked from, now empty of them.
        expect(new URL(page.url()).searchParams.get('kind')).toBe(kind);
        expect(await page.getByText('None.').count()).toBe(1);
        for (const id of doomed) {
          expect(await get('get_item', { id })).toMatchObject({ status: 'cancelled', error: 'site retired' });
          const last = (await get('read_events', { work_item_id: id })).at(-1);
          expect(last).toMatchObject({ type: 'work_item_cancelled', actor: 'Ada' });
        }
        // The item in flight and the other kind's were not in the filter: untouched.
        expect((await get('get_item', { id: held })).status).toBe('in_flight');
        expect((await get('get_item', { id: kept })).status).toBe('pending');

        // By selection: the in-flight item, from its list.
        await page.goto(`${s.url}/items?instance=h/ops&status=in_flight&kind=${kind}`);
        await page.getByLabel('Select Crawl site D').check();
        await page.getByRole('button', { name: 'Cancel selected…' }).click();
        expect(await page.locator('h1').textContent()).toBe('Cancel 1 selected item?');
        await page.getByRole('button', { name: 'Yes, cancel 1' }).click();
        await page.waitForURL(/cancelled=1/);
        expect(new URL(page.url()).searchParams.get('status')).toBe('in_flight');
        expect((await get('get_item', { id: held })).status).toBe('cancelled');
      } finally {
        await page.close();
      }
    });
  }

  it('a hand-made URL: an unknown action or a status the action does not apply to is a 400 page, nothing changed', async () => {
    const id = (await call('enqueue', { title: 'Stay pending' })).id as string;
    const page = await pageAt(1280);
    try {
      for (const [query, text] of [
        ['action=explode&match=pending', 'unknown action "explode"'],
        [
          'action=cancel&match=done',
          'cancel applies to pending or in_flight or waiting_human items, not "done"',
        ],
        ['action=retry&match=pending', 'retry applies to failed or cancelled items, not "pending"'],
      ] as const) {
        const r = await page.goto(`${s.url}/items/bulk-confirm?instance=h/ops&${query}`);
        expect(r?.status(), query).toBe(400);
        expect(await page.getByRole('alert').textContent()).toContain(text);
        // Every error page has its way back.
        expect(await page.getByRole('link', { name: 'Overview' }).count()).toBeGreaterThan(0);
      }
      expect((await get('get_item', { id })).status).toBe('pending');
      // The new forms' POSTs without the session's CSRF token (a cross-site form): refused, nothing written.
      for (const [path, form] of [
        ['/items/bulk/cancel?instance=h/ops', { id }],
        ['/documents/json/none/fork?instance=h/ops', { version: '1', new_id: 'stolen' }],
      ] as const) {
        const r = await page.request.post(`${s.url}${path}`, { form, maxRedirects: 0 });
        expect(r.status(), path).toBe(403);
      }
      expect((await get('get_item', { id })).status).toBe('pending');
    } finally {
      await page.close();
    }
  });
});

describe.skipIf(!HAVE_CHROMIUM)('fork a document from any version', () => {
  for (const width of [1280, 390]) {
    it(`at ${width} px: from version 2 of 3, behind a confirmation, with a notice and where it came from`, async () => {
      const id = `plan-${width}`;
      for (const [v, step] of [
        [0, 'draft'],
        [1, 'reviewed'],
        [2, 'shipped'],
      ] as const)
        await call('commit', { kind: 'json', id, expected_version: v, body: { step, n: v + 1 } });
      const page = await pageAt(width);
      try {
        await page.goto(`${s.url}/documents/json/${id}?instance=h/ops`);
        await page.getByRole('link', { name: '2', exact: true }).click();
        await page.getByLabel('Fork version 2 as a new json document, id').fill(`${id}-b`);
        await page.getByRole('button', { name: 'Fork…' }).click();
        expect(await page.locator('h1').textContent()).toBe(`Fork json / ${id}?`);
        await page.getByLabel('Reason (optional)').fill('try the reviewed plan');
        expect(await seriousViolations(page)).toEqual([]);
        await page.screenshot({ path: `${SHOTS}fork-confirm-${width}.png`, fullPage: true });
        await page.getByRole('button', { name: `Yes, fork as ${id}-b` }).click();
        await page.waitForURL(new RegExp(`/documents/json/${id}-b\\?`));
        expect(await page.getByRole('status').filter({ hasText: 'Forked:' }).textContent()).toBe(
          `Forked: ${id}-b starts as a copy of ${id} version 2, recorded as yours.`,
        );
        expect(await seriousViolations(page)).toEqual([]);
        await page.screenshot({ path: `${SHOTS}fork-done-${width}.png`, fullPage: true });
        const fork = await get('get_document', { kind: 'json', id: `${id}-b` });
        expect(fork).toMatchObject({ version: 1, body: { step: 'reviewed', n: 2 } });
        expect(fork.forked_from).toEqual({ kind: 'json', id, version: 2 });
        const hist = await get('history', { kind: 'json', id: `${id}-b` });
        expect(hist.entries[0]).toMatchObject({
          actor: 'Ada',
          actor_kind: 'human',
          reason: 'try the reviewed plan',
        });
        // The source did not change.
        expect((await get('get_document', { kind: 'json', id })).version).toBe(3);

        // The same id again: a conflict page, nothing written; no id: told so.
        const again = await page.goto(`${s.url}/documents/json/${id}?instance=h/ops&version=1`);
        expect(again?.status()).toBe(200);
        await page.getByLabel('Fork version 1 as a new json document, id').fill(`${id}-b`);
        await page.getByRole('button', { name: 'Fork…' }).click();
        await page.getByRole('button', { name: `Yes, fork as ${id}-b` }).click();
        expect(await page.locator('h1').textContent()).toBe('STATE_CONFLICT');
        expect((await get('get_document', { kind: 'json', id: `${id}-b` })).body).toEqual({
          step: 'reviewed',
          n: 2,
        });
        await page.goto(`${s.url}/documents/json/${id}/fork?instance=h/ops&version=1&new_id=`);
        expect(await page.getByRole('alert').textContent()).toBe('Name the new document first.');
        const none = await page.goto(`${s.url}/documents/json/${id}/fork?instance=h/ops&version=9&new_id=x`);
        expect(none?.status()).toBe(404);
      } finally {
        await page.close();
      }
    });
  }
});

describe.skipIf(!HAVE_CHROMIUM)('an item’s attempt timeline', () => {
  let id: string;
  beforeAll(async () => {
    // An hour ago by the instance's clock: four attempts, each ended a different way (the release hands its
    // attempt back: the budget grows from 5 to 6).
    let now = Date.now() - 3_600_000;
    const inst = await openInstance({ root: s.root, host: 'h', name: 'ops', clock: () => now });
    try {
      id = (await inst.work.enqueue({ title: 'Transcode the talk', max_attempts: 5 })).id;
      await inst.work.claim({ worker: 'w1', id });
      now += 30_000;
      await inst.work.resolve({ id, worker: 'w1', status: 'failed', error: 'ffmpeg exit 1', retry_at: '1m' });
      now += 60_000;
      await inst.work.claim({ worker: 'w2', id });
      now += 5_000;
      await inst.work.release({ id, worker: 'w2' });
      await inst.work.claim({ worker: 'w3', id, lease_ms: 60_000 });
      now += 5 * 60_000;
      await inst.work.claim({ worker: 'w4', id, lease_ms: 600_000 });
      now += 2 * 60_000;
      await inst.work.resolve({ id, worker: 'w4', status: 'done', result: { url: 'https://cdn/x.mp4' } });
    } finally {
      await inst.close();
    }
  });

  for (const width of [1280, 390]) {
    it(`at ${width} px: each attempt’s worker, duration and outcome, drawn and written`, async () => {
      const page = await pageAt(width);
      try {
        await page.goto(`${s.url}/items/${id}?instance=h/ops`);
        const section = page.locator('section[aria-labelledby="h-attempts"]');
        expect(await section.locator('h2').textContent()).toBe('Attempts: 4');
        const rows = await section
          .locator('tbody tr')
          .evaluateAll((trs) =>
            trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent?.trim())),
          );
        expect(rows.map((r) => [r[0], r[1], r[3], r[4]])).toEqual([
          [
            '1',
            'w1',
            '30 s',
            expect.stringMatching(/^failed, tried again next try \d\d:\d\d:\d\d\.\d{3}ffmpeg exit 1$/),
          ],
          ['2', 'w2', '5 s', 'handed back'],
          ['3', 'w3', '5 min', 'lease ran out'],
          ['4', 'w4', '2 min', 'done'],
        ]);
        const bars = await section
          .locator('svg rect')
          .evaluateAll((rs) => rs.map((r) => r.getAttribute('class')));
        expect(bars).toEqual(['o-retry', 'o-released', 'o-expired', 'o-done']);
        expect(await section.locator('svg').getAttribute('aria-label')).toContain(
          'attempt 3 by w3: lease ran out after 5 min',
        );
        // No page scrolls sideways.
        expect(await page.evaluate('document.documentElement.scrollWidth <= window.innerWidth')).toBe(true);
        expect(await seriousViolations(page)).toEqual([]);
        await page.screenshot({ path: `${SHOTS}attempts-${width}.png`, fullPage: true });
      } finally {
        await page.close();
      }
    });
  }
});

describe.skipIf(!HAVE_CHROMIUM)(
  'short attempts on the timeline, and a not-before that no longer applies',
  () => {
    let id: string;
    let due: string;
    let first: number;
    /** A time as the timeline writes it: `07:05:12.345` (UTC). */
    const clock = (t: number) => new Date(t).toISOString().slice(11, 23);
    beforeAll(async () => {
      // 23 minutes ago by the instance's clock: an attempt that failed at once (0 ms), tried again 8 s later,
      // failing for good after 340 ms; and an item scheduled a minute after that, long due now.
      let now = Date.now() - 23 * 60_000;
      first = now;
      const inst = await openInstance({ root: s.root, host: 'h', name: 'ops', clock: () => now });
      try {
        id = (await inst.work.enqueue({ title: 'Ping the webhook', max_attempts: 2 })).id;
        await inst.work.claim({ worker: 'w1', id });
        await inst.work.resolve({ id, worker: 'w1', status: 'failed', error: 'HTTP 502', retry_at: '8s' });
        now += 8_000;
        await inst.work.claim({ worker: 'w2', id });
        now += 340;
        await inst.work.resolve({ id, worker: 'w2', status: 'failed', error: 'HTTP 502 again' });
        due = (await inst.work.enqueue({ title: 'Send when due', not_before: '1m' })).id;
      } finally {
        await inst.close();
      }
    });

    for (const width of [1280, 390]) {
      it(`at ${width} px: every attempt has a visible bar, its exact start and duration; no stale "not before"`, async () => {
        const page = await pageAt(width);
        try {
          await page.goto(`${s.url}/items/${id}?instance=h/ops`);
          expect(await page.locator('dl.kv dd .badge').first().textContent()).toBe('failed');
          // Failed: the time it was not to be claimed before no longer applies.
          expect(await page.locator('dl.kv').textContent()).not.toContain('not before');
          const section = page.locator('section[aria-labelledby="h-attempts"]');
          const rows = await section
            .locator('tbody tr')
            .evaluateAll((trs) =>
              trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent?.trim())),
            );
          expect(rows).toEqual([
            [
              '1',
              'w1',
              expect.stringMatching(new RegExp(`^${clock(first)} \\(\\d+ min ago\\)$`)),
              '0 ms',
              `failed, tried again next try ${clock(first + 8_000)}HTTP 502`,
            ],
            [
              '2',
              'w2',
              expect.stringMatching(new RegExp(`^${clock(first + 8_000)} \\(\\d+ min ago\\)$`)),
              '340 ms',
              'failedHTTP 502 again',
            ],
          ]);
          const day = new Date(first).toISOString().slice(0, 10);
          expect(await section.locator('p').first().textContent()).toMatch(
            new RegExp(
              `^From ${day} ${clock(first)} to ${clock(first + 8_340)} UTC \\(\\d+ min ago\\): 8\\.3 s\\.$`,
            ),
          );
          expect(await section.locator('svg').getAttribute('aria-label')).toContain(
            'attempt 1 by w1: failed, tried again after 0 ms; attempt 2 by w2: failed after 340 ms',
          );
          // Each bar is wide enough to see and inside the drawing, however short its attempt.
          const svg = (await section.locator('svg').boundingBox())!;
          for (const bar of await section.locator('svg rect').all()) {
            const b = (await bar.boundingBox())!;
            expect(b.width).toBeGreaterThanOrEqual(6);
            expect(b.x).toBeGreaterThanOrEqual(svg.x);
            expect(b.x + b.width).toBeLessThanOrEqual(svg.x + svg.width);
          }
          expect(await page.evaluate('document.documentElement.scrollWidth <= window.innerWidth')).toBe(true);
          expect(await seriousViolations(page)).toEqual([]);
          await section.scrollIntoViewIfNeeded();
          await page.screenshot({ path: `${SHOTS}attempts-short-${width}.png`, fullPage: true });

          // Pending, but its time has passed: nothing to wait for, so no "not before" either.
          await page.goto(`${s.url}/items/${due}?instance=h/ops`);
          expect(await page.locator('dl.kv dd .badge').first().textContent()).toBe('pending');
          expect(await page.locator('dl.kv').textContent()).not.toContain('not before');
        } finally {
          await page.close();
        }
      });
    }
  },
);

describe.skipIf(!HAVE_CHROMIUM)('the overview’s charts of the last 24 hours', () => {
  beforeAll(async () => {
    // 20 hours ago by the instance's clock: six items; three done an hour later, one failed two hours after
    // that; ten hours in, four more, two of them done two hours later. Four are left unfinished.
    let now = Date.now() - 20 * 3_600_000;
    const inst = await openInstance({ root: s.root, host: 'h', name: 'trend', clock: () => now });
    try {
      const first = await inst.work.enqueueMany(
        Array.from({ length: 6 }, (_, k) => ({ title: `first ${k}`, max_attempts: 1 })),
      );
      const finish = async (id: string, status: 'done' | 'failed') => {
        await inst.work.claim({ worker: 'w', id });
        await inst.work.resolve({ id, worker: 'w', status, ...(status === 'failed' ? { error: 'x' } : {}) });
      };
      now += 3_600_000;
      for (const i of first.slice(0, 3)) await finish(i.id, 'done');
      now += 2 * 3_600_000;
      await finish(first[3]!.id, 'failed');
      now += 7 * 3_600_000;
      const second = await inst.work.enqueueMany(
        Array.from({ length: 4 }, (_, k) => ({ title: `second ${k}` })),
      );
      now += 2 * 3_600_000;
      for (const i of second.slice(0, 2)) await finish(i.id, 'done');
    } finally {
      await inst.close();
    }
  });

  for (const width of [1280, 390]) {
    it(`at ${width} px: finished per span and unfinished over time, with captions and numbers`, async () => {
      const page = await pageAt(width);
      try {
        await page.goto(`${s.url}/?instance=h/trend`);
        const captions = await page.locator('figure.chart figcaption').allTextContents();
        expect(captions).toEqual([
          'Finished per 30 min: 5 done, 1 failed in the last 24 h',
          'Unfinished items: 4 now, at most 6 in the last 24 h',
        ]);
        const throughput = page.locator('figure.chart').first();
        expect(await throughput.locator('rect.o-done').count()).toBe(2);
        expect(await throughput.locator('rect.o-failed').count()).toBe(1);
        // The tallest bar (3 done) reaches the axis top of 5 at 3/5 of the plot's height.
        const heights = await throughput
          .locator('rect.o-done')
          .evaluateAll((rs) => rs.map((r) => Number(r.getAttribute('height'))));
        expect(heights[0]! / heights[1]!).toBeCloseTo(3 / 2, 1);
        // Its numbers, for whoever cannot see the chart.
        await throughput.locator('summary').click();
        const rows = await throughput
          .locator('tbody tr')
          .evaluateAll((trs) =>
            trs.map((tr) => [...tr.querySelectorAll('td')].slice(1).map((td) => td.textContent)),
          );
        expect(rows).toEqual([
          ['3', '0'],
          ['0', '1'],
          ['2', '0'],
        ]);
        expect(await page.evaluate('document.documentElement.scrollWidth <= window.innerWidth')).toBe(true);
        expect(await seriousViolations(page)).toEqual([]);
        await page.locator('#h-trends').scrollIntoViewIfNeeded();
        await page.screenshot({ path: `${SHOTS}charts-${width}.png`, fullPage: true });
      } finally {
        await page.close();
      }
    });
  }
});

describe.skipIf(!HAVE_CHROMIUM)('what a pending item waits for', () => {
  for (const width of [1280, 390]) {
    it(`at ${width} px: blocked behind a failure (linked) and scheduled items are marked in the list and on the item`, async () => {
      const kind = `marks-${width}`;
      const blocker = (
        await call('enqueue', { title: 'Fetch the data', kind: `${kind}-up`, max_attempts: 1 })
      ).id;
      await call('claim', { worker: 'w', id: blocker });
      await call('resolve', { id: blocker, worker: 'w', status: 'failed', error: 'HTTP 503' });
      const stuck = (await call('enqueue', { title: 'Plot the data', kind, blocked_by: [blocker] })).id;
      const later = (await call('enqueue', { title: 'Send the digest', kind, not_before: '2h' })).id;
      const plain = (await call('enqueue', { title: 'Tidy up', kind })).id;
      const page = await pageAt(width);
      try {
        await page.goto(`${s.url}/items?instance=h/ops&status=pending&kind=${kind}`);
        const state = async (title: string) =>
          (await page.locator('tr', { hasText: title }).locator('td').nth(5).textContent())?.trim();
        expect(await state('Plot the data')).toBe(`blocked: ${blocker} ended unsuccessfully`);
        expect(await state('Send the digest')).toBe('scheduled ready in 2 h');
        expect(await state('Tidy up')).toBe('');
        await page.screenshot({ path: `${SHOTS}waiting-marks-${width}.png`, fullPage: true });
        expect(await seriousViolations(page)).toEqual([]);
        await page.locator('tr', { hasText: 'Plot the data' }).getByRole('link', { name: blocker }).click();
        expect(await page.locator('h1').textContent()).toBe('Fetch the data');
        await page.goto(`${s.url}/items/${later}?instance=h/ops`);
        expect(await page.locator('dl.kv').textContent()).toContain(
          'not beforein 2 hwaitingscheduled ready in 2 h',
        );
        await page.goto(`${s.url}/items/${stuck}?instance=h/ops`);
        expect(await page.locator('dl.kv').textContent()).toContain(
          `waitingblocked: ${blocker} ended unsuccessfully`,
        );
        await page.goto(`${s.url}/items/${plain}?instance=h/ops`);
        expect(await page.locator('dl.kv').textContent()).not.toContain('waiting');
      } finally {
        await page.close();
      }
    });
  }
});

describe.skipIf(!HAVE_CHROMIUM)('a durable run on its item page', () => {
  for (const width of [1280, 390]) {
    it(`at ${width} px: the run's steps, sleep and wait in a table and marked on their attempts; a wait for a signal says so`, async () => {
      let now = Date.now() - 3_600_000;
      const lib = await openInstance({ root: s.root, host: 'h', name: 'ops', clock: () => now });
      let id: string;
      try {
        const item = await lib.work.enqueue({ title: `Refund order 42 (${width})`, kind: `refund-${width}` });
        id = item.id;
        const a1 = (await lib.work.claim({ worker: 'w1', kind: `refund-${width}` }))!;
        const run1 = await lib.work.run({ id, worker: 'w1', attempt: a1.attempts });
        await run1.step('look up the order', () => ({ order: 42, amount: 4200 }));
        now += 1200;
        await run1.step('call-model', () => ({ decision: 'refund', confidence: 0.93 }));
        now += 800;
        await run1
          .step('charge back', () => {
            throw new Error('HTTP 502 from the payment provider');
          })
          .catch(() => {});
        await lib.work.resolve({
          id,
          worker: 'w1',
          attempt: a1.attempts,
          status: 'failed',
          error: 'HTTP 502',
          retry_at: '0s',
        });
        now += 60_000;
        const a2 = (await lib.work.claim({ worker: 'w2', kind: `refund-${width}` }))!;
        const run2 = await lib.work.run({ id, worker: 'w2', attempt: a2.attempts });
        await run2.step('look up the order', () => null);
        await run2.step('call-model', () => null);
        now += 400;
        await run2.step('charge back', () => ({ refund: 're_1' }));
        await run2.waitFor('customer confirmed').catch(() => {});
      } finally {
        await lib.close();
      }
      const page = await pageAt(width);
      try {
        await page.goto(`${s.url}/items/${id}?instance=h/ops`);
        const run = page.locator('section[aria-labelledby="h-run"]');
        expect(await run.locator('h2').textContent()).toBe('Durable run (5 records)');
        const rows = await run
          .locator('tbody tr')
          .evaluateAll((trs) =>
            trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent?.trim())),
          );
        expect(rows.map((r) => [r[0], r[1], r[2], r[3]])).toEqual([
          ['1', 'step look up the order', 'completed', '1'],
          ['2', 'step call-model', 'completed', '1'],
          ['3', 'step charge back', 'failed', '1'],
          ['3', 'step charge back', 'completed', '2'],
          ['4', 'wait customer confirmed', 'waiting', '2'],
        ]);
        expect(rows[0]![5]).toBe('{"order":42,"amount":4200}');
        expect(rows[2]![5]).toBe('HTTP 502 from the payment provider');
        expect(rows[4]![5]).toBe('for the signal');
        // Marked on the attempts' bars: five marks, each titled with what it records.
        const marks = page.locator('section[aria-labelledby="h-attempts"] svg rect.mark');
        expect(await marks.count()).toBe(5);
        expect(await marks.nth(2).locator('title').textContent()).toBe(
          'step "charge back" failed, attempt 1',
        );
        // Waiting for a signal: said as such, no "not before" the end of the year 9999.
        const kv = (await page.locator('dl.kv').textContent()) ?? '';
        expect(kv).toContain('waitingwaiting for a signal');
        expect(kv).not.toContain('not before');
        expect(await seriousViolations(page)).toEqual([]);
        await page.screenshot({ path: `${SHOTS}durable-run-${width}.png`, fullPage: true });
      } finally {
        await page.close();
      }
    });
  }
});

describe.skipIf(!HAVE_CHROMIUM)('a durable run’s question on the dashboard', () => {
  it('a person answers it with one of its options, as themselves; the run wakes and gets the answer', async () => {
    const lib = await openInstance({ root: s.root, host: 'h', name: 'ops' });
    let runId: string;
    let questionId: string;
    try {
      const item = await lib.work.enqueue({ title: 'Refund order 77', kind: 'refund-q', priority: 100 });
      runId = item.id;
      const held = (await lib.work.claim({ worker: 'w1', kind: 'refund-q' }))!;
      const run = await lib.work.run({ id: runId, worker: 'w1', attempt: held.attempts });
      await run
        .ask('approve', { question: 'Refund 77 € to order 77?', options: ['yes', 'no'] })
        .catch(() => {});
      const [q] = (await lib.work.list({ status: 'waiting_human' })).filter(
        (i) => i.title === 'Refund 77 € to order 77?',
      );
      questionId = q!.id;
    } finally {
      await lib.close();
    }
    const page = await pageAt(1280);
    try {
      await page.goto(`${s.url}/items/${questionId}?instance=h/ops`);
      // Answered, not approved into the queue: no Approve, an answer form with the run's options.
      expect(await page.getByRole('button', { name: 'Approve…' }).count()).toBe(0);
      await page.getByLabel('yes').check();
      expect(await seriousViolations(page)).toEqual([]);
      await page.screenshot({ path: `${SHOTS}run-question-1280.png`, fullPage: true });
      await page.getByRole('button', { name: 'Answer…' }).click();
      await page.getByRole('button', { name: 'Yes, answer' }).click();
      await page.waitForURL(new RegExp(`/items/${questionId}`));
      expect(await page.locator('dl.kv .badge').first().textContent()).toBe('done');
    } finally {
      await page.close();
    }
    const events = await get('read_events', { work_item_id: questionId });
    expect(events.at(-1)).toMatchObject({ type: 'work_item_resolved', actor: 'Ada' });
    const again = await openInstance({ root: s.root, host: 'h', name: 'ops' });
    try {
      const held = (await again.work.claim({ worker: 'w1', kind: 'refund-q' }))!;
      expect(held.id).toBe(runId);
      const run = await again.work.run({ id: runId, worker: 'w1', attempt: held.attempts });
      expect(await run.ask('approve', { question: 'Refund 77 € to order 77?' })).toMatchObject({
        status: 'done',
        answer: { answer: 'yes' },
      });
      await again.work.resolve({ id: runId, worker: 'w1', attempt: held.attempts, status: 'done' });
    } finally {
      await again.close();
    }
  });
});
