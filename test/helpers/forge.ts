// A forger with write access to the storage: rewrites events and recomputes the whole hash chain, so that
// only verify's comparison of the rows with the log (or a head kept elsewhere) can tell.
import type { StoredEvent } from '../../src/core/backend.js';
import { computeEventHash, GENESIS_HASH } from '../../src/core/hash.js';
import type { InstanceRecord } from '../../src/core/integrity/verify.js';

/**
 * Rewrites each event of `rs` with `edit` (when given) and re-chains the log from the first event on, the
 * head row of a PostgreSQL dump included.
 */
export function rechain(rs: InstanceRecord[], edit?: (e: StoredEvent) => void): void {
  let prev = GENESIS_HASH;
  for (const r of rs) {
    if (r.t !== 'event') continue;
    edit?.(r.row);
    r.row.prev_hash = prev;
    r.row.hash = computeEventHash(prev, r.row);
    prev = r.row.hash;
  }
  for (const r of rs) if (r.t === 'event_head') r.row.hash = prev;
}
