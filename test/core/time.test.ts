// toIso keeps the day's text and computes the time of day: it must write exactly what toISOString writes.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { toIso } from '../../src/core/time.js';

describe('toIso', () => {
  it('writes what Date.prototype.toISOString writes, for any time', () => {
    const edge = [
      0, 1, 999, 1000, 59_999, 86_399_999, 86_400_000, 951_782_400_000, 253_402_300_799_999,
      253_402_300_800_000,
    ];
    for (const ms of edge) expect(toIso(ms)).toBe(new Date(ms).toISOString());
    fc.assert(
      fc.property(
        fc.oneof(
          fc.integer({ min: 0, max: 253_402_300_799_999 }),
          fc.integer({ min: -8_640_000_000_000_000, max: 8_640_000_000_000_000 }),
          fc.double({ min: -1e15, max: 1e15, noNaN: true }),
        ),
        (ms) => {
          expect(toIso(ms)).toBe(new Date(ms).toISOString());
        },
      ),
      { numRuns: 20_000 },
    );
    // Alternating days (the cached day text changes every call) stay right.
    for (let i = 0; i < 100; i++) {
      const ms = (i % 2 ? 1_700_000_000_000 : 1_800_000_000_000) + i * 7919;
      expect(toIso(ms)).toBe(new Date(ms).toISOString());
    }
  });

  it('keeps null and undefined as null, and refuses what Date refuses', () => {
    expect(toIso(null)).toBeNull();
    expect(toIso(undefined)).toBeNull();
    expect(() => toIso(Number.NaN)).toThrow(RangeError);
    expect(() => toIso(8.64e15 + 1)).toThrow(RangeError);
  });
});

describe('one time grammar for every time input (issue 25)', () => {
  it('not_before, since, before and until each take an ISO-8601 time or a duration, on the store clock', async () => {
    const { openInstance } = await import('../../src/instance/instance.js');
    const { runOperation } = await import('../../src/service/invoke.js');
    const { tempDir } = await import('../helpers/tmp.js');
    let now = Date.parse('2026-06-01T12:00:00Z');
    const inst = await openInstance({ dir: `${tempDir()}/i`, clock: () => now });
    try {
      // A duration counts forward from the instance's clock for not_before, at the library and the table.
      const a = await inst.work.enqueue({ title: 'a', not_before: '5m' });
      expect(a.not_before).toBe('2026-06-01T12:05:00.000Z');
      const b = (await runOperation(inst, 'enqueue', { title: 'b', not_before: '1.5h' })) as typeof a;
      expect(b.not_before).toBe('2026-06-01T13:30:00.000Z');
      const c = await inst.work.enqueue({ title: 'c', not_before: '2026-06-02' });
      expect(c.not_before).toBe('2026-06-02T00:00:00.000Z');
      expect(await inst.work.claim({ worker: 'w' })).toBeNull();
      now += 5 * 60_000;
      expect((await inst.work.claim({ worker: 'w' }))?.id).toBe(a.id);
      // ... and back for since / before / until.
      now += 60 * 60_000;
      await inst.events.append({ type: 'note', data: {} });
      expect((await inst.events.read({ type: 'note', since: '1m' })).length).toBe(1);
      expect((await runOperation(inst, 'read_events', { type: 'note', before: '1m' })) as unknown[]).toEqual(
        [],
      );
      expect(await runOperation(inst, 'retro', { since: '2h', until: '0s' })).toMatchObject({});
      // One refusal, one wording, whichever field.
      for (const [op, input] of [
        ['enqueue', { title: 'x', not_before: 'soon' }],
        ['enqueue', { title: 'x', not_before: '30' }],
        ['read_events', { since: '2026-02-30' }],
        ['retro', { until: 'yesterday' }],
      ] as const) {
        await expect(runOperation(inst, op, input), JSON.stringify(input)).rejects.toMatchObject({
          code: 'INVALID_INPUT',
          details: { field: Object.keys(input).at(-1) },
        });
      }
    } finally {
      await inst.close();
    }
  });
});
