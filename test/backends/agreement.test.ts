// The same work on both backends writes the same record. PostgreSQL claims and resolves in one statement when
// it pays (the statement builds the events as SQL text); SQLite goes row by row through the library's event
// builders. Over generated scripts of claims (under limits, of a kind, by id), resolves (done, failed,
// retried, stale, by the wrong worker, repeated, at different times, of mixed actor kinds, of items waiting
// for a human: a run's question, a document's decision), heartbeats, retries, releases and a restart's
// sweep and replay, every answer, every item and
// every stored event (its bytes and its hash) must be the same on both. A change to either path that the
// other does not make shows here as the first call that differs.
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openPostgresBackend } from '../../src/backends/postgres/backend.js';
import { openSqliteBackend } from '../../src/backends/sqlite/backend.js';
import type {
  NewWorkItem,
  Outcome,
  ResolveQuery,
  StoreBackend,
  StoredEvent,
} from '../../src/core/backend.js';
import type { ActorKind, Json, WorkItem } from '../../src/core/types.js';
import { PG_URL, postgresForThisFile } from '../helpers/postgres.js';
import { tempDir } from '../helpers/tmp.js';

const schema = await postgresForThisFile();
const suite = schema === null ? describe.skip : describe;
const root = tempDir();

/** A small seeded generator (mulberry32): the same seed, the same script. */
function prng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    chance: (p: number) => next() < p,
    int: (lo: number, hi: number) => lo + Math.floor(next() * (hi - lo + 1)),
    pick: <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)] as T,
  };
}

// Worker names and values as real systems write them: separators, quotes, escapes, non-ASCII.
const WORKERS = ['w-a', 'w "b" \\ é', 'w|c+日本'] as const;
const KEYS = ['k|a', 'k b é'] as const;
const KINDS: readonly ActorKind[] = ['model', 'tool', 'human'];
const RESULTS: readonly Json[] = [
  null,
  { ok: true },
  { n: 1.5, s: 'line\nbreak "quoted" \u2028 🧪', list: [1, null, { deep: [] }] },
  'plain',
  -0.25,
  [],
];

type Answer = { ok: true; value: unknown } | { ok: false; code: string };

async function answer<T>(p: Promise<T>): Promise<Answer> {
  try {
    return { ok: true, value: await p };
  } catch (err) {
    return { ok: false, code: (err as { code?: string }).code ?? String(err) };
  }
}

/** Outcomes compared by what a caller sees: the item, or the refusal's code (messages may word it apart). */
function outcomes(list: Array<Outcome<WorkItem>>): unknown[] {
  return list.map((o) => (o.ok ? o : { ok: false, code: o.error.code }));
}

