// `npm run bench -- --only http`: what `agentstate serve` costs — the HTTP round trip of claim+resolve and of a commit
// next to the same library calls in the same run, the Prometheus scrape and the dashboard overview's server time over 10,000 items and
// 100,000 events, and the event stream's delivery lag (append in the library, receive over SSE).
// Options: --calls N (default 300), --items N (default 10000), --events N (default 100000).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startServer } from '../src/http/serve.js';
import { openInstance } from '../src/instance/instance.js';
import { prometheusMetrics } from '../src/metrics/prometheus.js';

const { values: args } = parseArgs({
  options: {
    calls: { type: 'string', default: '300' },
    items: { type: 'string', default: '10000' },
    events: { type: 'string', default: '100000' },
  },
});
const CALLS = Math.max(20, Number(args.calls));
const ITEMS = Number(args.items);
const EVENTS = Number(args.events);
const TOKEN = 'bench-token-0123456789abcdef';
const tmp = mkdtempSync(join(tmpdir(), 'agentstate-bench-http-'));

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};
const row = (name: string, xs: number[], base?: number[]) => {
  const ratio = base ? `${(pct(xs, 50) / pct(base, 50)).toFixed(1)}×` : '1×';
  console.log(`| ${name} | ${pct(xs, 50).toFixed(3)} ms | ${pct(xs, 95).toFixed(3)} ms | ${ratio} |`);
};

