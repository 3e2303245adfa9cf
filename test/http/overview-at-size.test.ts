// The overview at size (issue 15, point 5): over 10,000 items and 100,000 events it shows failures first and
// stays a bounded page, because it reads counts and bounded pages only. How fast it is belongs to the
// benchmark (`npm run bench -- --only http`, BENCHMARKS.md: about 14 ms of server time), not to a timed test.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer, TOKEN } from './helpers.js';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer(['big']);
  const inst = await s.instance('big');
  for (let i = 0; i < 10_000; i += 1000) {
    await inst.work.enqueueMany(
      Array.from({ length: 1000 }, (_, k) => ({
        title: `item ${i + k}`,
        ...((i + k) % 5 === 0 ? { waiting_human: true } : {}),
      })),
    );
  }
  for (let round = 0; round < 2; round++) {
    const claimed = await inst.work.claimMany({ worker: 'seed', limit: 1000 });
    await inst.work.resolveMany(
      claimed.map((c, k) => ({
        id: c.id,
        worker: 'seed',
        attempt: c.attempts,
        status: k % 2 ? ('failed' as const) : ('done' as const),
      })),
    );
  }
  const head = (await inst.events.head())?.position ?? 0;
  for (let n = head; n < 100_000; n += 2000) {
    await inst.events.appendMany(
      Array.from({ length: Math.min(2000, 100_000 - n) }, (_, k) => ({ type: 'note', data: { n: n + k } })),
    );
  }
  expect((await inst.events.head())?.position).toBe(100_000);
}, 120_000);
afterAll(() => s.close());

describe('the overview at 10,000 items and 100,000 events', () => {
  it('shows failures first and stays a bounded page, whatever the instance holds', async () => {
    const login = await fetch(`${s.url}/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ name: 'ops', token: TOKEN }),
      redirect: 'manual',
    });
    const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
    const r = await fetch(`${s.url}/?instance=h/big`, { headers: { cookie } });
    const html = await r.text();
    expect(r.status).toBe(200);
    expect(html).toContain('<b>1000</b>failed');
    // The server reports its time (Server-Timing), which the benchmark reads.
    expect(r.headers.get('server-timing')).toMatch(/dur=[\d.]+/);
    // Bounded pages: a few rows of each section, not thousands (10,000 items would be megabytes).
    expect(html.length).toBeLessThan(100_000);
    expect((html.match(/<tr/g) ?? []).length).toBeLessThan(200);
  }, 60_000);
});
