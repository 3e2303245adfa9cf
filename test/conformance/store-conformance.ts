// The store conformance suite: every backend must pass it unchanged (runStoreConformance(factory)).
import { describe, expect, it } from 'vitest';
import type { StoreBackend } from '../../src/core/backend.js';
import { DocumentStore } from '../../src/core/document-store.js';
import { EventLog } from '../../src/core/event-log.js';
import type { WorkItem } from '../../src/core/types.js';
import { WorkQueue } from '../../src/core/work-queue.js';
import { isAgentStateError } from '../../src/errors.js';
import { getKind, validateSchema } from '../../src/kinds/registry.js';

/** Creates a fresh, empty, migrated backend for one test. */
export type StoreFactory = () => Promise<StoreBackend>;

const T0 = Date.parse('2026-01-01T00:00:00.000Z');

interface Ctx {
  backend: StoreBackend;
  work: WorkQueue;
  events: EventLog;
  docs: DocumentStore;
  /** A document store over the same backend that keeps only the newest `keep` versions. */
  docsKeeping(keep: number): DocumentStore;
  /** Moves the fake clock forward. */
  advance(ms: number): void;
  now(): number;
}

async function setup(factory: StoreFactory): Promise<Ctx> {
  const backend = await factory();
  let t = T0;
  const clock = () => t;
  const kinds = async () => ({ get: getKind, validateSchema });
  const docsKeeping = (keep: number | null) =>
    new DocumentStore(backend, { clock, actor: 'agent', keepVersions: keep, kinds });
  return {
    backend,
    docs: docsKeeping(null),
    docsKeeping,
    work: new WorkQueue(backend, { clock, defaultWorker: 'agent' }),
    events: new EventLog(backend, clock, 'agent'),
    advance: (ms) => {
      t += ms;
    },
    now: () => t,
  };
}

/** Runs `fn` with a fresh store, checks that it still verifies, and closes it. */
function withStore(factory: StoreFactory, fn: (c: Ctx) => Promise<void>): () => Promise<void> {
  return async () => {
    const c = await setup(factory);
    try {
      await fn(c);
      // Whatever the test did through the API, the rows still agree with the log (verify's cross-checks
      // must never flag honest activity).
      const v = await c.events.verify();
      expect(v.problems).toEqual([]);
      expect(v.ok).toBe(true);
    } finally {
      await c.backend.close();
    }
  };
}

async function expectCode(p: Promise<unknown>, code: string): Promise<Record<string, unknown>> {
  try {
    await p;
  } catch (err) {
    expect(isAgentStateError(err), `expected an AgentStateError, got ${String(err)}`).toBe(true);
    expect((err as { code: string }).code).toBe(code);
    return (err as { details: Record<string, unknown> }).details;
  }
  throw new Error(`expected ${code}, but the call succeeded`);
}

async function eventCount(c: Ctx): Promise<number> {
  return (await c.events.head())?.position ?? 0;
}

async function typesOf(c: Ctx, id: string): Promise<string[]> {
  return (await c.events.read({ work_item_id: id })).map((e) => e.type);
}

