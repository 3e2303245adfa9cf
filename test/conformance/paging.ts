// Store conformance, cursors (issue 40): every list an agent pages through — work items in claim order,
// documents by kind then id, an item's run records — visits each record exactly once and in order when read
// page by page from the start with a small page size, with every filter; a cursor naming nothing is
// INVALID_INPUT, never an empty page that reads as "the end".
import { describe, expect } from 'vitest';
import type { WorkItem } from '../../src/core/types.js';
import { type ConformanceTest, type Ctx, expectCode } from './setup.js';

/** Reads a whole list page by page (`limit` each) from the start, each page after the last one's cursor. */
async function pageThrough<T>(
  read: (after: string | number | undefined) => Promise<T[]>,
  cursor: (last: T) => string | number,
  limit: number,
): Promise<T[]> {
  const all: T[] = [];
  let after: string | number | undefined;
  for (let n = 0; n < 1000; n++) {
    const page = await read(after);
    expect(page.length).toBeLessThanOrEqual(limit);
    all.push(...page);
    // A full page may have more after it; a short one is the end.
    if (page.length < limit) return all;
    after = cursor(page[page.length - 1]!);
  }
  throw new Error('paging did not end');
}

/**
 * Items of every status, kind, priority and concurrency key, several created in the same millisecond (so
 * claim order falls to the id), some blocked on a failure, some not yet due.
 */
async function queue(c: Ctx): Promise<void> {
  const blocker = await c.work.enqueue({ title: 'blocker', priority: 9, max_attempts: 1 });
  const open = await c.work.enqueue({ title: 'open blocker', priority: -5 });
  for (let i = 0; i < 24; i++) {
    if (i % 5 === 0) c.advance(1);
    await c.work.enqueue({
      title: `item ${i}`,
      kind: i % 3 === 0 ? 'a' : 'b',
      priority: [0, 5, -1, 0, 5][i % 5],
      ...(i % 4 === 0 ? { concurrency_key: 'k' } : {}),
      ...(i % 7 === 0 ? { blocked_by: [blocker.id] } : {}),
      ...(i % 6 === 1 ? { blocked_by: [open.id] } : {}),
      ...(i % 8 === 3 ? { not_before: new Date(c.now() + 3_600_000).toISOString() } : {}),
      ...(i % 9 === 2 ? { waiting_human: true } : {}),
    });
  }
  // The blocker fails (its dependants are blocked on a failure); a few others are claimed or finished.
  const b = await c.work.claim({ worker: 'w', id: blocker.id });
  await c.work.resolve({ id: blocker.id, worker: 'w', attempt: b!.attempts, status: 'failed', error: 'x' });
  for (let i = 0; i < 4; i++) {
    const it = await c.work.claim({ worker: 'w' });
    if (i % 2 === 0)
      await c.work.resolve({ id: it!.id, worker: 'w', attempt: it!.attempts, status: 'done', result: i });
  }
}