/** Runs one generated script on `b`, returning every answer in order (the store's state is read after). */
async function runScript(b: StoreBackend, seed: number): Promise<Answer[]> {
  const r = prng(seed);
  const t0 = 1_800_000_000_000 + seed * 1_000_000;
  const ids = Array.from({ length: r.int(5, 9) }, (_, k) => `it|${seed}+${k} é`);
  const items: NewWorkItem[] = ids.map((id, k) => ({
    id,
    title: `item ${k}`,
    kind: r.pick([null, null, 'mail', 'job|ü']),
    // Some wait for a human: a resolve finishes them outside a lease (or is refused, for a run's question).
    status: r.chance(0.15) ? 'waiting_human' : 'pending',
    priority: r.int(0, 2),
    payload: { k },
    // A run's question (only a human answers it) or a document's decision (refused to any resolve).
    idempotency_key: r.pick([null, null, null, null, `run:parent|${k}#ask#q+${k}#1`, `doc:plan/p é#${k}`]),
    // Some wait for an earlier item: a failure then cancels them, or leaves them waiting.
    blocked_by: k > 0 && r.chance(0.5) ? [ids[r.int(0, k - 1)] as string] : [],
    not_before: null,
    max_attempts: r.int(1, 3),
    on_blocker_failure: r.pick(['wait', 'cascade'] as const),
    concurrency_key: r.pick([null, null, ...KEYS]),
    created_at: t0 + r.int(0, 2),
    actor: 'producer',
    actor_kind: 'tool',
  }));
  const log: Answer[] = [];
  // Limits on some scripts' keys: a cap on items in flight, a rate of claims per window, or both.
  if (r.chance(0.5)) {
    for (const key of KEYS) {
      if (r.chance(0.3)) continue;
      const limit = {
        max_in_flight: r.chance(0.7) ? r.int(1, 2) : null,
        rate: r.chance(0.5) ? { count: r.int(1, 3), period_ms: r.pick([1_500, 5_000]) } : null,
      };
      if (limit.max_in_flight === null && limit.rate === null) limit.max_in_flight = 1;
      log.push(await answer(b.limits.change({ key, limit, actor: 'ops', actor_kind: 'human', now: t0 })));
    }
  }
  log.push(await answer(b.work.enqueue(items)));
  for (let round = 1; round <= 7; round++) {
    const now = t0 + round * 1_000;
    // One or two claimers (coalesced calls), some with a lease short enough to expire by the next round.
    const claimers = Array.from({ length: r.int(1, 2) }, () => ({
      worker: r.pick(WORKERS),
      actor_kind: r.pick(KINDS),
      lease_ms: r.chance(0.2) ? 500 : 60_000,
      limit: r.int(1, 4),
    }));
    // Mostly any ready item; sometimes one kind, or one item by id.
    const kind = r.chance(0.2) ? r.pick(['mail', 'job|ü']) : null;
    const id = kind === null && r.chance(0.1) ? r.pick(ids) : null;
    log.push(await answer(b.work.claim({ claimers, kind, id, now })));
    const current = (await Promise.all(ids.map((id) => b.work.get(id)))).filter(
      (i): i is WorkItem => i !== null,
    );
    const held = current.filter((i) => i.status === 'in_flight');
    // Heartbeats for some leases: right, by the wrong worker, or of a stale attempt.
    if (held.length > 0 && r.chance(0.4)) {
      const beats = held
        .filter(() => r.chance(0.5))
        .map((i) => ({
          id: i.id,
          worker: r.chance(0.8) ? (i.lease_owner as string) : r.pick(WORKERS),
          attempt: r.pick([i.attempts, null, i.attempts - 1]),
          lease_ms: 60_000,
          now,
        }));
      // Two heartbeats of one item in one batch (a worker's timer and a caller at once) both extend it.
      if (beats.length > 0 && r.chance(0.3))
        beats.push({ ...(beats[0] as (typeof beats)[number]), lease_ms: 90_000 });
      if (beats.length > 0) log.push({ ok: true, value: outcomes(await b.work.heartbeat(beats)) });
    }
    // A batch of resolves. Clean (every entry holds its lease, succeeds, at one time: what PostgreSQL does in
    // one statement, with one actor kind or several), clean but for one entry (the statement matches fewer
    // and must leave everything as it was), or mixed: failures to retry or not, the wrong worker, a stale
    // attempt, items not held (refused, or a repeated resolve), entries a moment apart.
    const style = r.pick(['clean', 'clean', 'one-off', 'mixed', 'mixed'] as const);
    const oneKind = r.chance(0.5) ? r.pick(KINDS) : null;
    const qs: ResolveQuery[] = [];
    for (const i of current) {
      const isHeld = i.status === 'in_flight';
      const asks = i.status === 'waiting_human';
      if (style === 'mixed' ? !(isHeld ? r.chance(0.75) : r.chance(asks ? 0.6 : 0.15)) : !isHeld) continue;
      const failed = style === 'mixed' && r.chance(0.35);
      const wild = style === 'mixed';
      qs.push({
        id: i.id,
        worker: !wild || r.chance(0.85) ? (i.lease_owner ?? r.pick(WORKERS)) : r.pick(WORKERS),
        attempt: !wild || r.chance(0.8) ? r.pick([i.attempts, null]) : i.attempts - 1,
        actor_kind: oneKind ?? r.pick(KINDS),
        status: failed ? 'failed' : 'done',
        result: r.pick(RESULTS),
        error: failed || r.chance(0.2) ? r.pick(['boom', 'partly "wrong" \\ é', 'x|y+z']) : null,
        retry_at: failed && r.chance(0.6) ? now + 500 : null,
        now: wild && r.chance(0.15) ? now + 1 : now,
      });
    }
    if (style === 'one-off' && qs.length > 1) {
      const k = r.int(0, qs.length - 1);
      const q = qs[k] as ResolveQuery;
      qs[k] = r.pick([
        { ...q, worker: `${q.worker} (not the holder)` },
        { ...q, attempt: (q.attempt ?? 1) - 1 },
        { ...q, status: 'failed' as const, error: 'late failure', retry_at: now + 500 },
        { ...q, now: now + 1 },
      ]);
    }
    if (qs.length > 1 && r.chance(0.1)) qs.push({ ...(qs[0] as ResolveQuery) });
    // Callers' order, not the items' (answers and entries follow the calls).
    if (r.chance(0.5)) qs.reverse();
    if (qs.length > 0) {
      if (r.chance(0.5)) log.push({ ok: true, value: outcomes(await b.work.resolveEach(qs)) });
      else log.push(await answer(b.work.resolve(qs)));
    }
    // Failed and cancelled items tried again (their cancelled dependants reopen with them).
    const ended = (await Promise.all(ids.map((id) => b.work.get(id)))).filter(
      (i): i is WorkItem => i?.status === 'failed' || i?.status === 'cancelled',
    );
    if (ended.length > 0 && r.chance(0.4)) {
      const again = ended
        .filter(() => r.chance(0.6))
        .map((i) => ({
          id: i.id,
          reason: r.pick([null, 'try "again" é']),
          actor: r.pick(WORKERS),
          actor_kind: r.pick(KINDS),
          now,
        }));
      if (again.length > 0) log.push(await answer(b.work.retry(again)));
    }
    // Now and then an item given back.
    const stillHeld = (await Promise.all(ids.map((id) => b.work.get(id)))).filter(
      (i): i is WorkItem => i?.status === 'in_flight',
    );
    if (stillHeld.length > 0 && r.chance(0.3)) {
      const i = r.pick(stillHeld);
      log.push(
        await answer(
          b.work.release({
            id: i.id,
            worker: r.chance(0.85) ? (i.lease_owner as string) : r.pick(WORKERS),
            attempt: r.pick([i.attempts, null]),
            actor: r.pick(WORKERS),
            actor_kind: 'model',
            ...(r.chance(0.3) ? { not_before: now + 2_000 } : {}),
            now,
          }),
        ),
      );
    }
  }
  // A restart: expired leases swept, then every unfinished item replayed, in claim order.
  log.push(await answer(b.work.reclaimExpired(t0 + 60_000, 'restarter')));
  log.push(await answer(b.work.replayUnfinished(t0 + 60_001, 'restarter')));
  return log;
}

