// State files as text: read whole, only as regular files, within the size limit, as valid UTF-8, and (given a
// project folder) only from inside it.
import { LIMITS } from '../core/input.js';
import { decodeUtf8 } from '../core/text-input.js';
import { InvalidInputError } from '../errors.js';
import { confineToProject } from './confine.js';
import { readRegularFile } from './files.js';

/** Largest view file read, in bytes (LIMITS.inputBytes, 4 MiB; a kind's parser may allow less). */
export const MAX_VIEW_BYTES = LIMITS.inputBytes;

/**
 * Reads a view file as text. With `root`, the path must resolve inside it (INVALID_INPUT otherwise) and
 * is opened through its real path. Refuses, before reading it whole: a missing file (NOT_FOUND), a FIFO,
 * device or directory, a file over MAX_VIEW_BYTES, NUL bytes and invalid UTF-8 (INVALID_INPUT).
 */
export function readViewFile(path: string, root?: string): string {
  const real = root === undefined ? path : confineToProject(root, path);
  const buf = readRegularFile(real, MAX_VIEW_BYTES, { noFollow: root !== undefined });
  if (buf.includes(0))
    throw new InvalidInputError(`${path} is binary (contains NUL bytes), not a text state file`, { path });
  return decodeUtf8(buf, path);
}
