// A lock file for writers of the same view file on one machine (`<file>.lock`, created exclusively).
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { LockTimeoutError } from '../errors.js';
import { confineToProject } from '../fs/confine.js';
import { readRegularFile } from '../fs/files.js';

const STALE_MS = 30_000;

function holderAlive(lockPath: string): boolean {
  try {
    // A lock holds "<pid> <ms>": read at most 64 bytes of it, never through a symlink or from a FIFO.
    const [pid, since] = readRegularFile(lockPath, 64, { noFollow: true })
      .toString('latin1')
      .split(' ')
      .map(Number);
    if (!pid || !since || Date.now() - since > STALE_MS) return false;
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: the process exists but is not ours; anything else: the holder is gone, or the file vanished or
    // is not a lock agentstate wrote (it is then taken over).
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Runs `fn` while holding `<path>.lock`, which must resolve inside the project `root` (INVALID_INPUT
 * otherwise). A lock left by a dead process (or older than 30 s) is taken over; otherwise waits up to
 * `timeoutMs`, then LOCK_TIMEOUT. @default timeoutMs 10 000
 */
export async function withFileLock<T>(
  root: string,
  path: string,
  fn: () => Promise<T>,
  timeoutMs = 10_000,
): Promise<T> {
  const lockPath = confineToProject(root, `${path}.lock`);
  mkdirSync(dirname(lockPath), { recursive: true });
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
