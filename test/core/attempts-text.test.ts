// How every view (CLI lines, dashboard, dashboard.md) writes an item's attempts: started and left, never
// attempts/max_attempts, whose denominator grows each time an attempt is handed back unspent.
import { describe, expect, it } from 'vitest';
import { attemptsText } from '../../src/core/work/rules.js';

describe('attemptsText', () => {
  it('a pending item handed back twice reads the same left, where attempts/max_attempts read 1/4 then 2/5', () => {
    // Claimed once (1 of 3), handed back: max_attempts 4; claimed again, handed back: 2 of 5.
    expect(attemptsText({ attempts: 1, max_attempts: 4, status: 'pending' })).toBe('1 (3 left)');
    expect(attemptsText({ attempts: 2, max_attempts: 5, status: 'pending' })).toBe('2 (3 left)');
  });

  it('in flight: what is left after the running attempt; waiting for a human: what is left', () => {
    expect(attemptsText({ attempts: 2, max_attempts: 3, status: 'in_flight' })).toBe('2 (1 left after it)');
    expect(attemptsText({ attempts: 1, max_attempts: 3, status: 'waiting_human' })).toBe('1 (2 left)');
    expect(attemptsText({ attempts: 5, max_attempts: 3, status: 'pending' })).toBe('5 (0 left)');
  });

  it('a finished item: the attempts it took, nothing left to try', () => {
    for (const status of ['done', 'failed', 'cancelled'] as const) {
      expect(attemptsText({ attempts: 2, max_attempts: 3, status })).toBe('2');
    }
  });
});
