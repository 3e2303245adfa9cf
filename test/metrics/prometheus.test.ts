// GET /metrics and prometheusMetrics(): read back with real exposition-format parsers (parse-prometheus-text-
// format for the gauges; the official Prometheus Python client's for the histogram, whose labelled buckets the
// former merges into one) after a scripted
// workload on both backends (an injected clock), every gauge equal to what the store says when asked item
// by item; the duration histogram equal to the done and failed items' own times; labels bounded (kinds
// beyond MAX_KINDS summed as _other, no item id anywhere); the HTTP endpoint behind the credential.
import { readFileSync } from 'node:fs';
import Database from 'better-sqlite3';
import parse from 'parse-prometheus-text-format';
import { afterAll, describe, expect, it } from 'vitest';
import { WORKFLOW_RUN_STATUSES } from '../../src/core/codecs/workflow-events/codec.js';
import type { WorkItem, WorkItemStatus } from '../../src/core/types.js';
import { WORK_ITEM_STATUSES } from '../../src/core/types.js';
import { startServer } from '../../src/http/serve.js';
import type { Instance } from '../../src/instance/instance.js';
import { DURATION_BUCKETS_S, MAX_KINDS, prometheusMetrics } from '../../src/metrics/prometheus.js';
import { runOperation } from '../../src/service/invoke.js';
import { createWorldStorage } from '../../src/workflow-world/storage.js';
import { type BackendUnderTest, backendsForThisFile } from '../helpers/backends.js';
import { officialPrometheusParserForThisFile } from '../helpers/prometheus-parser.js';

const backends = await backendsForThisFile();
/** The official Prometheus client's parser (null where it is missing: its tests are skipped, saying so). */
const official = officialPrometheusParserForThisFile();
const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

const T0 = Date.parse('2026-06-01T00:00:00.000Z');

async function open(b: BackendUnderTest): Promise<{ inst: Instance; advance(ms: number): void }> {
  let now = T0;
  const inst = await b.open(undefined, { clock: () => now, coalesce: false });
  cleanups.push(() => inst.close());
  return {
    inst,
    advance: (ms) => {
      now += ms;
    },
  };
}

/** The families of a scrape by name, each sample's labels without the instance. */
function scrape(text: string) {
  const out = new Map<string, ReturnType<typeof parse>[number]>();
  for (const f of parse(text)) out.set(f.name, f);
  return out;
}

const gauge = (fams: ReturnType<typeof scrape>, name: string, labels: Record<string, string> = {}) => {
  const f = fams.get(name);
  expect(f, name).toBeDefined();
  const hit = f!.metrics.filter((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v));
  return hit.reduce((n, m) => n + Number(m.value), 0);
};

const ms = (iso: string | null) => (iso === null ? 0 : Date.parse(iso));

/**
 * A scripted workload on a fresh instance (an injected clock): ready, delayed, parked, done, failed, retried
 * and expired items, documents with a conflict, and a verify; the instance as it left it.
 */
