// Injective keys for ids with any characters: the adapters store a framework's ids (session ids, project
// keys) as stream names and document ids, which allow only `[A-Za-z0-9_.:/@-]` and at most 200 characters.
import { createHash } from 'node:crypto';

/**
 * `_` then `id` with each UTF-8 byte of a character `kept` does not match written `_XX` (upper-case hex):
 * reversible, and it never contains `_` other than as an escape (so `kept` must not match `_`). Null as
 * soon as the key would be longer than `max` characters, so a very long id costs no more than `max` steps.
 * @example escapedKey('auth0|abc', /[A-Za-z0-9.:/@-]/) // '_auth0_7Cabc'
 */
export function escapedKey(id: string, kept: RegExp, max = Number.POSITIVE_INFINITY): string | null {
  let key = '_';
  for (const ch of id) {
    if (kept.test(ch)) key += ch;
    else for (const b of Buffer.from(ch, 'utf8')) key += `_${b.toString(16).toUpperCase().padStart(2, '0')}`;
    if (key.length > max) return null;
  }
  return key;
}

/**
 * `.sha256:` then the SHA-256 of `text` in hex (72 characters): the key of an id too long to escape. It
 * starts with `.`, which neither a plain key (a letter or digit first) nor an escaped one (`_`) does.
 */
export function hashedKey(text: string): string {
  return `.sha256:${createHash('sha256').update(text, 'utf8').digest('hex')}`;
}
