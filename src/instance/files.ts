// Writing the instance's human-readable files: atomically (temp file + rename), never half-written.
import {
  closeSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  renameSync,
  statSync,
  writeSync,
} from 'node:fs';
import { dirname, resolve } from 'node:path';

/** Writes `content` to `path` via a temp file in the same folder and a rename. */
export function writeFileAtomic(path: string, content: string): void {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.${process.pid}.${Date.now()}.tmp`;
  const fd = openSync(tmp, 'w');
  try {
    writeSync(fd, content);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
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
  for (const d of missing.reverse()) mkdirSync(d);
}
