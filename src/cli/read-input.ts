// Input text given on the command line as a file or `-` (stdin): one reader, with the input size cap and
// strict UTF-8, for `state commit -b/-m/--patch` and a workflow's `--payload -`.
import { createReadStream } from 'node:fs';
import { decodeUtf8, readCapped } from '../core/text-input.js';
import { InvalidInputError } from '../errors.js';

/**
 * Reads all of stdin (`source` `-`) or the file `source` as UTF-8 text of at most LIMITS.inputBytes
 * (4 MiB); INVALID_INPUT naming `field` when it is larger (reading stops at the cap), not valid UTF-8,
 * or cannot be read. A file may be a pipe (`-b <(cmd)`): it is read as a stream, like stdin.
 */
export async function readInputText(source: string, field: string): Promise<string> {
  const from = source === '-' ? `${field} (stdin)` : `${field} (${source})`;
  let bytes: Buffer;
  try {
    bytes = await readCapped(source === '-' ? process.stdin : createReadStream(source), from, { field });
  } catch (err) {
    if (err instanceof InvalidInputError) throw err;
    throw new InvalidInputError(`cannot read ${from}: ${(err as Error).message}`, { field, source });
  }
  return decodeUtf8(bytes, from, field);
}
