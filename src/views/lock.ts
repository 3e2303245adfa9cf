// A lock file for writers of the same view file on one machine (`<file>.lock`, created exclusively).
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { LockTimeoutError } from '../errors.js';

const STALE_MS = 30_000;

function holderAlive(lockPath: string): boolean {
  try {
    const [pid, since] = readFileSync(lockPath, 'utf8').split(' ').map(Number);
    if (!pid || !since || Date.now() - since > STALE_MS) return false;
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: the process exists but is not ours; anything else: the holder is gone or the file vanished.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Runs `fn` while holding `<path>.lock`. A lock left by a dead process (or older than 30 s) is taken
 * over; otherwise waits up to `timeoutMs`, then LOCK_TIMEOUT.
 */
export async function withFileLock<T>(path: string, fn: () => Promise<T>, timeoutMs = 10_000): Promise<T> {
  const lockPath = `${path}.lock`;
  mkdirSync(dirname(path), { recursive: true });
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      writeFileSync(lockPath, `${process.pid} ${Date.now()}`, { flag: 'wx' });
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      if (!holderAlive(lockPath)) {
        rmSync(lockPath, { force: true });
        continue;
      }
      if (Date.now() > deadline) {
        throw new LockTimeoutError(`${path} is locked by another writer (${lockPath}); retry later`, {
          path,
        });
      }
      await new Promise((r) => setTimeout(r, 25));
    }
  }
  try {
    return await fn();
  } finally {
    rmSync(lockPath, { force: true });
  }
}
