// The rule for document ids that become file names (`.aios/<id>-state.yaml`, `.copilot/state/<id>.json`):
// one path component inside the kind's folder, never a way out of it.
import { InvalidInputError } from '../errors.js';

/**
 * Longest id of a kind with a file, in UTF-8 bytes. A file name holds 255 bytes; the longest name built
 * from an id (`<id>-state.yaml.checkpoint.<pid>.<ms>.tmp`) adds about 50, so 128 leaves room.
 */
export const MAX_FILE_ID_BYTES = 128;

/** Why `id` cannot be a file name, or null when it can. */
export function fileIdProblem(id: string): string | null {
  if (id.length === 0) return 'is empty';
  if (Buffer.byteLength(id) > MAX_FILE_ID_BYTES) return `is longer than ${MAX_FILE_ID_BYTES} bytes`;
  if (id.includes('/') || id.includes('\\')) return "contains a path separator ('/' or '\\')";
  if (id.includes('..')) return "contains '..'";
  if (id.startsWith('.')) return 'starts with a dot';
  for (let i = 0; i < id.length; i++) {
    const c = id.charCodeAt(i);
    // C0 and C1 controls and DEL: NUL ends a path in the kernel, the rest garble names in listings.
    if (c < 0x20 || (c >= 0x7f && c <= 0x9f)) return 'contains a control character';
  }
  return null;
}

/**
 * Refuses a document id that cannot be used as a file name: a path separator (`/`, `\`), `..`, a leading
 * dot, a NUL or other control character, empty or over 128 bytes. Throws INVALID_INPUT naming `id`.
 * Every kind with a file view uses it as its `checkId`, so the store never holds such an id.
 * @example checkFileId('deploy') // ok
 * @example checkFileId('../../package') // throws INVALID_INPUT
 */
export function checkFileId(id: string, kind?: string): void {
  const problem = fileIdProblem(id);
  if (problem === null) return;
  throw new InvalidInputError(
    `${kind ?? 'document'} id ${JSON.stringify(id)} is not allowed: it ${problem}. Ids of kinds with a file view become file names: no '/', '\\', '..', leading dot or control characters, at most ${MAX_FILE_ID_BYTES} bytes`,
    { field: 'id', ...(kind ? { kind } : {}) },
  );
}
