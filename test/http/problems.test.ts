// The overview shows problems first, each with its way out: items blocked behind a failure (and the failed
// blocker to retry), items held past an expired lease, items on their last attempt, ready work no worker has
// claimed for five minutes, decisions waiting for a person over an hour. Made two hours in the past with an
// injected clock, seen by the server now; in Chromium at 1280 and 390 px with an axe-core pass; an instance
// with none says so.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openInstance } from '../../src/instance/instance.js';
import { HAVE_CHROMIUM, launchChromium, SHOTS, seriousViolations, signedIn } from './chromium.js';
import { startTestServer, type TestServer } from './helpers.js';

type Browser = import('playwright-core').Browser;

let s: TestServer;
let browser: Browser;
const ids: Record<string, string> = {};

beforeAll(async () => {
  if (!HAVE_CHROMIUM) return;
  s = await startTestServer(['ops', 'calm']);
  // Two hours ago, by the instance's clock; the server reads it now.
  let now = Date.now() - 2 * 3_600_000;
  const inst = await openInstance({ root: s.root, host: 'h', name: 'ops', clock: () => now });
  const failed = await inst.work.enqueue({ title: 'Build the parser', kind: 'build', max_attempts: 1 });
  await inst.work.claim({ worker: 'w1', id: failed.id });
  await inst.work.resolve({ id: failed.id, worker: 'w1', status: 'failed', error: 'exit 2' });
  ids.failed = failed.id;
  ids.stuck = (await inst.work.enqueue({ title: 'Ship the parser', blocked_by: [failed.id] })).id;
  ids.held = (await inst.work.enqueue({ title: 'Index the archive', kind: 'index' })).id;
  await inst.work.claim({ worker: 'gone-worker', id: ids.held, lease_ms: 60_000 });
  const flaky = await inst.work.enqueue({ title: 'Call the flaky API', max_attempts: 2, priority: -1 });
  await inst.work.claim({ worker: 'w1', id: flaky.id });
  await inst.work.resolve({
    id: flaky.id,
    worker: 'w1',
    status: 'failed',
    error: 'timeout',
    retry_at: new Date(now).toISOString(),
  });
  ids.flaky = flaky.id;
  ids.ready = (await inst.work.enqueue({ title: 'Summarise the inbox', priority: -2 })).id;
  ids.decision = (await inst.work.enqueue({ title: 'Approve the release', waiting_human: true })).id;
  now += 1000;
  await inst.close();
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await s?.close();
});

