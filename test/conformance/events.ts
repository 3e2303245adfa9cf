// Store conformance, the event log: gapless positions, stream sequences, the hash chain, reads and tail.
import { describe, expect } from 'vitest';
import { type ConformanceTest, eventCount, expectCode, T0 } from './setup.js';

export function eventConformance(name: string, t: ConformanceTest): void {
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

    t('a read of several types pages through positions and a time window as one ordered list', async (c) => {
      // Types interleaved unevenly with others, time moving every few events: each read must equal the
      // full log filtered by hand, whichever way it is paged.
      const kinds = ['a', 'b', 'a', 'x', 'c', 'a', 'x', 'x', 'd', 'b'];
      for (let i = 0; i < 60; i++) {
        if (i % 7 === 0) c.advance(1000);
        await c.events.append({ type: kinds[i % kinds.length]!, data: { i } });
      }
      const log = await c.events.read({});
      const at = (k: number) => new Date(T0 + k * 1000).toISOString();
      const types = ['a', 'b', 'c', 'd'];
      for (const q of [
        { type: types },
        { type: types, limit: 7 },
        { type: types, after: 13, limit: 5 },
        { type: types, until: 40, reverse: true, limit: 6 },
        { type: ['d', 'c'], reverse: true },
        { type: types, since: at(3), before: at(6), limit: 4 },
        { type: types, since: at(3), before: at(6), after: 30, limit: 4 },
        { type: types, since: at(8), reverse: true, limit: 3 },
        { type: types, since: at(20) },
      ]) {
        const want = log.filter(
          (e) =>
            q.type.includes(e.type) &&
            e.position > (q.after ?? 0) &&
            e.position <= (q.until ?? Number.POSITIVE_INFINITY) &&
            (q.since === undefined || e.created_at >= q.since) &&
            (q.before === undefined || e.created_at < q.before),
        );
        if (q.reverse) want.reverse();
        const got = await c.events.read(q);
        expect(
          got.map((e) => e.position),
          JSON.stringify(q),
        ).toEqual(want.slice(0, q.limit ?? 1000).map((e) => e.position));
      }
      // Paging by `after` through a window visits each of its events once, in order.
      const window = { type: types, since: at(2), before: at(8) };
      const seen: number[] = [];
      for (let after = 0; ; ) {
        const page = await c.events.read({ ...window, after, limit: 4 });
        seen.push(...page.map((e) => e.position));
        if (page.length < 4) break;
        after = page[page.length - 1]!.position;
      }
      expect(seen).toEqual((await c.events.read({ ...window, limit: 1000 })).map((e) => e.position));
      expect(seen.length).toBeGreaterThan(8);
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
}
