// One retry-on-conflict helper: only a stale version is worth another read; a held lock, a failed JSON
// Patch test or a reused write id fails the same way again and is not retried (issue 11, point 5).
import { describe, expect, it } from 'vitest';
import { isStaleVersion, retryOnStaleVersion } from '../../src/core/documents/retry.js';
import { LockTimeoutError, StateConflictError } from '../../src/errors.js';

const stale = () => new StateConflictError('json/d is at version 3, not 2', { expected: 2, actual: 3 });
const lockHeld = () =>
  new StateConflictError('lock x is held by a', {
    expected: 2,
    actual: 2,
    rule: 'lock-held',
    pointer: '/locks/0',
  });
const testOp = () => new StateConflictError('json_patch test operation 0 failed', { field: 'json_patch' });
const reused = () =>
  new StateConflictError('write_id w was already used', { write_id: 'w', expected: 0, actual: 1 });

describe('retryOnStaleVersion', () => {
  it('tells a stale version from deterministic refusals', () => {
    expect(isStaleVersion(stale())).toBe(true);
    expect(isStaleVersion(new StateConflictError('x', { expected: 0, actual: 1, write_id: null }))).toBe(
      true,
    );
    for (const e of [lockHeld(), testOp(), reused(), new LockTimeoutError('busy'), new Error('x')]) {
      expect(isStaleVersion(e)).toBe(false);
    }
  });

  it('runs again after a stale version, and gives up after the attempts', async () => {
    let n = 0;
    await expect(
      retryOnStaleVersion(async () => {
        n++;
        if (n < 3) throw stale();
        return 'ok';
      }),
    ).resolves.toBe('ok');
    expect(n).toBe(3);
    n = 0;
    await expect(
      retryOnStaleVersion(async () => {
        n++;
        throw stale();
      }, 4),
    ).rejects.toMatchObject({ code: 'STATE_CONFLICT' });
    expect(n).toBe(4);
  });

  it('never retries a held lock, a failed test operation or a reused write id', async () => {
    for (const make of [lockHeld, testOp, reused]) {
      let n = 0;
      await expect(
        retryOnStaleVersion(async () => {
          n++;
          throw make();
        }),
      ).rejects.toMatchObject({ code: 'STATE_CONFLICT' });
      expect(n).toBe(1);
    }
  });
});
