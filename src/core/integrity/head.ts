// A head of the event log as people pass it around: `position:hash`, as verify, `instance export` and the
// dashboard stamp print it and `verify --head` takes it back. Apart from the checker (verify.ts), so that
// reading or printing a head loads nothing else.
import { InvalidInputError } from '../../errors.js';
import { GENESIS_HASH } from '../hash.js';

/** An event position and its hash, as `verify`, `instance export` and the dashboard stamp print it. */
export interface HeadAnchor {
  position: number;
  hash: string;
}

const ANCHOR = /^(\d{1,16}):([0-9a-f]{64})$/;

/**
 * Reads a head given as `position:hash` (or as an object); INVALID_INPUT otherwise.
 * @example parseHeadAnchor('24:03cd644d99e3428a…') // { position: 24, hash: '03cd644d99e3428a…' }
 */
export function parseHeadAnchor(value: string | HeadAnchor): HeadAnchor {
  const m = typeof value === 'string' ? ANCHOR.exec(value.trim()) : null;
  const position = m ? Number(m[1]) : typeof value === 'object' && value !== null ? value.position : NaN;
  const hash = m ? m[2]! : typeof value === 'object' && value !== null ? value.hash : '';
  if (
    !Number.isSafeInteger(position) ||
    position < 0 ||
    typeof hash !== 'string' ||
    !/^[0-9a-f]{64}$/.test(hash) ||
    (position === 0 && hash !== GENESIS_HASH)
  ) {
    throw new InvalidInputError(
      `head must be position:hash as verify, instance export or the dashboard print it (e.g. 24:03cd…, 64 hex digits), got ${JSON.stringify(typeof value === 'string' ? value.slice(0, 100) : value)}`,
      { field: 'head' },
    );
  }
  return { position, hash };
}

/** `position:hash`, or null for an empty log. */
export function formatHeadAnchor(head: HeadAnchor | null): string | null {
  return head === null || head.position === 0 ? null : `${head.position}:${head.hash}`;
}
