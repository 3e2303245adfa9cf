// Safe file I/O for the human-readable files: atomic writes (temp file + rename, never half-written) and
// bounded reads that refuse FIFOs, devices, oversize and non-UTF-8 files before they can hang or flood us.
import {
  closeSync,
  constants,
  existsSync,
  fchmodSync,
  fstatSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readSync,
  renameSync,
  rmSync,
  type Stats,
  statSync,
  writeSync,
} from 'node:fs';
import { dirname, resolve } from 'node:path';
import { InvalidInputError, NotFoundError } from '../errors.js';

/**
 * Writes `content` to `path` via a temp file in the same folder and a rename. `mode` gives the file those
 * permission bits (an existing file's, so a rewrite keeps them) instead of the default 0o666 less umask.
 */
export function writeFileAtomic(path: string, content: string, opts: { mode?: number } = {}): void {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.${process.pid}.${Date.now()}.tmp`;
  // 'wx' (O_EXCL): a symlink planted under the temp name is refused instead of followed.
  const fd = openSync(tmp, 'wx');
  try {
    try {
      if (opts.mode !== undefined) fchmodSync(fd, opts.mode & 0o7777);
      writeSync(fd, content);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, path);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
}

/**
 * Creates `dir` and its missing parents one level at a time. (Node 20's recursive mkdirSync spins
 * forever on paths under /proc; this fails with ENOENT / ENOTDIR instead.)
 */
export function ensureDir(dir: string): void {
  const missing: string[] = [];
  let cur = resolve(dir);
  while (!existsSync(cur)) {
    missing.push(cur);
    const parent = dirname(cur);
    if (parent === cur) break;
    cur = parent;
  }
  if (existsSync(cur) && !statSync(cur).isDirectory()) {
    throw Object.assign(new Error(`${cur} is not a directory`), { code: 'ENOTDIR' });
  }
  for (const d of missing.reverse()) {
    try {
      mkdirSync(d);
    } catch (err) {
      // Another process opening the same new instance made it first: a folder is all that was asked for.
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || !statSync(d).isDirectory()) throw err;
    }
  }
}

/** What a file is, for a message: 'a directory', 'a FIFO (named pipe)', 'a regular file', … */
export function fileType(st: Stats): string {
  if (st.isFile()) return 'a regular file';
  if (st.isDirectory()) return 'a directory';
  if (st.isFIFO()) return 'a FIFO (named pipe)';
  if (st.isCharacterDevice() || st.isBlockDevice()) return 'a device';
  if (st.isSocket()) return 'a socket';
  return 'not a regular file';
}

/**
 * Reads a regular file of at most `maxBytes`. Refuses (INVALID_INPUT, naming `path`) a FIFO, device,
 * socket or directory before reading a byte (opened with O_NONBLOCK, so a FIFO cannot block the open),
 * and a file over the limit, reading at most `maxBytes + 1` bytes: a file that grows after it was
 * checked, or that never ends, is not read whole. `noFollow` refuses a final-component symlink (for a
 * path that was already resolved). A missing file is NOT_FOUND.
 * @example readRegularFile('.grid/STATE.md', 4 * 1024 * 1024)
 */
export function readRegularFile(path: string, maxBytes: number, opts: { noFollow?: boolean } = {}): Buffer {
  const flags = constants.O_RDONLY | constants.O_NONBLOCK | (opts.noFollow ? constants.O_NOFOLLOW : 0);
  let fd: number;
  try {
    fd = openSync(path, flags);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new NotFoundError(`${path} does not exist`, { path });
    if (code === 'ELOOP')
      throw new InvalidInputError(`${path} is a symlink; state files are read through their real path`, {
        path,
      });
    throw new InvalidInputError(`cannot read ${path}: ${(err as Error).message}`, { path });
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) {
      throw new InvalidInputError(`${path} is ${fileType(st)}, not a regular file: refused unread`, {
        path,
      });
    }
    const tooBig = () =>
      new InvalidInputError(`${path} is larger than the ${maxBytes} byte limit for this file`, {
        path,
        limit: maxBytes,
      });
    if (st.size > maxBytes) throw tooBig();
    let buf = Buffer.allocUnsafe(Math.min(Math.max(st.size + 1, 8192), maxBytes + 1));
    let len = 0;
    for (;;) {
      if (len === buf.length) {
        if (len > maxBytes) break;
        const bigger = Buffer.allocUnsafe(Math.min(buf.length * 2, maxBytes + 1));
        buf.copy(bigger, 0, 0, len);
        buf = bigger;
      }
      const n = readSync(fd, buf, len, buf.length - len, null);
      if (n === 0) break;
      len += n;
    }
    if (len > maxBytes) throw tooBig();
    return buf.subarray(0, len);
  } finally {
    closeSync(fd);
  }
}
