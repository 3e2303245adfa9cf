// Retrying a read-modify-commit that lost to a newer version: which conflicts another try on a fresh read
// can get past, and the loop that runs it again.
import { StateConflictError } from '../../errors.js';

/** How often a read-modify-commit is run again after the document moved on under it. */
export const RETRIES = 10;

/**
 * A conflict another try on a fresh read can get past: the document was at another version than read.
 * Not a held lock, a failed JSON Patch test or a reused write id: those would fail the same way again.
 */
export function isStaleVersion(err: unknown): boolean {
  if (!(err instanceof StateConflictError)) return false;
  const d = err.details as { expected?: unknown; actual?: unknown; rule?: unknown; write_id?: unknown };
  return (
    typeof d.expected === 'number' &&
    typeof d.actual === 'number' &&
    d.rule === undefined &&
    d.write_id == null
  );
}

/** Runs `fn` (a read, a change computed from it, a commit) again while it loses to a newer version. */
export async function retryOnStaleVersion<T>(fn: () => Promise<T>, attempts = RETRIES): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      if (attempt >= attempts || !isStaleVersion(err)) throw err;
    }
  }
}