async function main() {
  const root = join(tmp, 'root');
  const inst = await openInstance({ root, host: 'bench', name: 'api' });
  const big = await openInstance({ root, host: 'bench', name: 'big' });
  const server = await startServer({ target: { root }, port: 0, token: TOKEN, pollMs: 20 });
  const h = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
  const post = async (op: string, body: unknown, instance = 'bench/api') => {
    const r = await fetch(`${server.url}/api/v1/${op}?instance=${instance}`, {
      method: 'POST',
      headers: h,
      body: JSON.stringify(body),
    });
    const j = await r.json();
    if (r.status !== 200) throw new Error(JSON.stringify(j));
    return j as { id: string; attempts: number };
  };
  try {
    console.log(`\n### Round trips (${CALLS} calls each, SQLite, one client at a time)\n`);
    console.log('| call | p50 | p95 | p50 vs library |\n|---|---|---|---|');
    for (let i = 0; i < CALLS * 2; i++) await inst.work.enqueue({ title: `t${i}` });
    const libCR: number[] = [];
    const httpCR: number[] = [];
    for (let i = 0; i < CALLS; i++) {
      let t = performance.now();
      const a = await inst.work.claim({ worker: 'lib' });
      await inst.work.resolve({ id: a!.id, worker: 'lib', attempt: a!.attempts, status: 'done' });
      libCR.push(performance.now() - t);
      t = performance.now();
      const b = await post('claim', { worker: 'http' });
      await post('resolve', { id: b.id, worker: 'http', attempt: b.attempts, status: 'done' });
      httpCR.push(performance.now() - t);
    }
    row('claim+resolve, library', libCR);
    row('claim+resolve, HTTP API', httpCR, libCR);
    const libC: number[] = [];
    const httpC: number[] = [];
    for (let i = 0; i < CALLS; i++) {
      let t = performance.now();
      await inst.docs.commit({ kind: 'json', id: 'lib', expected_version: i, body: { n: i } });
      libC.push(performance.now() - t);
      t = performance.now();
      await post('commit', { kind: 'json', id: 'http', expected_version: i, body: { n: i } });
      httpC.push(performance.now() - t);
    }
    row('commit, library', libC);
    row('commit, HTTP API', httpC, libC);

    console.log(`\n### Event stream delivery lag (${CALLS} appends, one at a time)\n`);
    const ac = new AbortController();
    const res = await fetch(`${server.url}/api/v1/events?instance=bench/api&type=bench_lag`, {
      headers: { authorization: h.authorization },
      signal: ac.signal,
    });
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    await reader.read(); // the ready message
    const lag: number[] = [];
    let buf = '';
    for (let i = 0; i < CALLS; i++) {
      const t = performance.now();
      await inst.events.append({ type: 'bench_lag', data: { i } });
      while (!buf.includes(`"i":${i}}`)) buf += (await reader.read()).value ?? '';
      lag.push(performance.now() - t);
      buf = buf.slice(buf.lastIndexOf('\n\n'));
    }
    ac.abort();
    console.log('| measure | p50 | p95 | |\n|---|---|---|---|');
    row('append (library) → received over SSE (poll 20 ms)', lag);

    console.log(`\n### Dashboard overview at ${ITEMS} items / ${EVENTS} events (SQLite)\n`);
    let t = performance.now();
    const statuses = ['done', 'failed', 'pending', 'waiting_human'] as const;
    for (let i = 0; i < ITEMS; i += 500) {
      await big.work.enqueueMany(
        Array.from({ length: Math.min(500, ITEMS - i) }, (_, k) => ({
          title: `item ${i + k}`,
          kind: 'bench',
          ...(statuses[(i + k) % 4] === 'waiting_human' ? { waiting_human: true } : {}),
        })),
      );
    }
    for (let done = 0; done < ITEMS / 4; ) {
      const claimed = await big.work.claimMany({ worker: 'seed', limit: 200 });
      if (claimed.length === 0) break;
      await big.work.resolveMany(
        claimed.map((c, k) => ({
          id: c.id,
          worker: 'seed',
          attempt: c.attempts,
          status: k % 2 === 0 ? ('done' as const) : ('failed' as const),
          ...(k % 2 === 0 ? {} : { error: 'boom' }),
        })),
      );
      done += claimed.length;
    }
    const head = (await big.events.head())?.position ?? 0;
    for (let n = head; n < EVENTS; n += 1000) {
      await big.events.appendMany(
        Array.from({ length: Math.min(1000, EVENTS - n) }, (_, k) => ({
          type: 'bench_note',
          data: { n: n + k },
        })),
      );
    }
    console.log(
      `seeded in ${((performance.now() - t) / 1000).toFixed(1)} s: ${JSON.stringify(await big.work.counts())}, ${(await big.events.head())?.position} events\n`,
    );
    // A long seeding outlives the server's keep-alive: the client's pooled socket may be closed under it
    // (ECONNRESET), so the first request after it is tried twice.
    const signIn = () =>
      fetch(`${server.url}/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ name: 'bench', token: TOKEN }),
        redirect: 'manual',
      });
    const login = await signIn().catch(signIn);
    const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
    const render: number[] = [];
    const serverTime: number[] = [];
    for (let i = 0; i < 30; i++) {
      t = performance.now();
      const r = await fetch(`${server.url}/?instance=bench/big`, { headers: { cookie } });
      await r.text();
      if (r.status !== 200) throw new Error(`overview: ${r.status}`);
      render.push(performance.now() - t);
      serverTime.push(Number(/dur=([\d.]+)/.exec(r.headers.get('server-timing') ?? '')?.[1] ?? Number.NaN));
    }
    const items: number[] = [];
    for (let i = 0; i < 30; i++) {
      t = performance.now();
      await (
        await fetch(`${server.url}/items?instance=bench/big&status=failed`, { headers: { cookie } })
      ).text();
      items.push(performance.now() - t);
    }
    const events: number[] = [];
    for (let i = 0; i < 30; i++) {
      t = performance.now();
      await (await fetch(`${server.url}/events?instance=bench/big`, { headers: { cookie } })).text();
      events.push(performance.now() - t);
    }
    // Prometheus: the scrape as the library computes it, and GET /metrics (every served instance) over HTTP.
    const scrapeLib: number[] = [];
    const scrapeHttp: number[] = [];
    await prometheusMetrics([{ name: 'bench/big', inst: big }]);
    for (let i = 0; i < 30; i++) {
      t = performance.now();
      await prometheusMetrics([{ name: 'bench/big', inst: big }]);
      scrapeLib.push(performance.now() - t);
      t = performance.now();
      const r = await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
      await r.text();
      if (r.status !== 200) throw new Error(`metrics: ${r.status}`);
      scrapeHttp.push(performance.now() - t);
    }
    // The overview's charts: queue_history over the last 24 hours (every seeded item is in the window).
    const history: number[] = [];
    for (let i = 0; i < 30; i++) {
      t = performance.now();
      await big.work.history();
      history.push(performance.now() - t);
    }
    console.log('| page (30 loads, round trip on loopback) | p50 | p95 | |\n|---|---|---|---|');
    row('work.history (library: the charts’ 24 h in 48 spans)', history);
    row('prometheusMetrics (library, this instance)', scrapeLib);
    row('GET /metrics (round trip, both served instances)', scrapeHttp);
    row('overview /, server time (Server-Timing)', serverTime);
    row('overview /, round trip', render);
    row('work items, failed', items);
    row('event log, newest 50', events);
  } finally {
    await server.close();
    await inst.close();
    await big.close();
    rmSync(tmp, { recursive: true, force: true });
  }
}

await main();