export function runStoreConformance(name: string, factory: StoreFactory): void {
  const t = (title: string, fn: (c: Ctx) => Promise<void>) => it(title, withStore(factory, fn));

  describe(`${name}: enqueue`, () => {
    t('returns a pending item with defaults and appends work_item_enqueued', async (c) => {
      const item = await c.work.enqueue({ title: 'write tests' });
      expect(item).toMatchObject({
        title: 'write tests',
        kind: null,
        status: 'pending',
        priority: 0,
        payload: null,
        notes: {},
        result: null,
        error: null,
        attempts: 0,
        max_attempts: 3,
        lease_owner: null,
        lease_expires_at: null,
        blocked_by: [],
        created_at: new Date(T0).toISOString(),
      });
      expect(item.id).toMatch(/^wi_[0-9A-Z]{26}$/);
      expect(await typesOf(c, item.id)).toEqual(['work_item_enqueued']);
    });

    t('keeps payload, kind, priority, max_attempts, not_before', async (c) => {
      const item = await c.work.enqueue({
        title: 'x',
        kind: 'build',
        payload: { a: [1, 'two', null], b: { c: true } },
        priority: 7,
        max_attempts: 5,
        not_before: '2026-01-02T00:00:00.000Z',
      });
      const got = await c.work.get(item.id);
      expect(got).toMatchObject({
        kind: 'build',
        payload: { a: [1, 'two', null], b: { c: true } },
        priority: 7,
        max_attempts: 5,
        not_before: '2026-01-02T00:00:00.000Z',
      });
    });

    t(
      'a retried enqueue with the same idempotency_key returns the existing item and writes nothing',
      async (c) => {
        const a = await c.work.enqueue({ title: 'once', idempotency_key: 'k-1' });
        const before = await eventCount(c);
        const b = await c.work.enqueue({ title: 'twice', idempotency_key: 'k-1' });
        expect(b.id).toBe(a.id);
        expect(b.title).toBe('once');
        expect(await eventCount(c)).toBe(before);
        expect((await c.work.list()).length).toBe(1);
      },
    );

    t('enqueueMany is all-or-nothing', async (c) => {
      const ok = await c.work.enqueue({ title: 'ok' });
      await expectCode(
        c.work.enqueueMany([{ title: 'a' }, { title: 'b', blocked_by: [ok.id, 'wi_nope'] }]),
        'INVALID_INPUT',
      );
      expect((await c.work.list()).map((i) => i.title)).toEqual(['ok']);
      expect(await eventCount(c)).toBe(1);
    });

    t('blocked_by must name existing items', async (c) => {
      const details = await expectCode(
        c.work.enqueue({ title: 'x', blocked_by: ['wi_missing'] }),
        'INVALID_INPUT',
      );
      expect(details.field).toBe('blocked_by');
      expect(await eventCount(c)).toBe(0);
    });

    t('bad input is refused with INVALID_INPUT and writes nothing', async (c) => {
      const bad: unknown[] = [
        {},
        { title: '' },
        { title: '   ' },
        { title: 5 },
        { title: 'x', priority: 1.5 },
        { title: 'x', priority: '1' },
        { title: 'x', unknown_field: 1 },
        { title: 'x', blocked_by: 'wi_1' },
        { title: 'x', not_before: 'tomorrow' },
        { title: 'x', max_attempts: 0 },
        { title: 'x'.repeat(1001) },
        { title: 'x', payload: { big: 'y'.repeat(1024 * 1024 + 1) } },
        null,
        [],
      ];
      for (const input of bad) {
        await expectCode(c.work.enqueue(input as never), 'INVALID_INPUT');
      }
      expect(await eventCount(c)).toBe(0);
      expect(await c.work.list()).toEqual([]);
    });
  });

  describe(`${name}: claim`, () => {
    t('claims the highest priority first, then the oldest', async (c) => {
      const low = await c.work.enqueue({ title: 'low', priority: -1 });
      c.advance(1);
      const old = await c.work.enqueue({ title: 'old' });
      c.advance(1);
      const high = await c.work.enqueue({ title: 'high', priority: 5 });
      c.advance(1);
      const young = await c.work.enqueue({ title: 'young' });
      const order: string[] = [];
      for (;;) {
        const item = await c.work.claim({ worker: 'w' });
        if (!item) break;
        order.push(item.id);
      }
      expect(order).toEqual([high.id, old.id, young.id, low.id]);
    });

    t(
      'a claim sets in_flight, lease owner and expiry, attempts + 1, and appends work_item_claimed',
      async (c) => {
        const item = await c.work.enqueue({ title: 'x' });
        c.advance(10);
        const claimed = await c.work.claim({ worker: 'w1', lease_ms: 5000 });
        expect(claimed).toMatchObject({
          id: item.id,
          status: 'in_flight',
          lease_owner: 'w1',
          attempts: 1,
          lease_expires_at: new Date(c.now() + 5000).toISOString(),
          claimed_at: new Date(c.now()).toISOString(),
        });
        const events = await c.events.read({ work_item_id: item.id });
        expect(events.map((e) => e.type)).toEqual(['work_item_enqueued', 'work_item_claimed']);
        expect(events[1]!.data).toMatchObject({ worker: 'w1', attempt: 1 });
      },
    );

    t('returns null when nothing is ready, and writes nothing', async (c) => {
      expect(await c.work.claim()).toBeNull();
      expect(await eventCount(c)).toBe(0);
    });

    t('an item is ready only once every blocker is done', async (c) => {
      const a = await c.work.enqueue({ title: 'a' });
      const b = await c.work.enqueue({ title: 'b' });
      const d = await c.work.enqueue({ title: 'd', blocked_by: [a.id, b.id], priority: 100 });
      expect((await c.work.claim({ worker: 'w' }))?.id).toBe(a.id);
      await c.work.resolve({ id: a.id, status: 'done', worker: 'w' });
      expect((await c.work.list({ ready: false })).map((i) => i.id)).toEqual([d.id]);
      expect((await c.work.claim({ worker: 'w' }))?.id).toBe(b.id);
      await c.work.resolve({ id: b.id, status: 'failed', worker: 'w', error: 'boom' });
      // A failed blocker keeps the dependent blocked.
      expect(await c.work.claim({ worker: 'w' })).toBeNull();
      expect((await c.work.get(d.id)).status).toBe('pending');
    });

    t('not_before holds an item back until its time', async (c) => {
      const later = new Date(T0 + 60_000).toISOString();
      const item = await c.work.enqueue({ title: 'later', not_before: later });
      expect(await c.work.claim()).toBeNull();
      c.advance(60_000);
      expect((await c.work.claim())?.id).toBe(item.id);
    });

    t('filters by kind and by id', async (c) => {
      const a = await c.work.enqueue({ title: 'a', kind: 'x', priority: 9 });
      const b = await c.work.enqueue({ title: 'b', kind: 'y' });
      const d = await c.work.enqueue({ title: 'd', kind: 'y' });
      expect((await c.work.claim({ kind: 'y' }))?.id).toBe(b.id);
      expect((await c.work.claim({ id: d.id }))?.id).toBe(d.id);
      expect(await c.work.claim({ id: d.id })).toBeNull();
      expect(await c.work.claim({ kind: 'z' })).toBeNull();
      expect((await c.work.claim())?.id).toBe(a.id);
    });

    t('claimMany claims up to limit in claim order', async (c) => {
      for (let i = 0; i < 5; i++) await c.work.enqueue({ title: `t${i}`, priority: i });
      const got = await c.work.claimMany({ worker: 'w', limit: 3 });
      expect(got.map((i) => i.title)).toEqual(['t4', 't3', 't2']);
      expect(got.every((i) => i.status === 'in_flight' && i.lease_owner === 'w')).toBe(true);
      expect((await c.work.counts()).pending).toBe(2);
    });
  });

  describe(`${name}: leases`, () => {
    t('heartbeat extends the lease; another worker gets LEASE_LOST', async (c) => {
      const item = await c.work.enqueue({ title: 'x' });
      await c.work.claim({ worker: 'w1', lease_ms: 1000 });
      c.advance(900);
      const hb = await c.work.heartbeat({ id: item.id, worker: 'w1', lease_ms: 1000 });
      expect(hb.lease_expires_at).toBe(new Date(c.now() + 1000).toISOString());
      c.advance(900);
      // Without the heartbeat this claim would have reclaimed it.
      expect(await c.work.claim({ worker: 'w2' })).toBeNull();
      await expectCode(c.work.heartbeat({ id: item.id, worker: 'w2' }), 'LEASE_LOST');
    });

    t(
      'an expired lease is reclaimed by the next claim, with work_item_reclaimed, and the old owner gets LEASE_LOST',
      async (c) => {
        const item = await c.work.enqueue({ title: 'x' });
        const first = await c.work.claim({ worker: 'w1', lease_ms: 1000 });
        c.advance(1000);
        await expectCode(c.work.heartbeat({ id: item.id, worker: 'w1' }), 'LEASE_LOST');
        const second = await c.work.claim({ worker: 'w2', lease_ms: 1000 });
        expect(second).toMatchObject({ id: item.id, attempts: 2, lease_owner: 'w2' });
        expect(await typesOf(c, item.id)).toEqual([
          'work_item_enqueued',
          'work_item_claimed',
          'work_item_reclaimed',
          'work_item_claimed',
        ]);
        await expectCode(
          c.work.resolve({ id: item.id, worker: 'w1', attempt: first!.attempts, status: 'done' }),
          'LEASE_LOST',
        );
        expect((await c.work.get(item.id)).status).toBe('in_flight');
        await c.work.resolve({ id: item.id, worker: 'w2', status: 'done' });
      },
    );

    t(
      'a late resolve after another worker finished the item is LEASE_LOST, not a silent success',
      async (c) => {
        const item = await c.work.enqueue({ title: 'x', max_attempts: 1 });
        const mine = await c.work.claim({ worker: 'w1', lease_ms: 100 });
        c.advance(100);
        expect((await c.work.reclaimExpired()).map((i) => i.status)).toEqual(['failed']);
        // The reclaimed item no longer names the old owner.
        expect((await c.work.get(item.id)).lease_owner).toBeNull();
        await expectCode(
          c.work.resolve({ id: item.id, worker: 'w1', attempt: mine!.attempts, status: 'failed' }),
          'LEASE_LOST',
        );
        const other = await c.work.enqueue({ title: 'y' });
        await c.work.claim({ worker: 'w1', lease_ms: 100 });
        c.advance(100);
        await c.work.claim({ worker: 'w2' });
        await c.work.resolve({ id: other.id, worker: 'w2', status: 'done' });
        await expectCode(c.work.resolve({ id: other.id, worker: 'w1', status: 'done' }), 'LEASE_LOST');
        const reclaimed = await c.events.read({ work_item_id: other.id, type: 'work_item_reclaimed' });
        expect(reclaimed[0]!.data).toMatchObject({ previous_owner: 'w1', status: 'pending' });
      },
    );

    t('a resolve after the lease expired (not yet reclaimed) is LEASE_LOST', async (c) => {
      const item = await c.work.enqueue({ title: 'x' });
      await c.work.claim({ worker: 'w1', lease_ms: 1000 });
      c.advance(1001);
      await expectCode(c.work.resolve({ id: item.id, worker: 'w1', status: 'done' }), 'LEASE_LOST');
    });

    t('the attempt number fences a worker that re-claimed under the same name', async (c) => {
      const item = await c.work.enqueue({ title: 'x' });
      const a1 = await c.work.claim({ worker: 'w', lease_ms: 1000 });
      c.advance(1000);
      const a2 = await c.work.claim({ worker: 'w', lease_ms: 1000 });
      expect(a2!.attempts).toBe(2);
      await expectCode(
        c.work.resolve({ id: item.id, worker: 'w', attempt: a1!.attempts, status: 'done' }),
        'LEASE_LOST',
      );
      await c.work.resolve({ id: item.id, worker: 'w', attempt: a2!.attempts, status: 'done' });
    });

    t('once max_attempts are spent an expiring lease fails the item', async (c) => {
      const item = await c.work.enqueue({ title: 'x', max_attempts: 2 });
      await c.work.claim({ worker: 'w', lease_ms: 10 });
      c.advance(10);
      await c.work.claim({ worker: 'w', lease_ms: 10 });
      c.advance(10);
      const reclaimed = await c.work.reclaimExpired();
      expect(reclaimed.map((i) => i.id)).toEqual([item.id]);
      const got = await c.work.get(item.id);
      expect(got).toMatchObject({ status: 'failed', attempts: 2 });
      expect(got.error).toMatch(/lease expired/);
      expect(await c.work.claim()).toBeNull();
    });

    t(
      'release hands the item back without spending the attempt, and never reuses an attempt number',
      async (c) => {
        const item = await c.work.enqueue({ title: 'x' });
        const first = await c.work.claim({ worker: 'w1' });
        const released = await c.work.release({ id: item.id, worker: 'w1' });
        expect(released).toMatchObject({
          status: 'pending',
          lease_owner: null,
          lease_expires_at: null,
          max_attempts: 4,
        });
        const second = await c.work.claim({ worker: 'w1' });
        expect(second!.attempts).toBe(first!.attempts + 1);
        // The holder of the released attempt cannot act on the new claim, even under the same name.
        await expectCode(
          c.work.resolve({ id: item.id, worker: 'w1', attempt: first!.attempts, status: 'done' }),
          'LEASE_LOST',
        );
        await expectCode(c.work.release({ id: item.id, worker: 'w2' }), 'LEASE_LOST');
      },
    );
  });

  describe(`${name}: resolve and other transitions`, () => {
    t('resolve done stores the result and appends work_item_resolved', async (c) => {
      const item = await c.work.enqueue({ title: 'x' });
      await c.work.claim({ worker: 'w' });
      c.advance(250);
      const done = await c.work.resolve({ id: item.id, worker: 'w', status: 'done', result: { files: 3 } });
      expect(done).toMatchObject({ status: 'done', result: { files: 3 }, lease_expires_at: null });
      expect(done.resolved_at).toBe(new Date(c.now()).toISOString());
      const [ev] = await c.events.read({ work_item_id: item.id, type: 'work_item_resolved' });
      expect(ev!.data).toMatchObject({ status: 'done', worker: 'w', attempt: 1, duration_ms: 250 });
    });

    t('resolve failed stores the error', async (c) => {
      const item = await c.work.enqueue({ title: 'x' });
      await c.work.claim({ worker: 'w' });
      expect(
        await c.work.resolve({ id: item.id, worker: 'w', status: 'failed', error: 'disk full' }),
      ).toMatchObject({
        status: 'failed',
        error: 'disk full',
      });
    });

    t('a repeated resolve by the same worker returns the item without a second event', async (c) => {
      const item = await c.work.enqueue({ title: 'x' });
      await c.work.claim({ worker: 'w' });
      await c.work.resolve({ id: item.id, worker: 'w', status: 'done' });
      const n = await eventCount(c);
      expect((await c.work.resolve({ id: item.id, worker: 'w', status: 'done' })).status).toBe('done');
      expect(await eventCount(c)).toBe(n);
      await expectCode(c.work.resolve({ id: item.id, worker: 'w', status: 'failed' }), 'INVALID_TRANSITION');
      // Someone who never held (or no longer holds) the lease is told so.
      await expectCode(c.work.resolve({ id: item.id, worker: 'other', status: 'done' }), 'LEASE_LOST');
    });

    t('resolving a pending item or an unknown id fails', async (c) => {
      const item = await c.work.enqueue({ title: 'x' });
      await expectCode(c.work.resolve({ id: item.id, status: 'done' }), 'INVALID_TRANSITION');
      await expectCode(c.work.resolve({ id: 'wi_nope', status: 'done' }), 'NOT_FOUND');
      await expectCode(c.work.resolve({ id: item.id, status: 'maybe' as 'done' }), 'INVALID_INPUT');
      expect((await c.work.get(item.id)).status).toBe('pending');
    });

    t('resolveMany finishes a claimed batch in one transaction, one event per item, in order', async (c) => {
      await c.work.enqueueMany([{ title: 'a' }, { title: 'b' }, { title: 'c' }]);
      const held = await c.work.claimMany({ worker: 'w', limit: 3 });
      const parked = await c.work.enqueue({ title: 'needs a human', waiting_human: true });
      const before = await eventCount(c);
      const out = await c.work.resolveMany([
        { id: held[2]!.id, worker: 'w', status: 'done', result: { n: 3 }, attempt: held[2]!.attempts },
        { id: held[0]!.id, worker: 'w', status: 'failed', error: 'boom' },
        { id: parked.id, worker: 'human', status: 'done' },
        { id: held[1]!.id, worker: 'w', status: 'done' },
      ]);
      expect(out.map((i) => [i.id, i.status])).toEqual([
        [held[2]!.id, 'done'],
        [held[0]!.id, 'failed'],
        [parked.id, 'done'],
        [held[1]!.id, 'done'],
      ]);
      expect(out[0]!.result).toEqual({ n: 3 });
      const events = await c.events.read({ after: before, limit: 100 });
      expect(events.map((e) => [e.type, e.work_item_id])).toEqual(
        out.map((i) => ['work_item_resolved', i.id]),
      );
      expect((await c.events.verify()).ok).toBe(true);
      // Repeated by the same worker: the same items back, nothing written.
      const again = await c.work.resolveMany([{ id: held[1]!.id, worker: 'w', status: 'done' }]);
      expect(again[0]!.status).toBe('done');
      expect(await eventCount(c)).toBe(before + 4);
      expect(await c.work.resolveMany([])).toEqual([]);
    });

    t('resolveMany writes nothing when any one resolve is refused', async (c) => {
      await c.work.enqueueMany([{ title: 'a' }, { title: 'b' }, { title: 'c' }]);
      const mine = await c.work.claimMany({ worker: 'w', limit: 2 });
      const theirs = (await c.work.claim({ worker: 'other' }))!;
      const before = await eventCount(c);
      const ok = mine.map((i) => ({ id: i.id, worker: 'w', status: 'done' as const }));
      await expectCode(
        c.work.resolveMany([...ok, { id: theirs.id, worker: 'w', status: 'done' }]),
        'LEASE_LOST',
      );
      await expectCode(
        c.work.resolveMany([...ok, { id: 'wi_nope', worker: 'w', status: 'done' }]),
        'NOT_FOUND',
      );
      await expectCode(c.work.resolveMany([ok[0]!, ok[0]!]), 'INVALID_INPUT');
      await expectCode(
        c.work.resolveMany([ok[0]!, { id: mine[1]!.id, worker: 'w', status: 'maybe' as 'done' }]),
        'INVALID_INPUT',
      );
      expect(await eventCount(c)).toBe(before);
      for (const i of mine) expect((await c.work.get(i.id)).status).toBe('in_flight');
      expect((await c.work.resolveMany(ok)).map((i) => i.status)).toEqual(['done', 'done']);
    });

    t('cancel, park and unpark follow the transition table', async (c) => {
      const a = await c.work.enqueue({ title: 'a' });
      expect((await c.work.park({ id: a.id, reason: 'needs a decision' })).status).toBe('waiting_human');
      expect(await c.work.claim()).toBeNull();
      expect((await c.work.unpark({ id: a.id })).status).toBe('pending');
      expect((await c.work.cancel({ id: a.id, reason: 'obsolete' })).status).toBe('cancelled');
      await expectCode(c.work.cancel({ id: a.id }), 'INVALID_TRANSITION');
      await expectCode(c.work.unpark({ id: a.id }), 'INVALID_TRANSITION');
      expect(await typesOf(c, a.id)).toEqual([
        'work_item_enqueued',
        'work_item_parked',
        'work_item_unparked',
        'work_item_cancelled',
      ]);
    });

    t('an item waiting for a human is resolved without a lease', async (c) => {
      const a = await c.work.enqueue({ title: 'approve?', waiting_human: true });
      expect(a.status).toBe('waiting_human');
      expect(await c.work.claim()).toBeNull();
      const done = await c.work.resolve({
        id: a.id,
        status: 'done',
        worker: 'human',
        result: { approved: true },
      });
      expect(done).toMatchObject({ status: 'done', result: { approved: true } });
    });

    t('terminal items accept no transition', async (c) => {
      const ids: Record<string, WorkItem> = {};
      for (const s of ['done', 'failed'] as const) {
        const i = await c.work.enqueue({ title: s });
        await c.work.claim({ id: i.id, worker: 'w' });
        ids[s] = await c.work.resolve({ id: i.id, worker: 'w', status: s });
      }
      const cancelled = await c.work.cancel({ id: (await c.work.enqueue({ title: 'c' })).id });
      for (const item of [ids.done!, ids.failed!, cancelled]) {
        await expectCode(c.work.cancel({ id: item.id }), 'INVALID_TRANSITION');
        await expectCode(c.work.park({ id: item.id }), 'INVALID_TRANSITION');
        await expectCode(c.work.unpark({ id: item.id }), 'INVALID_TRANSITION');
        await expectCode(c.work.heartbeat({ id: item.id, worker: 'w' }), 'INVALID_TRANSITION');
        expect(await c.work.claim({ id: item.id })).toBeNull();
      }
    });
  });

  describe(`${name}: annotate, get, list, replay`, () => {
    t('annotate merges notes atomically (null removes a key) and appends work_item_annotated', async (c) => {
      const item = await c.work.enqueue({ title: 'x' });
      await c.work.annotate({ id: item.id, notes: { session_id: 's1', pr: 12 } });
      const got = await c.work.annotate({ id: item.id, notes: { pr: null, host: 'h' } });
      expect(got.notes).toEqual({ session_id: 's1', host: 'h' });
      expect(await typesOf(c, item.id)).toEqual([
        'work_item_enqueued',
        'work_item_annotated',
        'work_item_annotated',
      ]);
      await expectCode(c.work.annotate({ id: 'wi_nope', notes: {} }), 'NOT_FOUND');
      await expectCode(c.work.annotate({ id: item.id, notes: [] as never }), 'INVALID_INPUT');
    });

    t('annotate with a worker is fenced by the lease', async (c) => {
      const item = await c.work.enqueue({ title: 'x' });
      await c.work.claim({ worker: 'w1' });
      await c.work.annotate({ id: item.id, notes: { step: 1 }, worker: 'w1' });
      await expectCode(c.work.annotate({ id: item.id, notes: { step: 2 }, worker: 'w2' }), 'LEASE_LOST');
      expect((await c.work.get(item.id)).notes).toEqual({ step: 1 });
    });

    t('get of an unknown id is NOT_FOUND; find returns null', async (c) => {
      await expectCode(c.work.get('wi_nope'), 'NOT_FOUND');
      expect(await c.work.find('wi_nope')).toBeNull();
    });

    t('list filters by status, kind, readiness; counts by status', async (c) => {
      const a = await c.work.enqueue({ title: 'a', kind: 'k' });
      await c.work.enqueue({ title: 'b', blocked_by: [a.id] });
      await c.work.enqueue({ title: 'c' });
      await c.work.claim({ id: a.id, worker: 'w' });
      expect((await c.work.list({ status: 'in_flight' })).map((i) => i.title)).toEqual(['a']);
      expect((await c.work.list({ kind: 'k' })).map((i) => i.title)).toEqual(['a']);
      expect((await c.work.list({ ready: true })).map((i) => i.title)).toEqual(['c']);
      expect((await c.work.list({ ready: false })).map((i) => i.title)).toEqual(['b']);
      expect((await c.work.list({ status: ['pending', 'in_flight'], limit: 2 })).length).toBe(2);
      expect(await c.work.counts()).toEqual({
        pending: 2,
        in_flight: 1,
        waiting_human: 0,
        done: 0,
        failed: 0,
        cancelled: 0,
      });
      await expectCode(c.work.list({ status: 'bogus' as never }), 'INVALID_INPUT');
    });

    t('replayPending reclaims expired leases and re-emits every unfinished item', async (c) => {
      const a = await c.work.enqueue({ title: 'a' });
      const b = await c.work.enqueue({ title: 'b' });
      const d = await c.work.enqueue({ title: 'd', waiting_human: true });
      const e = await c.work.enqueue({ title: 'e' });
      await c.work.claim({ id: a.id, worker: 'w', lease_ms: 100 });
      await c.work.claim({ id: e.id, worker: 'w', lease_ms: 100 });
      await c.work.resolve({ id: e.id, worker: 'w', status: 'done' });
      c.advance(100);
      const replayed = await c.work.replayPending();
      expect(replayed.map((i) => [i.id, i.status]).sort()).toEqual(
        [
          [a.id, 'pending'],
          [b.id, 'pending'],
          [d.id, 'waiting_human'],
        ].sort(),
      );
      expect(await typesOf(c, a.id)).toContain('work_item_reclaimed');
      expect((await c.events.read({ type: 'work_item_replayed' })).length).toBe(3);
    });
  });

  describe(`${name}: events`, () => {
    t('positions are gapless, stream sequences per stream, the chain verifies', async (c) => {
      const e1 = await c.events.append({ type: 'note', data: { n: 1 } });
      const e2 = await c.events.append({ type: 'note', stream: 'other', data: { n: 2 } });
      const e3 = await c.events.append({
        type: 'tool.called',
        data: null,
        actor: 'bot',
        correlation_id: 'c1',
      });
      expect([e1.position, e2.position, e3.position]).toEqual([1, 2, 3]);
      expect([e1.stream, e1.stream_seq, e2.stream, e2.stream_seq, e3.stream_seq]).toEqual([
        'instance',
        1,
        'other',
        1,
        2,
      ]);
      expect(e2.prev_hash).toBe(e1.hash);
      expect(e3).toMatchObject({ actor: 'bot', correlation_id: 'c1', data: null });
      expect(await c.events.verify()).toMatchObject({
        ok: true,
        events: 3,
        head: e3.hash,
        anchor: `3:${e3.hash}`,
      });
    });

    t('appendMany writes a batch in order', async (c) => {
      const batch = await c.events.appendMany(
        Array.from({ length: 500 }, (_, i) => ({ type: 'tick', data: { i } })),
      );
      expect(batch.map((e) => e.position)).toEqual(Array.from({ length: 500 }, (_, i) => i + 1));
      expect((await c.events.read({ after: 499 }))[0]!.data).toEqual({ i: 499 });
      expect((await c.events.verify()).ok).toBe(true);
    });

    t('read by position range, stream, type, work item and time window', async (c) => {
      const item = await c.work.enqueue({ title: 'x' });
      await c.events.append({ type: 'a' });
      c.advance(1000);
      await c.events.append({ type: 'b', stream: 's' });
      await c.events.append({ type: 'c', work_item_id: item.id });
      expect((await c.events.read({ after: 1, until: 2 })).map((e) => e.type)).toEqual(['a']);
      expect((await c.events.read({ stream: 's' })).map((e) => e.type)).toEqual(['b']);
      expect((await c.events.read({ type: ['a', 'c'] })).map((e) => e.type)).toEqual(['a', 'c']);
      expect((await c.events.read({ work_item_id: item.id })).map((e) => e.type)).toEqual([
        'work_item_enqueued',
        'c',
      ]);
      expect((await c.events.read({ work_item_id: item.id }))[1]!.stream).toBe(`work_item:${item.id}`);
      expect((await c.events.read({ since: new Date(T0 + 500).toISOString() })).map((e) => e.type)).toEqual([
        'b',
        'c',
      ]);
      expect((await c.events.read({ before: new Date(T0 + 500).toISOString() })).length).toBe(2);
      expect((await c.events.read({ reverse: true, limit: 1 }))[0]!.type).toBe('c');
    });

    t('system event types, bad names and unknown work items are refused', async (c) => {
      await expectCode(c.events.append({ type: 'work_item_claimed' }), 'INVALID_INPUT');
      await expectCode(c.events.append({ type: '' }), 'INVALID_INPUT');
      await expectCode(c.events.append({ type: 'has space' }), 'INVALID_INPUT');
      await expectCode(c.events.append({ type: 'ok', stream: '../x' }), 'INVALID_INPUT');
      // Document streams are written only by document commits.
      await expectCode(c.events.append({ type: 'state_committed', stream: 'doc:json/x' }), 'INVALID_INPUT');
      await expectCode(c.events.append({ type: 'note', stream: 'doc:json/x' }), 'INVALID_INPUT');
      await expectCode(c.events.append({ type: 'ok', extra: 1 } as never), 'INVALID_INPUT');
      await expectCode(c.events.append({ type: 'ok', work_item_id: 'wi_nope' }), 'NOT_FOUND');
      expect(await eventCount(c)).toBe(0);
    });

    t('tail yields existing and then new events, each once, in order', async (c) => {
      await c.events.append({ type: 'before' });
      const ac = new AbortController();
      const seen: number[] = [];
      const done = (async () => {
        for await (const e of c.events.tail({ pollMs: 5, signal: ac.signal })) {
          seen.push(e.position);
          if (seen.length === 30) ac.abort();
        }
      })();
      for (let i = 0; i < 29; i++) {
        await c.events.append({ type: 'live', data: { i } });
        if (i % 7 === 0) await new Promise((r) => setTimeout(r, 10));
      }
      await done;
      expect(seen).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
    });
  });

  describe(`${name}: versioned documents`, () => {
    const doc = { kind: 'json', id: 'plan' };

    t(
      'create needs expected_version 0; a second create is STATE_CONFLICT with expected and actual',
      async (c) => {
        const r = await c.docs.commit({ ...doc, expected_version: 0, body: { steps: [] } });
        expect(r).toMatchObject({
          version: 1,
          previous_version: 0,
          changed: true,
          noop: false,
          replayed: false,
        });
        const details = await expectCode(
          c.docs.commit({ ...doc, expected_version: 0, body: { other: 1 } }),
          'STATE_CONFLICT',
        );
        expect(details).toMatchObject({ expected: 0, actual: 1 });
        expect((await c.docs.get(doc)).body).toEqual({ steps: [] });
      },
    );

    t('a stale commit is STATE_CONFLICT and writes nothing (no history, no event)', async (c) => {
      await c.docs.commit({ ...doc, expected_version: 0, body: { n: 1 } });
      await c.docs.commit({ ...doc, expected_version: 1, body: { n: 2 } });
      const events = await eventCount(c);
      const details = await expectCode(
        c.docs.commit({ ...doc, expected_version: 1, body: { n: 99 } }),
        'STATE_CONFLICT',
      );
      expect(details).toMatchObject({ expected: 1, actual: 2 });
      await expectCode(c.docs.commit({ ...doc, expected_version: 5, body: { n: 99 } }), 'STATE_CONFLICT');
      expect(await eventCount(c)).toBe(events);
      expect((await c.docs.history(doc)).entries.length).toBe(2);
      expect((await c.docs.get(doc)).body).toEqual({ n: 2 });
    });

    t('a store that remembers an older version still conflicts, then patches the newest body', async (c) => {
      // Two stores over one backend: each remembers only its own last commit.
      const other = c.docsKeeping(1_000_000);
      await c.docs.commit({ ...doc, expected_version: 0, body: { a: 1, tags: ['x'] } });
      await other.commit({ ...doc, expected_version: 1, merge_patch: { b: 2 } });
      const details = await expectCode(
        c.docs.commit({ ...doc, expected_version: 1, merge_patch: { a: 9 } }),
        'STATE_CONFLICT',
      );
      expect(details).toMatchObject({ expected: 1, actual: 2 });
      const r = await c.docs.commit({ ...doc, expected_version: 2, merge_patch: { a: 3 } });
      expect(r.body).toEqual({ a: 3, b: 2, tags: ['x'] });
      expect((await c.docs.history(doc)).entries.map((e) => e.version)).toEqual([1, 2, 3]);
    });

    t(
      'changing a returned or passed body afterwards never changes what the next commit builds on',
      async (c) => {
        const body = { a: 1, list: [1, 2] };
        const r1 = await c.docs.commit({ ...doc, expected_version: 0, body });
        body.list.push(3);
        r1.body.a = 'mutated';
        (r1.body.list as number[]).push(4);
        const r2 = await c.docs.commit({ ...doc, expected_version: 1, merge_patch: { b: true } });
        expect(r2.body).toEqual({ a: 1, list: [1, 2], b: true });
        (r2.body.list as number[]).length = 0;
        const r3 = await c.docs.commit({
          ...doc,
          expected_version: 2,
          json_patch: [{ op: 'add', path: '/c', value: 1 }],
        });
        expect(r3.body).toEqual({ a: 1, list: [1, 2], b: true, c: 1 });
        expect((await c.docs.get(doc)).body).toEqual(r3.body);
        const same = await c.docs.commit({ ...doc, expected_version: 3, merge_patch: { c: 1 } });
        expect(same.changed).toBe(false);
        same.body.c = 'mutated';
        const r4 = await c.docs.commit({ ...doc, expected_version: 3, merge_patch: { d: 1 } });
        expect(r4.body).toEqual({ a: 1, list: [1, 2], b: true, c: 1, d: 1 });
      },
    );

    t('body, merge_patch and json_patch each yield expected_version + 1', async (c) => {
      await c.docs.commit({ ...doc, expected_version: 0, body: { a: 1, b: { c: 2 } } });
      const m = await c.docs.commit({
        ...doc,
        expected_version: 1,
        merge_patch: { b: { c: null, d: 3 }, e: [1] },
      });
      expect(m).toMatchObject({ version: 2, body: { a: 1, b: { d: 3 }, e: [1] } });
      const j = await c.docs.commit({
        ...doc,
        expected_version: 2,
        json_patch: [
          { op: 'replace', path: '/a', value: 10 },
          { op: 'add', path: '/e/-', value: 2 },
        ],
      });
      expect(j).toMatchObject({ version: 3, body: { a: 10, b: { d: 3 }, e: [1, 2] } });
      await expectCode(
        c.docs.commit({ ...doc, expected_version: 3, json_patch: [{ op: 'test', path: '/a', value: 1 }] }),
        'STATE_CONFLICT',
      );
      await expectCode(
        c.docs.commit({ ...doc, expected_version: 3, json_patch: [{ op: 'bogus', path: '/a' }] as never }),
        'INVALID_INPUT',
      );
      await expectCode(
        c.docs.commit({ ...doc, expected_version: 3, body: {}, merge_patch: {} }),
        'INVALID_INPUT',
      );
      await expectCode(c.docs.commit({ ...doc, expected_version: 3 }), 'INVALID_INPUT');
      expect((await c.docs.get(doc)).version).toBe(3);
    });

    t(
      'a retry with the same write_id and payload returns the original result; another payload conflicts',
      async (c) => {
        await c.docs.commit({ ...doc, expected_version: 0, body: { n: 0 } });
        const first = await c.docs.commit({
          ...doc,
          expected_version: 1,
          merge_patch: { n: 1 },
          write_id: 'step-7',
        });
        await c.docs.commit({ ...doc, expected_version: 2, merge_patch: { n: 2 } });
        const retry = await c.docs.commit({
          ...doc,
          expected_version: 1,
          merge_patch: { n: 1 },
          write_id: 'step-7',
        });
        expect(retry).toMatchObject({
          version: first.version,
          replayed: true,
          body: { n: 1 },
          write_id: 'step-7',
        });
        expect((await c.docs.get(doc)).version).toBe(3);
        const reused = await expectCode(
          c.docs.commit({ ...doc, expected_version: 3, merge_patch: { n: 5 }, write_id: 'step-7' }),
          'STATE_CONFLICT',
        );
        // The error reports where the document really is, not the reused write's parent.
        expect(reused).toMatchObject({ write_id: 'step-7', actual: 3 });
        expect((await c.docs.history(doc)).entries.length).toBe(3);
      },
    );

    t('an explicit no-op is recorded in history with the version unchanged', async (c) => {
      await c.docs.commit({ ...doc, expected_version: 0, body: { n: 1 } });
      const r = await c.docs.commit({
        ...doc,
        expected_version: 1,
        noop: true,
        reason: 'checked, nothing to change',
      });
      expect(r).toMatchObject({ version: 1, noop: true, changed: false });
      const { entries } = await c.docs.history(doc);
      expect(entries.map((e) => [e.version, e.noop, e.reason])).toEqual([
        [1, false, null],
        [1, true, 'checked, nothing to change'],
      ]);
      await expectCode(c.docs.commit({ ...doc, expected_version: 1, noop: true }), 'INVALID_INPUT');
      await expectCode(
        c.docs.commit({ ...doc, expected_version: 0, noop: true, reason: 'x' }),
        'STATE_CONFLICT',
      );
      expect(
        (await c.events.read({ type: 'state_committed' })).map((e) => (e.data as { noop: boolean }).noop),
      ).toEqual([false, true]);
    });

    t('a commit that changes nothing is reported as such and writes nothing', async (c) => {
      await c.docs.commit({ ...doc, expected_version: 0, body: { a: 1, b: 2 } });
      const events = await eventCount(c);
      const r = await c.docs.commit({ ...doc, expected_version: 1, body: { b: 2, a: 1 } });
      expect(r).toMatchObject({ version: 1, changed: false, noop: false });
      expect(await eventCount(c)).toBe(events);
      expect((await c.docs.history(doc)).entries.length).toBe(1);
    });

    t(
      'every version keeps actor, actor kind, provenance, write id, parent, time and hash, with a state_committed event',
      async (c) => {
        const provenance = { model_id: 'm-1', input_hash: 'abc', run_id: 'r1', step_id: 's3' };
        await c.docs.commit({
          ...doc,
          expected_version: 0,
          body: { n: 1 },
          actor: 'alice',
          actor_kind: 'human',
        });
        c.advance(5);
        const r = await c.docs.commit({
          ...doc,
          expected_version: 1,
          body: { n: 2 },
          actor: 'planner-llm',
          actor_kind: 'model',
          provenance,
          write_id: 'w-2',
          reason: 'replan',
        });
        const [e1, e2] = (await c.docs.history(doc)).entries;
        expect(e1).toMatchObject({
          version: 1,
          parent_version: 0,
          actor: 'alice',
          actor_kind: 'human',
          provenance: null,
        });
        expect(e2).toMatchObject({
          version: 2,
          parent_version: 1,
          actor: 'planner-llm',
          actor_kind: 'model',
          provenance,
          write_id: 'w-2',
          reason: 'replan',
          content_hash: r.content_hash,
          created_at: new Date(c.now()).toISOString(),
        });
        expect(e2!.content_hash).toMatch(/^[0-9a-f]{64}$/);
        const events = await c.events.read({ stream: 'doc:json/plan' });
        expect(events.map((e) => [e.type, (e.data as { version: number }).version, e.actor])).toEqual([
          ['state_committed', 1, 'alice'],
          ['state_committed', 2, 'planner-llm'],
        ]);
        expect((await c.events.verify()).ok).toBe(true);
      },
    );

    t('a model write without provenance is PROVENANCE_REQUIRED and writes nothing', async (c) => {
      await expectCode(
        c.docs.commit({ ...doc, expected_version: 0, body: {}, actor_kind: 'model' }),
        'PROVENANCE_REQUIRED',
      );
      await expectCode(
        c.docs.commit({
          ...doc,
          expected_version: 0,
          body: {},
          actor_kind: 'model',
          provenance: { model_id: 'm' },
        }),
        'PROVENANCE_REQUIRED',
      );
      expect(await c.docs.find('json', 'plan')).toBeNull();
      expect(await eventCount(c)).toBe(0);
    });

    t('reads any version; diff is an RFC 6902 patch from one version to another', async (c) => {
      await c.docs.commit({ ...doc, expected_version: 0, body: { a: 1, list: [1] } });
      await c.docs.commit({ ...doc, expected_version: 1, body: { a: 2, list: [1, 2], added: true } });
      await c.docs.commit({ ...doc, expected_version: 2, body: { list: [2] } });
      expect((await c.docs.get({ ...doc, version: 1 })).body).toEqual({ a: 1, list: [1] });
      expect((await c.docs.get({ ...doc, version: 2 })).version).toBe(2);
      await expectCode(c.docs.get({ ...doc, version: 9 }), 'NOT_FOUND');
      await expectCode(c.docs.get({ kind: 'json', id: 'nope' }), 'NOT_FOUND');
      const d = await c.docs.diff({ ...doc, from: 1, to: 3 });
      const { applyPatch } = (await import('fast-json-patch')).default;
      expect(applyPatch({ a: 1, list: [1] }, d.patch as never, true, false).newDocument).toEqual({
        list: [2],
      });
      const fromEmpty = (await c.docs.diff({ ...doc, from: 0, to: 1 })).patch;
      expect(fromEmpty.every((op) => op.op === 'add')).toBe(true);
      expect(applyPatch({}, fromEmpty as never, true, false).newDocument).toEqual({ a: 1, list: [1] });
    });

    t('history pages in order', async (c) => {
      for (let v = 0; v < 7; v++) await c.docs.commit({ ...doc, expected_version: v, body: { v } });
      const p1 = await c.docs.history({ ...doc, limit: 3 });
      const p2 = await c.docs.history({ ...doc, limit: 3, after: p1.next_after! });
      const p3 = await c.docs.history({ ...doc, limit: 3, after: p2.next_after! });
      expect([...p1.entries, ...p2.entries, ...p3.entries].map((e) => e.version)).toEqual([
        1, 2, 3, 4, 5, 6, 7,
      ]);
      expect(p3.next_after).toBeNull();
      expect(
        (await c.docs.history({ ...doc, reverse: true, limit: 2 })).entries.map((e) => e.version),
      ).toEqual([7, 6]);
    });

    t('fork copies a version into a new document and records where it came from', async (c) => {
      await c.docs.commit({ ...doc, expected_version: 0, body: { v: 1 } });
      await c.docs.commit({ ...doc, expected_version: 1, body: { v: 2 } });
      const f = await c.docs.fork({ ...doc, version: 1, new_id: 'plan-b' });
      expect(f).toMatchObject({ id: 'plan-b', version: 1, body: { v: 1 } });
      expect((await c.docs.get({ kind: 'json', id: 'plan-b' })).forked_from).toEqual({
        kind: 'json',
        id: 'plan',
        version: 1,
      });
      await expectCode(c.docs.fork({ ...doc, new_id: 'plan-b' }), 'STATE_CONFLICT');
    });

    t('project returns only the named fields and the version they were read at', async (c) => {
      await c.docs.commit({
        ...doc,
        expected_version: 0,
        body: { position: { block: 3, step: 'x' }, big: 'y'.repeat(1000) },
      });
      const p = await c.docs.project({
        ...doc,
        paths: ['position.block', '/position/step', 'missing.field'],
      });
      expect(p).toEqual({
        kind: 'json',
        id: 'plan',
        version: 1,
        values: { 'position.block': 3, '/position/step': 'x' },
        missing: ['missing.field'],
      });
      // A component commits against the version it projected at.
      await c.docs.commit({ ...doc, expected_version: p.version, merge_patch: { position: { block: 4 } } });
      await expectCode(
        c.docs.commit({ ...doc, expected_version: p.version, merge_patch: { big: 'z' } }),
        'STATE_CONFLICT',
      );
    });

    t(
      'retention keeps the newest N versions, never the latest; a pruned version is a typed NOT_FOUND',
      async (c) => {
        const docs = c.docsKeeping(3);
        for (let v = 0; v < 6; v++) await docs.commit({ ...doc, expected_version: v, body: { v } });
        expect((await docs.history(doc)).entries.map((e) => e.version)).toEqual([4, 5, 6]);
        const details = await expectCode(docs.get({ ...doc, version: 2 }), 'NOT_FOUND');
        expect(details.pruned).toBe(true);
        expect((await docs.get({ ...doc, version: 4 })).body).toEqual({ v: 3 });
        expect(await c.docs.prune({ ...doc, keep: 1 })).toEqual({ removed: 2 });
        expect((await c.docs.get(doc)).body).toEqual({ v: 5 });
        expect((await c.docs.history(doc)).entries.map((e) => e.version)).toEqual([6]);
      },
    );

    t('unknown kinds and hostile ids are refused', async (c) => {
      await expectCode(
        c.docs.commit({ kind: 'nope', id: 'x', expected_version: 0, body: {} }),
        'INVALID_INPUT',
      );
      await expectCode(
        c.docs.commit({ kind: 'json', id: '', expected_version: 0, body: {} }),
        'INVALID_INPUT',
      );
      await expectCode(
        c.docs.commit({ kind: 'json', id: 'x', expected_version: -1, body: {} }),
        'INVALID_INPUT',
      );
      await expectCode(
        c.docs.commit({ kind: 'json', id: 'x', expected_version: 0, body: [] as never }),
        'INVALID_INPUT',
      );
      expect(await eventCount(c)).toBe(0);
    });
  });
}
