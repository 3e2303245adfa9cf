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
