// The document store's cache: the newest version of each document this store recently committed, so a
// commit built on that version skips reading the document (its conditional write still checks it).
import type { DocumentRecord } from '../types.js';

/** How many documents' newest versions a store remembers (see `LatestVersions`). */
const LATEST_CACHE_SIZE = 256;
/** Bodies larger than this (bytes of JSON) are not remembered. */
const LATEST_CACHE_MAX_BYTES = 256 * 1024;

/** The key a document is remembered under. */
export function latestKey(kind: string, id: string): string {
  return `${kind}\u0000${id}`;
}

/**
 * The version this store last committed of each recently written document (a private copy). A version's
 * body never changes, so a commit whose `expected_version` matches skips reading the document; the
 * write still checks version and content hash in its conditional statement, and a miss there drops the
 * entry and runs the commit again from a fresh read.
 */
export class LatestVersions {
  readonly #latest = new Map<string, DocumentRecord>();

  /** The remembered version of the document under `key` (see `latestKey`), if any. */
  get(key: string): DocumentRecord | undefined {
    return this.#latest.get(key);
  }

  /** Forgets the document under `key`: someone else wrote it, or it changed behind the store. */
  forget(key: string): void {
    this.#latest.delete(key);
  }

  /**
   * Remembers `record` as the newest version of the document under `key` (the newest entry; the oldest
   * goes beyond the cache's size); a body of more than the byte limit is forgotten instead.
   */
  remember(key: string, record: DocumentRecord, bytes: number): void {
    this.#latest.delete(key);
    if (bytes > LATEST_CACHE_MAX_BYTES) return;
    this.#latest.set(key, record);
    if (this.#latest.size > LATEST_CACHE_SIZE) {
      const oldest = this.#latest.keys().next().value;
      if (oldest !== undefined) this.#latest.delete(oldest);
    }
  }
}
