// Bytes from outside (a state file, stdin, a body file) become text only within a size cap and as
// strict UTF-8: a stream that never ends is cut off at the cap, and invalid bytes are refused, not
// replaced with U+FFFD (a real U+FFFD in the text is legal and kept).
import { InvalidInputError } from '../errors.js';
import { LIMITS } from './input.js';

// ignoreBOM: keep a byte-order mark in the text, so a file read back compares equal to what was there.
const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * Decodes `bytes` as UTF-8; INVALID_INPUT naming `source` (and `field` when given) at the first invalid
 * byte sequence.
 * @example decodeUtf8(Buffer.from('{"a":1}'), 'stdin') // '{"a":1}'
 */
export function decodeUtf8(bytes: Uint8Array, source: string, field?: string): string {
  try {
    return UTF8.decode(bytes);
  } catch {
    throw new InvalidInputError(`${source} is not valid UTF-8 text`, {
      source,
      ...(field === undefined ? {} : { field }),
    });
  }
}

/**
 * Collects a stream's chunks, refusing it (INVALID_INPUT) as soon as it goes over `maxBytes`: the rest is
 * never read (leaving the loop destroys a Node stream), so `/dev/zero` or an endless pipe costs at most
 * the cap. @default maxBytes LIMITS.inputBytes (4 MiB)
 */
export async function readCapped(
  chunks: AsyncIterable<Uint8Array | string>,
  source: string,
  opts: { maxBytes?: number; field?: string } = {},
): Promise<Buffer> {
  const max = opts.maxBytes ?? LIMITS.inputBytes;
  const parts: Buffer[] = [];
  let total = 0;
  for await (const c of chunks) {
    const b = typeof c === 'string' ? Buffer.from(c) : Buffer.from(c.buffer, c.byteOffset, c.byteLength);
    total += b.length;
    if (total > max) {
      throw new InvalidInputError(`${source} is larger than the ${max} byte limit`, {
        source,
        limit: max,
        ...(opts.field === undefined ? {} : { field: opts.field }),
      });
    }
    parts.push(b);
  }
  return Buffer.concat(parts, total);
}
