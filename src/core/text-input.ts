// Bytes from outside (a state file, stdin, a body file) become text only as strict UTF-8: invalid
// bytes are refused, not replaced with U+FFFD (a real U+FFFD in the text is legal and kept).
import { InvalidInputError } from '../errors.js';

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