async function everything(b: StoreBackend): Promise<{ events: StoredEvent[] }> {
  return { events: await b.events.scan(0, 100_000) };
}

const seen = new Set<string>();
suite('the same work on both backends writes the same record', () => {
  // The scripts reach what they are for: batches of one actor kind and of several, failures, retries after
  // them, cascades, expired leases, limits, refusals (a human's question to anyone else among them), checked
  // after the last script.
  afterAll(() => {
    if (seen.size === 0) return; // only some scripts were selected (-t)
    expect([...seen].sort()).toEqual(
      expect.arrayContaining([
        '"code":"INVALID_TRANSITION"',
        '"code":"LEASE_LOST"',
        '"code":"PERMISSION_DENIED"',
        'failed',
        'kinds',
        'one kind',
        'work_item_cancelled',
        'work_item_reclaimed',
        'work_item_released',
        'work_item_resolved',
        'work_items_claimed',
        'work_items_resolved',
        'work_limit_set',
      ]),
    );
  });
  const seeds = Array.from({ length: 64 }, (_, k) => k + 1);
  it.each(seeds)('generated script %i: the same answers, items and events, byte for byte', async (seed) => {
    const sqlite = await openSqliteBackend({ path: join(root, `s${seed}.db`) });
    // Each seed its own PostgreSQL instance, as it has its own SQLite file.
    const pgSeed = await openPostgresBackend({
      url: PG_URL,
      schema: schema!,
      instance: `agree-${seed}`,
      poolSize: 4,
    });
    try {
      const [a, b] = [await runScript(sqlite, seed), await runScript(pgSeed, seed)];
      for (let k = 0; k < Math.max(a.length, b.length); k++)
        expect({ call: k, ...b[k] }).toEqual({ call: k, ...a[k] });
      const [sa, pa] = [await everything(sqlite), await everything(pgSeed)];
      expect(pa.events.length).toBe(sa.events.length);
      for (let k = 0; k < sa.events.length; k++) expect(pa.events[k]).toEqual(sa.events[k]);
      for (const e of sa.events) {
        seen.add(e.type);
        if (e.type === 'work_items_resolved')
          seen.add(e.data.startsWith('{"actor_kind"') ? 'one kind' : 'kinds');
        if (e.data.includes('"status":"failed"')) seen.add('failed');
      }
      for (const code of JSON.stringify(a).match(/"code":"[A-Z_]+"/g) ?? []) seen.add(code);
    } finally {
      await sqlite.close();
      await pgSeed.close();
    }
  });
});