async function scriptedWorkload(b: BackendUnderTest) {
  const { inst, advance } = await open(b);
  const w = 'worker-1';
  // Ready: three of two kinds and none; one not yet due; one parked for a human.
  await inst.work.enqueue({ title: 'r1', kind: 'build' });
  advance(5_000);
  await inst.work.enqueue({ title: 'r2', kind: 'test' });
  await inst.work.enqueue({ title: 'r3' });
  await inst.work.enqueue({
    title: 'later',
    kind: 'build',
    not_before: new Date(T0 + 3_600_000).toISOString(),
  });
  await inst.work.enqueue({ title: 'ask', waiting_human: true });
  // Done in 2 s and in 120 s; failed for good after 10 s; one retried (attempts 2).
  for (const [kind, took] of [
    ['deploy', 2_000],
    ['deploy', 120_000],
  ] as const) {
    const item = await inst.work.enqueue({ title: `d${took}`, kind, priority: 10 });
    await inst.work.claim({ worker: w, id: item.id, lease_ms: 3_600_000 });
    advance(took);
    await inst.work.resolve({ id: item.id, worker: w, status: 'done' });
  }
  // One pending item on its last attempt; one parked for a person two hours ago, one just now.
  const last = await inst.work.enqueue({ title: 'last', max_attempts: 2, priority: -5 });
  await inst.work.claim({ worker: w, id: last.id });
  await inst.work.resolve({ id: last.id, worker: w, status: 'failed', error: 'x', retry_at: '1h' });
  await inst.work.enqueue({ title: 'ask again', waiting_human: true });
  advance(2 * 3_600_000);
  await inst.work.enqueue({ title: 'ask now', waiting_human: true });
  const bad = await inst.work.enqueue({ title: 'bad', kind: 'deploy', max_attempts: 1, priority: 10 });
  await inst.work.claim({ worker: w, id: bad.id });
  advance(10_000);
  await inst.work.resolve({ id: bad.id, worker: w, status: 'failed', error: 'boom' });
  // Two items blocked behind that failure (a chain).
  const b1 = await inst.work.enqueue({ title: 'after-bad', blocked_by: [bad.id] });
  await inst.work.enqueue({ title: 'after-after', blocked_by: [b1.id] });
  const again = await inst.work.enqueue({ title: 'again', kind: 'test', priority: 10 });
  await inst.work.claim({ worker: w, id: again.id });
  await inst.work.resolve({
    id: again.id,
    worker: w,
    status: 'failed',
    error: 'flaky',
    retry_at: new Date(T0).toISOString(),
  });
  await inst.work.claim({ worker: w, id: again.id, lease_ms: 30_000 });
  // One lease that has run out, one that runs out within a minute (the retried one, 30 s).
  const lost = await inst.work.enqueue({ title: 'lost', kind: 'build', priority: 10 });
  await inst.work.claim({ worker: 'worker-2', id: lost.id, lease_ms: 10_000 });
  advance(15_000);
  await inst.docs.commit({ kind: 'json', id: 'plan', expected_version: 0, body: { a: 1 } });
  await inst.docs.commit({ kind: 'json', id: 'plan', expected_version: 1, body: { a: 2 } });
  // A stale writer: refused, counted as a conflict, not as a commit.
  await expect(
    inst.docs.commit({ kind: 'json', id: 'plan', expected_version: 1, body: { a: 3 } }),
  ).rejects.toMatchObject({ code: 'STATE_CONFLICT' });
  // No verify has run in this process yet: no verify gauge at all (not a 0 that would page someone).
  expect(await prometheusMetrics([{ name: 'h/n', inst }])).not.toMatch(/^agentstate_verify_ok[{ ]/m);
  const verified = await inst.events.verify();
  return { inst, verified };
}

describe.each(backends)('/metrics on $name', (b) => {
  it('every gauge equals the store, item by item, after a scripted workload', async () => {
    const { inst, verified } = await scriptedWorkload(b);
    const text = await prometheusMetrics([{ name: 'h/n', inst }]);
    const fams = scrape(text);
    const all = await inst.work.list({ limit: 1000 });
    const kinds = [...new Set(all.map((i) => i.kind ?? ''))];
    for (const status of WORK_ITEM_STATUSES as readonly WorkItemStatus[]) {
      for (const kind of kinds) {
        const mine = all.filter((i) => i.status === status && (i.kind ?? '') === kind);
        const labels = { agentstate_instance: 'h/n', status, kind };
        expect(gauge(fams, 'agentstate_work_items', labels), `${status}/${kind}`).toBe(mine.length);
        expect(gauge(fams, 'agentstate_work_item_attempts', labels)).toBe(
          mine.reduce((n, i) => n + i.attempts, 0),
        );
        expect(gauge(fams, 'agentstate_work_items_retried', labels)).toBe(
          mine.filter((i) => i.attempts > 1).length,
        );
      }
    }
    expect(gauge(fams, 'agentstate_work_items')).toBe(all.length);
    const now = inst.clock();
    const ready = await inst.work.list({ ready: true, limit: 1000 });
    const since = Math.min(...ready.map((i) => Math.max(ms(i.created_at), ms(i.not_before))));
    expect(gauge(fams, 'agentstate_oldest_ready_age_seconds')).toBe((now - since) / 1000);
    const flying = all.filter((i) => i.status === 'in_flight');
    expect(gauge(fams, 'agentstate_leases_expired')).toBe(
      flying.filter((i) => ms(i.lease_expires_at) <= now).length,
    );
    expect(gauge(fams, 'agentstate_leases_expired')).toBe(1);
    expect(gauge(fams, 'agentstate_leases_expiring')).toBe(
      flying.filter((i) => ms(i.lease_expires_at) > now && ms(i.lease_expires_at) <= now + 60_000).length,
    );
    expect(gauge(fams, 'agentstate_work_items_blocked_on_failure')).toBe(
      (await inst.work.list({ blocked_on_failure: true, limit: 1000 })).length,
    );
    expect(gauge(fams, 'agentstate_work_items_blocked_on_failure')).toBe(2);
    const onLast = all.filter(
      (i) => i.status === 'pending' && i.attempts > 0 && i.attempts >= i.max_attempts - 1,
    );
    expect(gauge(fams, 'agentstate_work_items_last_attempt')).toBe(onLast.length);
    expect(gauge(fams, 'agentstate_work_items_last_attempt')).toBe(1);
    const waitingLong = all.filter(
      (i) => i.status === 'waiting_human' && now - ms(i.updated_at) >= 3_600_000,
    );
    expect(gauge(fams, 'agentstate_work_items_waiting_human_long')).toBe(waitingLong.length);
    // The two parked before the two hours passed ('ask' at the start and here), not the one parked after.
    expect(gauge(fams, 'agentstate_work_items_waiting_human_long')).toBe(2);
    expect(gauge(fams, 'agentstate_event_log_head_position')).toBe((await inst.events.head())!.position);
    expect(gauge(fams, 'agentstate_documents', { kind: 'json' })).toBe(1);
    expect(gauge(fams, 'agentstate_document_versions', { kind: 'json' })).toBe(2);
    expect(fams.get('agentstate_document_commits_total')!.type).toBe('COUNTER');
    expect(gauge(fams, 'agentstate_document_commits_total', { kind: 'json' })).toBe(2);
    expect(gauge(fams, 'agentstate_document_conflicts_total', { kind: 'json' })).toBe(1);
    expect(verified.ok).toBe(true);
    expect(gauge(fams, 'agentstate_verify_ok')).toBe(1);
    expect(gauge(fams, 'agentstate_verify_problems')).toBe(0);
    expect(gauge(fams, 'agentstate_verify_events')).toBe(verified.events);
    expect(verified.events).toBe((await inst.events.head())!.position);
    expect(gauge(fams, 'agentstate_verify_last_run_timestamp_seconds')).toBe(inst.clock() / 1000);

    expect(fams.get('agentstate_work_item_duration_seconds')!.type).toBe('HISTOGRAM');
    // No label value is an item id.
    expect(text).not.toMatch(/wi_[0-9A-Z]{10}/);
  });

  // The histogram, read by the official Prometheus client's parser (parse-prometheus-text-format merges its
  // labelled buckets into one): the ended items' own claim→resolve times, cumulative per bucket.
  it.skipIf(official === null)(
    'the duration histogram and the counters, as the official Prometheus parser reads them, equal the items’ own times',
    async () => {
      const { inst } = await scriptedWorkload(b);
      const text = await prometheusMetrics([{ name: 'h/n', inst }]);
      const all = await inst.work.list({ limit: 1000 });
      const samples = official!(text);
      const ended = all.filter(
        (i: WorkItem) => (i.status === 'done' || i.status === 'failed') && i.claimed_at,
      );
      const of = (name: string, labels: Record<string, string>) =>
        samples.filter(
          (s) =>
            s.name === `agentstate_work_item_duration_seconds${name}` &&
            Object.entries(labels).every(([k, v]) => s.labels[k] === v),
        );
      for (const kind of new Set(ended.map((i) => i.kind ?? ''))) {
        const times = ended
          .filter((i) => (i.kind ?? '') === kind)
          .map((i) => (ms(i.resolved_at) - ms(i.claimed_at)) / 1000);
        expect(of('_count', { kind }).map((s) => s.value)).toEqual([times.length]);
        expect(of('_sum', { kind })[0]!.value).toBeCloseTo(
          times.reduce((a, x) => a + x, 0),
          6,
        );
        for (const le of [...DURATION_BUCKETS_S.map(String), '+Inf']) {
          const want = times.filter((t) => le === '+Inf' || t <= Number(le)).length;
          expect(
            of('_bucket', { kind, le }).map((s) => s.value),
            `${kind} le ${le}`,
          ).toEqual([want]);
        }
      }
      expect(of('_count', { kind: 'deploy' })[0]!.value).toBe(3);
      // The counters as the official parser reads them.
      const conflicts = samples.filter((s) => s.name === 'agentstate_document_conflicts_total');
      expect(conflicts.map((s) => [s.labels.kind, s.value])).toEqual([['json', 1]]);
    },
  );

  /**
   * The scrape of a fresh instance (none of whose counters exist yet) after one durable run recorded 2 steps
   * completed, 1 failed, a signal, a wait and a sleep.
   */
  async function durableRunScrape(): Promise<string> {
    const { inst } = await open(b);
    const empty = scrape(await prometheusMetrics([{ name: 'h/runs', inst }]));
    expect(empty.get('agentstate_run_records_total')?.metrics ?? []).toEqual([]);
    const item = await inst.work.enqueue({ title: 'durable' });
    const held = (await inst.work.claim({ worker: 'w' }))!;
    const run = await inst.work.run({ id: item.id, worker: 'w', attempt: held.attempts });
    await run.step('a', () => 1);
    await run.step('b', () => 2);
    await run
      .step('c', () => {
        throw new Error('no');
      })
      .catch(() => {});
    await inst.work.signal({ id: item.id, name: 'go' });
    expect(await run.waitFor('go')).toMatchObject({ timedOut: false });
    await run.sleep('nap', '1m').catch(() => {});
    return prometheusMetrics([{ name: 'h/runs', inst }]);
  }

  it('counts the records of durable runs in the log by type, as counters', async () => {
    const fams = scrape(await durableRunScrape());
    const counts = Object.fromEntries(
      fams.get('agentstate_run_records_total')!.metrics.map((m) => [m.labels?.type, Number(m.value)]),
    );
    expect(counts).toEqual({ completed: 2, failed: 1, signaled: 1, waited: 1, slept: 1 });
  });

  it.skipIf(official === null)(
    'the counters of durable-run records, as the official Prometheus parser reads them',
    async () => {
      const samples = official!(await durableRunScrape());
      expect(
        samples
          .filter((x) => x.name === 'agentstate_run_records_total')
          .map((x) => [x.labels.type, x.value])
          .sort(),
      ).toEqual([
        ['completed', 2],
        ['failed', 1],
        ['signaled', 1],
        ['slept', 1],
        ['waited', 1],
      ]);
    },
  );

  it("counts a Workflow SDK World's runs and steps by status, 0 for a status none is in", async () => {
    const { inst, advance } = await open(b);
    const none = scrape(await prometheusMetrics([{ name: 'h/wf', inst }]));
    for (const status of WORKFLOW_RUN_STATUSES) {
      expect(gauge(none, 'agentstate_workflow_runs', { status }), status).toBe(0);
      expect(none.get('agentstate_workflow_runs')!.metrics.map((m) => m.labels?.status)).toContain(status);
    }
    const s = createWorldStorage(inst);
    const newRun = async () => {
      advance(1000);
      const created = await s.events.create(null, {
        eventType: 'run_created',
        eventData: { deploymentId: 'd', workflowName: 'workflow//./src/w//ƒ|1', input: new Uint8Array([0]) },
      });
      return created.run!.runId;
    };
    const step = (runId: string, id: string, eventType: string, eventData?: unknown) =>
      s.events.create(runId, { eventType, correlationId: id, eventData } as never);
    // Completed with its step done; failed with its step failed; running with a step running and one
    // pending; one pending; one cancelled.
    const done = await newRun();
    await s.events.create(done, { eventType: 'run_started' });
    await step(done, 'st|1', 'step_created', { stepName: 'a', input: new Uint8Array([0]) });
    await step(done, 'st|1', 'step_started');
    await step(done, 'st|1', 'step_completed', { result: new Uint8Array([1]) });
    await s.events.create(done, { eventType: 'run_completed', eventData: { output: new Uint8Array([1]) } });
    const failed = await newRun();
    await s.events.create(failed, { eventType: 'run_started' });
    await step(failed, 'st+2', 'step_created', { stepName: 'b', input: new Uint8Array([0]) });
    await step(failed, 'st+2', 'step_started');
    await step(failed, 'st+2', 'step_failed', { error: { message: 'no' } });
    await s.events.create(failed, { eventType: 'run_failed', eventData: { error: { message: 'no' } } });
    const running = await newRun();
    await s.events.create(running, { eventType: 'run_started' });
    await step(running, 'st ü', 'step_created', { stepName: 'c', input: new Uint8Array([0]) });
    await step(running, 'st ü', 'step_started');
    await step(running, 'st φ', 'step_created', { stepName: 'd', input: new Uint8Array([0]) });
    await newRun();
    const cancelled = await newRun();
    await s.events.create(cancelled, { eventType: 'run_cancelled' });

    const text = await prometheusMetrics([{ name: 'h/wf', inst }]);
    const fams = scrape(text);
    const runs = (await runOperation(inst, 'workflow_runs', {})) as Array<{ run_id: string; status: string }>;
    expect(runs).toHaveLength(5);
    const steps: Array<{ status: string }> = [];
    for (const r of runs) {
      steps.push(
        ...((await runOperation(inst, 'workflow_run', { run_id: r.run_id })) as { steps: [] }).steps,
      );
    }
    expect(steps).toHaveLength(4);
    for (const status of WORKFLOW_RUN_STATUSES) {
      const labels = { agentstate_instance: 'h/wf', status };
      expect(gauge(fams, 'agentstate_workflow_runs', labels), `runs ${status}`).toBe(
        runs.filter((r) => r.status === status).length,
      );
      expect(gauge(fams, 'agentstate_workflow_runs', labels), `runs ${status}`).toBe(1);
      expect(gauge(fams, 'agentstate_workflow_steps', labels), `steps ${status}`).toBe(
        steps.filter((x) => x.status === status).length,
      );
    }
    expect(gauge(fams, 'agentstate_workflow_steps', { status: 'cancelled' })).toBe(0);
    expect(gauge(fams, 'agentstate_workflow_steps', { status: 'running' })).toBe(1);
    expect(fams.get('agentstate_workflow_steps')!.type).toBe('GAUGE');
    // No label value is a run or step id.
    expect(text).not.toMatch(/wrun_|st\|1/);
    // The official parser's reading (required under CI=true: see the file's parser check).
    if (official !== null) {
      const samples = official(text);
      const of = (name: string) =>
        Object.fromEntries(samples.filter((x) => x.name === name).map((x) => [x.labels.status, x.value]));
      expect(of('agentstate_workflow_runs')).toEqual({
        pending: 1,
        running: 1,
        completed: 1,
        failed: 1,
        cancelled: 1,
      });
      expect(of('agentstate_workflow_steps')).toEqual({
        pending: 1,
        running: 1,
        completed: 1,
        failed: 1,
        cancelled: 0,
      });
    }
  });
});

describe('/metrics labels and endpoint (SQLite)', () => {
  const sqlite = backends[0]!;

  it(`names at most ${MAX_KINDS} kinds per instance and sums the rest as _other`, async () => {
    const { inst } = await open(sqlite);
    // 60 kinds, kind k with k+1 items: the 50 largest are named.
    for (let k = 0; k < 60; k++) {
      await inst.work.enqueueMany(
        Array.from({ length: k + 1 }, (_, j) => ({ title: `t${j}`, kind: `kind-${k}` })),
      );
    }
    const fams = scrape(await prometheusMetrics([{ name: 'h/n', inst }]));
    const f = fams.get('agentstate_work_items')!;
    const named = new Set(f.metrics.map((m) => m.labels!.kind));
    expect(named.size).toBe(MAX_KINDS + 1);
    expect(named.has('_other')).toBe(true);
    expect(named.has('kind-9')).toBe(false);
    expect(named.has('kind-10')).toBe(true);
    expect(gauge(fams, 'agentstate_work_items', { kind: '_other' })).toBe(((1 + 10) * 10) / 2);
    expect(gauge(fams, 'agentstate_work_items')).toBe((60 * 61) / 2);
  });

  it('GET /metrics on agentstate serve: the exposition format, behind the credential', async () => {
    const inst = await sqlite.open('served');
    await inst.work.enqueue({ title: 'one', kind: 'k' });
    await createWorldStorage(inst).events.create(null, {
      eventType: 'run_created',
      eventData: { deploymentId: 'd', workflowName: 'w', input: new Uint8Array([0]) },
    });
    const dir = inst.paths.dir;
    await inst.close();
    const server = await startServer({ target: { dir }, port: 0, token: 'metrics-token-0123456789' });
    cleanups.push(() => server.close());
    const url = `${server.url}/metrics`;
    expect((await fetch(url)).status).toBe(401);
    expect((await fetch(url, { headers: { authorization: 'Bearer wrong' } })).status).toBe(401);
    const r = await fetch(url, { headers: { authorization: 'Bearer metrics-token-0123456789' } });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const fams = scrape(await r.text());
    expect(gauge(fams, 'agentstate_work_items', { status: 'pending', kind: 'k' })).toBe(1);
    expect(gauge(fams, 'agentstate_workflow_runs', { status: 'pending' })).toBe(1);
    expect(gauge(fams, 'agentstate_workflow_runs', { status: 'running' })).toBe(0);
  });

  it('serve --verify-every: the verify gauges turn 0 once a row is rewritten behind the log', async () => {
    const inst = await sqlite.open('verified');
    const item = await inst.work.enqueue({ title: 'kept honest', kind: 'k' });
    const { dir, db } = inst.paths;
    await inst.close();
    const server = await startServer({
      target: { dir },
      port: 0,
      token: 'metrics-token-0123456789',
      metricsPort: 0,
      verifyEveryMs: 20,
    });
    cleanups.push(() => server.close());
    const read = async () => scrape(await (await fetch(server.metricsUrl!)).text());
    /** Scrapes until `ok` is the verify gauge's value (a condition, not a time). */
    const until = async (ok: number) => {
      for (;;) {
        const fams = await read();
        if (fams.get('agentstate_verify_ok')?.metrics.length && gauge(fams, 'agentstate_verify_ok') === ok)
          return fams;
        await new Promise((r) => setTimeout(r, 10));
      }
    };
    const clean = await until(1);
    expect(gauge(clean, 'agentstate_verify_problems')).toBe(0);
    expect(gauge(clean, 'agentstate_verify_events')).toBe(1);
    // A status rewritten in the database, not through the store.
    const raw = new Database(db);
    raw.prepare("UPDATE work_items SET status = 'done' WHERE id = ?").run(item.id);
    raw.close();
    const broken = await until(0);
    expect(gauge(broken, 'agentstate_verify_problems')).toBeGreaterThanOrEqual(1);
    await expect(
      startServer({ target: { dir }, port: 0, token: 'metrics-token-0123456789', verifyEveryMs: 0 }),
    ).rejects.toMatchObject({ code: 'INVALID_INPUT' });
  }, 60_000);

  it('docs/observability.md and the Grafana dashboard name only metrics the scrape has', async () => {
    const { inst } = await open(sqlite);
    await inst.work.enqueue({ title: 'x' });
    const names = new Set(parse(await prometheusMetrics([{ name: 'h/n', inst }])).map((f) => f.name));
    const docs = ['docs/observability.md', 'docs/grafana-dashboard.json'].map((f) =>
      readFileSync(new URL(`../../${f}`, import.meta.url), 'utf8'),
    );
    const used = new Set(docs.flatMap((d) => [...d.matchAll(/agentstate_[a-z_]+/g)].map((m) => m[0])));
    expect(used.size).toBeGreaterThan(8);
    for (const u of used) {
      if (u === 'agentstate_instance') continue;
      expect(names.has(u.replace(/_(bucket|sum|count)$/, '')), u).toBe(true);
    }
  });

  it('--metrics-port: GET /metrics on loopback without a credential, nothing else there; the main port still asks for one', async () => {
    const inst = await sqlite.open('metrics-port');
    await inst.work.enqueue({ title: 'one', kind: 'scraped' });
    const dir = inst.paths.dir;
    await inst.close();
    const server = await startServer({
      target: { dir },
      port: 0,
      token: 'metrics-token-0123456789',
      metricsPort: 0,
    });
    cleanups.push(() => server.close());
    expect(server.metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    const r = await fetch(server.metricsUrl!);
    expect(r.status).toBe(200);
    expect(gauge(scrape(await r.text()), 'agentstate_work_items', { kind: 'scraped' })).toBe(1);
    expect((await fetch(server.metricsUrl!.replace('/metrics', '/api/v1/count_items'))).status).toBe(404);
    expect((await fetch(server.metricsUrl!, { method: 'POST' })).status).toBe(404);
    expect((await fetch(`${server.url}/metrics`)).status).toBe(401);
  });
});