export function pagingConformance(name: string, t: ConformanceTest): void {
  describe(`${name}: cursors`, () => {
    t('list_items pages in claim order by the last id, each item once, with every filter', async (c) => {
      await queue(c);
      const filters: Array<Parameters<Ctx['work']['list']>[0]> = [
        {},
        { status: 'pending' },
        { status: ['pending', 'in_flight', 'done'] },
        { kind: 'a' },
        { kind: 'b', status: 'pending' },
        { ready: true },
        { ready: false },
        { blocked_on_failure: true },
        { blocked_on_failure: false },
        { ready: false, blocked_on_failure: false },
        { concurrency_key: 'k' },
        { concurrency_key: 'k', ready: true },
      ];
      for (const f of filters) {
        const whole = await c.work.list({ ...f, limit: 1000 });
        expect(whole.length, JSON.stringify(f)).toBeGreaterThan(0);
        for (const limit of [1, 2, 3, 7]) {
          const paged = await pageThrough<WorkItem>(
            (after) => c.work.list({ ...f, limit, ...(after === undefined ? {} : { after: String(after) }) }),
            (last) => last.id,
            limit,
          );
          expect(
            paged.map((i) => i.id),
            `${JSON.stringify(f)} by ${limit}`,
          ).toEqual(whole.map((i) => i.id));
        }
      }
      // Claim order itself: priority first (highest first), then age, then id.
      const all = await c.work.list({ limit: 1000 });
      const key = (i: WorkItem) => [-i.priority, Date.parse(i.created_at), i.id] as const;
      for (let n = 1; n < all.length; n++) {
        const [a, b] = [key(all[n - 1]!), key(all[n]!)];
        expect(a[0] < b[0] || (a[0] === b[0] && (a[1] < b[1] || (a[1] === b[1] && a[2] < b[2])))).toBe(true);
      }
      // After the last item: an empty page, the end (the cursor names an item).
      expect(await c.work.list({ after: all.at(-1)!.id })).toEqual([]);
      // The cursor item need not match the filters (an item's status changes between pages).
      const done = all.filter((i) => i.status === 'done');
      expect(done.length).toBeGreaterThan(0);
      const pendingAfter = await c.work.list({ status: 'pending', after: done[0]!.id, limit: 1000 });
      expect(pendingAfter.map((i) => i.id)).toEqual(
        all.slice(all.indexOf(done[0]!) + 1).flatMap((i) => (i.status === 'pending' ? [i.id] : [])),
      );
    });

    t(
      'list_items refuses a cursor naming no item (INVALID_INPUT on after), whatever the filters',
      async (c) => {
        await queue(c);
        for (const after of ['wi_00000000000000000000000000', 'wi_zzzzzzzzzzzzzzzzzzzzzzzzzz', 'a|b+ü/x']) {
          for (const f of [
            {},
            { status: 'pending' as const },
            { blocked_on_failure: true },
            { ready: true },
          ]) {
            const details = await expectCode(c.work.list({ ...f, after }), 'INVALID_INPUT');
            expect(details.field).toBe('after');
          }
        }
        await expectCode(c.work.list({ after: '' }), 'INVALID_INPUT');
      },
    );

    t('list_documents pages by kind/id, ids with | + / and non-ASCII included, each once', async (c) => {
      const ids = [
        'a',
        'a|b',
        'a+b',
        'a/b',
        'a/b/c',
        'b',
        'Z',
        'ünï',
        '日本',
        'x y',
        '%2F',
        'a%2Fb',
        '-',
        '~',
      ];
      for (const id of ids) await c.docs.commit({ kind: 'json', id, expected_version: 0, body: { id } });
      // Another kind, whose ids sort before the last json ones: the cursor crosses kinds by (kind, id).
      for (const id of ['a', 'm']) {
        await c.docs.commit({
          kind: 'schedule',
          id,
          expected_version: 0,
          body: {
            cron: '0 6 * * *',
            item: { title: id },
            catch_up: 'latest',
            enabled: true,
            created_at: new Date(c.now()).toISOString(),
            last_tick: null,
          },
        });
      }
      for (const f of [{}, { kind: 'json' }, { kind: 'schedule' }]) {
        const whole = await c.docs.list({ ...f, limit: 1000 });
        expect(whole.length).toBe(
          f.kind === 'schedule' ? 2 : f.kind === 'json' ? ids.length : ids.length + 2,
        );
        for (const limit of [1, 2, 5]) {
          const paged = await pageThrough(
            (after) => c.docs.list({ ...f, limit, ...(after === undefined ? {} : { after: String(after) }) }),
            (last) => `${last.kind}/${last.id}`,
            limit,
          );
          expect(paged.map((d) => `${d.kind}/${d.id}`)).toEqual(whole.map((d) => `${d.kind}/${d.id}`));
        }
      }
      const all = (await c.docs.list()).map((d) => `${d.kind}/${d.id}`);
      expect(all.slice(-2)).toEqual(['schedule/a', 'schedule/m']);
      // The id of a cursor may hold slashes: split at the first one.
      const at = all.indexOf('json/a/b');
      expect((await c.docs.list({ after: 'json/a/b', limit: 1 })).map((d) => d.id)).toEqual([
        all[at + 1]!.slice('json/'.length),
      ]);
      expect(await c.docs.list({ after: 'schedule/m' })).toEqual([]);
    });

    t(
      'list_documents refuses a cursor naming no document, or not kind/id (INVALID_INPUT on after)',
      async (c) => {
        for (const id of ['a', 'b/c'])
          await c.docs.commit({ kind: 'json', id, expected_version: 0, body: {} });
        for (const after of [
          'json/0',
          'json/aa',
          'json/b',
          'json/b/c/d',
          'aaa/a',
          'zzz/a',
          'json',
          '/a',
          'json/',
        ]) {
          for (const f of [{}, { kind: 'json' }]) {
            const details = await expectCode(c.docs.list({ ...f, after }), 'INVALID_INPUT');
            expect(details.field, after).toBe('after');
          }
        }
      },
    );

    t(
      'list_steps pages by position after the last record, each once; a position of no record is refused',
      async (c) => {
        const item = await c.work.enqueue({ title: 'run' });
        const other = await c.work.enqueue({ title: 'other run' });
        const a = await c.work.claim({ worker: 'w', id: item.id });
        const o = await c.work.claim({ worker: 'w', id: other.id });
        const run = await c.work.run({ id: item.id, worker: 'w', attempt: a!.attempts });
        const otherRun = await c.work.run({ id: other.id, worker: 'w', attempt: o!.attempts });
        for (let n = 0; n < 7; n++) {
          await run.step(`s${n % 3}`, () => n);
          // Interleaved in the log with another item's records.
          await otherRun.step('o', () => n);
        }
        const whole = await c.work.steps(item.id);
        expect(whole).toHaveLength(7);
        for (const limit of [1, 2, 3, 7]) {
          const paged = await pageThrough(
            (after) =>
              c.work.steps({ id: item.id, limit, ...(after === undefined ? {} : { after: Number(after) }) }),
            (last) => last.position,
            limit,
          );
          expect(paged).toEqual(whole);
        }
        expect(await c.work.steps({ id: item.id, after: whole.at(-1)!.position })).toEqual([]);
        const theirs = (await c.work.steps(other.id))[0]!.position;
        for (const after of [theirs, whole.at(-1)!.position + 100, whole[0]!.position - 1]) {
          const details = await expectCode(c.work.steps({ id: item.id, after }), 'INVALID_INPUT');
          expect(details.field).toBe('after');
        }
        await expectCode(c.work.steps({ id: item.id, after: 0 }), 'INVALID_INPUT');
        await expectCode(c.work.steps({ id: 'wi_nobody', after: whole[0]!.position }), 'NOT_FOUND');
      },
    );
  });
}
