// The hash chain of one instance's log, as verify checks it: each event in position order against the one
// before it (position, prev_hash, its own hash), each stream's events numbered without a gap, a head kept
// elsewhere (`verify --head`) still in the log unchanged with the chain up to it intact, and the counter rows
// (the head row, each stream's count) against the log's real end.
import type { StoredEvent } from '../backend.js';
import { computeEventHash, GENESIS_HASH } from '../hash.js';
import { formatHeadAnchor, type HeadAnchor } from './head.js';
import type { Problems } from './problems.js';

/** The chain's check: feed it every event in position order (`event`) and the counter rows, then finish. */
export class ChainCheck {
  readonly #p: Problems;
  readonly #anchor: HeadAnchor | null;
  #expected = 1;
  #prev = GENESIS_HASH;
  #verified = 0;
  #verifiedHash: string | null = null;
  #broken: { position: number; reason: string } | null = null;
  #scanned = 0;
  #last: HeadAnchor | null = null;
  #anchorSeen = false;
  #anchorMatches = false;
  readonly #streams = new Map<string, number>();
  #counterHead: HeadAnchor | null = null;
  readonly #counterStreams: Array<{ stream: string; seq: number }> = [];
  #hasCounters = false;

  /** `anchor`: a head seen earlier, which the log must still hold unchanged. */
  constructor(anchor: HeadAnchor | null, problems: Problems) {
    this.#anchor = anchor;
    this.#p = problems;
  }

  /** Events checked so far. */
  get scanned(): number {
    return this.#scanned;
  }

  /** Events from the first on whose chain is intact. */
  get verified(): number {
    return this.#verified;
  }

  /** The hash of the last event of the intact chain, or null when none is. */
  get verifiedHash(): string | null {
    return this.#verifiedHash;
  }

  /** Where the chain first breaks, and why; null when it is intact. */
  get broken(): { position: number; reason: string } | null {
    return this.#broken;
  }

  /** Whether the given head is in the log unchanged, with the chain up to it intact (after `finishHead`). */
  get anchorMatches(): boolean {
    return this.#anchorMatches;
  }

  /** Whether the records carried counter rows (the head row or a stream's count). */
  get hasCounters(): boolean {
    return this.#hasCounters;
  }

  /** The event head row. */
  headRow(row: HeadAnchor): void {
    this.#hasCounters = true;
    this.#counterHead = { position: row.position, hash: row.hash };
  }

  /** One stream's counter row. */
  streamRow(row: { stream: string; seq: number }): void {
    this.#hasCounters = true;
    this.#counterStreams.push(row);
  }

  /** One event, in position order. */
  event(e: StoredEvent): void {
    this.#scanned += 1;
    const key = `#${e.position}`;
    const chain = (reason: string) => {
      this.#broken ??= { position: e.position, reason };
      this.#p.report(
        'chain_broken',
        'events',
        key,
        `the event chain is broken at event #${e.position}: ${reason}`,
      );
    };
    const intact = this.#broken === null;
    if (e.position !== this.#expected) {
      chain(
        e.position > this.#expected
          ? `position ${this.#expected} is missing (next is ${e.position})`
          : `position ${e.position} comes again after ${this.#expected - 1}`,
      );
    } else if (e.prev_hash !== this.#prev) {
      chain('prev_hash does not match the hash of the previous event');
    }
    if (computeEventHash(e.prev_hash, e) !== e.hash) chain('hash does not match the event content');
    if (intact && this.#broken === null) {
      this.#verified += 1;
      this.#verifiedHash = e.hash;
    }
    this.#expected = Math.max(this.#expected, e.position + 1);
    this.#prev = e.hash;
    this.#last = { position: e.position, hash: e.hash };

    if (this.#anchor !== null && e.position === this.#anchor.position) {
      this.#anchorSeen = true;
      this.#anchorMatches = e.hash === this.#anchor.hash;
      if (!this.#anchorMatches) {
        this.#p.report(
          'head_mismatch',
          'events',
          key,
          `event #${e.position} is not the one the given head names: its hash is ${e.hash.slice(0, 16)}…, the head says ${this.#anchor.hash.slice(0, 16)}… (the log was rewritten up to there)`,
          { field: 'hash', expected: this.#anchor.hash, actual: e.hash },
        );
      }
    }

    const seq = this.#streams.get(e.stream) ?? 0;
    if (e.stream_seq !== seq + 1) {
      this.#p.report(
        'stream_seq_gap',
        'events',
        key,
        `event #${e.position} is number ${e.stream_seq} of stream ${e.stream}, whose previous event is number ${seq}`,
        { field: 'stream_seq', expected: seq + 1, actual: e.stream_seq },
      );
    }
    this.#streams.set(e.stream, Math.max(seq, e.stream_seq));
  }

  /** The head's checks once every event is in: the head is in the log, and the chain up to it intact. */
  finishHead(): void {
    if (this.#anchor !== null && this.#anchor.position > 0 && !this.#anchorSeen) {
      const end = this.#last?.position ?? 0;
      this.#p.report(
        'head_mismatch',
        'events',
        `#${this.#anchor.position}`,
        `event #${this.#anchor.position}, the given head, is not in the log, which ends at #${end}: events were removed`,
        { field: 'position', expected: this.#anchor.position, actual: end },
      );
    } else if (
      this.#anchorMatches &&
      this.#broken !== null &&
      this.#broken.position <= this.#anchor!.position
    ) {
      // The event at the head is unchanged, but the chain leading to it is not the one it pinned.
      this.#anchorMatches = false;
      this.#p.report(
        'head_mismatch',
        'events',
        `#${this.#anchor!.position}`,
        `the chain is broken at event #${this.#broken.position}, before the given head #${this.#anchor!.position}: the events up to it are not the ones it pinned`,
        { field: 'position', expected: this.#anchor!.position, actual: this.#broken.position },
      );
    }
  }

  /** The counter rows against the log's end and its streams. */
  checkCounters(): void {
    const last = this.#last ?? { position: 0, hash: GENESIS_HASH };
    const head = this.#counterHead;
    if (head === null) {
      if (last.position > 0) {
        this.#p.report(
          'counter_mismatch',
          'event_heads',
          'head',
          `there is no event head row, but the log ends at #${last.position}`,
        );
      }
    } else if (head.position !== last.position || head.hash !== last.hash) {
      this.#p.report(
        'counter_mismatch',
        'event_heads',
        'head',
        `the event head row says #${head.position} (${head.hash.slice(0, 16)}…), the log ends at #${last.position} (${last.hash.slice(0, 16)}…)`,
        { field: 'position', expected: formatHeadAnchor(last), actual: formatHeadAnchor(head) },
      );
    }
    const counted = new Set<string>();
    for (const c of this.#counterStreams) {
      counted.add(c.stream);
      const seq = this.#streams.get(c.stream) ?? 0;
      if (c.seq !== seq) {
        this.#p.report(
          'counter_mismatch',
          'event_streams',
          c.stream,
          `the counter of stream ${c.stream} says ${c.seq} events, the log holds ${seq}${c.seq > seq ? ': events were removed' : ''}`,
          { field: 'seq', expected: seq, actual: c.seq },
        );
      }
    }
    for (const [stream, seq] of this.#streams) {
      if (!counted.has(stream)) {
        this.#p.report(
          'counter_mismatch',
          'event_streams',
          stream,
          `stream ${stream} has ${seq} events but no counter row`,
          {
            field: 'seq',
            expected: seq,
            actual: null,
          },
        );
      }
    }
  }
}
