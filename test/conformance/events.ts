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