describe.skipIf(!HAVE_CHROMIUM)('the overview shows problems first', () => {
  for (const width of [1280, 390]) {
    it(`at ${width} px: each problem with its items and its way out`, async () => {
      const page = await signedIn(browser, s.url, width);
      try {
        await page.goto(`${s.url}/?instance=h/ops`);
        // Problems come before the counts and the lists.
        const order = (await page.evaluate(
          `[...document.querySelectorAll('main h2')].map((h) => h.textContent)`,
        )) as string[];
        expect(order[0]).toBe('Problems');
        const items = page.locator('ul.problems > li');
        const texts = await items.allTextContents();
        expect(texts).toHaveLength(5);
        expect(texts[0]).toMatch(/^1 blocked behind a failure: Ship the parser.*Retry the failed blocker/);
        expect(texts[1]).toMatch(
          /^1 held past an expired lease: Index the archive.*worker stopped or stalled/,
        );
        expect(texts[2]).toMatch(/^1 on their last attempt: Call the flaky API/);
        expect(texts[3]).toMatch(/^Ready work is waiting: the oldest ready item became claimable 2 h ago/);
        expect(texts[4]).toMatch(/^1 waiting for a person for over an hour: Approve the release/);
        // The way out of the first leads to the failed blocker, whose page offers Retry.
        await items.first().getByRole('link', { name: ids.failed! }).click();
        await page.waitForURL(new RegExp(`/items/${ids.failed}`));
        expect(await page.getByRole('button', { name: 'Retry…' }).count()).toBe(1);
        await page.goto(`${s.url}/?instance=h/ops`);
        const wide = (await page.evaluate('document.documentElement.scrollWidth')) as number;
        expect(wide).toBeLessThanOrEqual(width);
        await page.screenshot({ path: `${SHOTS}problems-${width}.png`, fullPage: true });
        expect(await seriousViolations(page)).toEqual([]);
      } finally {
        await page.close();
      }
    }, 120_000);
  }

  it('an instance with nothing stuck says so', async () => {
    const page = await signedIn(browser, s.url, 1280);
    try {
      await page.goto(`${s.url}/?instance=h/calm`);
      expect(await page.locator('section[aria-labelledby="h-problems"]').textContent()).toContain(
        'None: nothing is stuck.',
      );
    } finally {
      await page.close();
    }
  });

  // These change the instance: after the problem tests.
  it("a failed item's page lists what waits behind it; a retry says what it did and re-opens them", async () => {
    const page = await signedIn(browser, s.url, 1280);
    try {
      await page.goto(`${s.url}/items/${ids.failed}?instance=h/ops`);
      const behind = page.locator('section[aria-labelledby="h-behind"]');
      expect(await behind.locator('h2').textContent()).toBe('Waiting behind this item (1)');
      expect(await behind.textContent()).toContain('Ship the parser');
      await page.screenshot({ path: `${SHOTS}failed-dependants-1280.png`, fullPage: true });
      await page.getByRole('button', { name: 'Retry…' }).click();
      await page.getByRole('button', { name: 'Yes, retry' }).click();
      await page.waitForURL(/done=retry/);
      expect(await page.getByRole('status').filter({ hasText: 'Retried' }).textContent()).toContain(
        'back in the queue',
      );
      expect(await page.locator('.badge').first().textContent()).toBe('pending');
      expect(await page.locator('section[aria-labelledby="h-behind"]').count()).toBe(0);
      expect(await seriousViolations(page)).toEqual([]);
    } finally {
      await page.close();
    }
  });

  it('a parked approval is approved (or rejected), not only unparked, with a notice of what happened', async () => {
    const page = await signedIn(browser, s.url, 390);
    try {
      await page.goto(`${s.url}/items/${ids.decision}?instance=h/ops`);
      const buttons = await page.locator('.actions button').allTextContents();
      expect(buttons).toEqual(['Approve…', 'Reject…']);
      await page.getByRole('button', { name: 'Approve…' }).click();
      expect(await page.locator('main').textContent()).toContain('It goes back to the queue and runs.');
      await page.getByRole('button', { name: 'Yes, approve' }).click();
      await page.waitForURL(/done=approve/);
      expect(await page.getByRole('status').filter({ hasText: 'Approved' }).count()).toBe(1);
      expect(await page.locator('.badge').first().textContent()).toBe('pending');
      await page.screenshot({ path: `${SHOTS}approved-390.png`, fullPage: true });
      // The event says a person did it.
      const r = await s.call('GET', '/api/v1/read_events', {
        query: { instance: 'h/ops', work_item_id: ids.decision! },
      });
      const last = (r.json as Array<{ type: string; data: { actor_kind?: string } }>).at(-1)!;
      expect(last.data.actor_kind).toBe('human');
    } finally {
      await page.close();
    }
  });

  it('retries every failed item a filter matches, after a preview of exactly those, with a notice', async () => {
    const call = async (name: string, body: unknown) =>
      (await s.call('POST', `/api/v1/${name}`, { body, query: { instance: 'h/ops' } })).json;
    const flaky: string[] = [];
    for (const [title, kind] of [
      ['Fetch feed A', 'flaky'],
      ['Fetch feed B', 'flaky'],
      ['Fetch feed C', 'flaky'],
      ['Render page', 'render'],
    ] as const) {
      const id = (await call('enqueue', { title, kind, max_attempts: 1 })).id as string;
      await call('claim', { worker: 'w9', id });
      await call('resolve', { id, worker: 'w9', status: 'failed', error: 'timeout' });
      if (kind === 'flaky') flaky.push(id);
    }
    const page = await signedIn(browser, s.url, 1280);
    try {
      await page.goto(`${s.url}/items?instance=h/ops&status=failed&kind=flaky`);
      await page.getByRole('link', { name: 'Retry every failed item this filter matches…' }).click();
      expect(await page.locator('h1').textContent()).toBe('Retry 3 failed items?');
      expect(await page.locator('main li').allTextContents()).toEqual(
        expect.arrayContaining([expect.stringContaining('Fetch feed A')]),
      );
      await page.screenshot({ path: `${SHOTS}bulk-preview-1280.png`, fullPage: true });
      await page.getByRole('button', { name: 'Yes, retry 3' }).click();
      await page.waitForURL(/retried=3/);
      expect(await page.getByRole('status').filter({ hasText: 'Retried 3 items' }).count()).toBe(1);
      const status = async (id: string) =>
        (await s.call('GET', '/api/v1/get_item', { query: { id, instance: 'h/ops' } })).json.status;
      expect(await Promise.all(flaky.map(status))).toEqual(['pending', 'pending', 'pending']);
      const others = (
        await s.call('GET', '/api/v1/list_items', { query: { instance: 'h/ops', kind: 'render' } })
      ).json;
      expect(others.map((i: { status: string }) => i.status)).toEqual(['failed']);
      expect(await seriousViolations(page)).toEqual([]);
    } finally {
      await page.close();
    }
  });
});
