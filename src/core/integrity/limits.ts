// Concurrency and rate limits against their events, as verify checks them: each key's limit as its last
// work_limit_set says (a work_limit_removed drops it), compared with the work_limits rows.
import type { LimitRowDump, StoredEvent } from '../backend.js';
import { LIMIT_EVENT_CODECS, type LimitEventCodec, type LimitFold } from '../codecs/limits.js';
import type { JsonObject } from '../types.js';
import type { Problems } from './problems.js';

/** The limits' check: feed it their events in position order and their rows, then `checkLimits`. */
export class LimitCheck {
  readonly #p: Problems;
  /** Each limited key's limit, as its last work_limit_set says (removed ones gone). */
  readonly #limits = new Map<string, LimitFold>();
  readonly #limitRows: LimitRowDump[] = [];

  /** `problems`: where the check reports. */
  constructor(problems: Problems) {
    this.#p = problems;
  }

  /** One work_limits row. */
  row(row: LimitRowDump): void {
    this.#limitRows.push(row);
  }

  /** work_limit_set / work_limit_removed: the key's limit as the log says it is now. */
  event(e: StoredEvent, d: JsonObject): void {
    if (typeof d.key !== 'string') {
      this.#p.report(
        'event_malformed',
        'events',
        `#${e.position}`,
        `event #${e.position} (${e.type}) names no key`,
      );
      return;
    }
    // verify routes here only the types LIMIT_EVENT_CODECS has.
    (LIMIT_EVENT_CODECS.get(e.type) as LimitEventCodec).fold(this.#limits, d as JsonObject & { key: string });
  }

  /** Every limit row against its key's last limit event, and every limit the log sets against a row. */
  checkLimits(): void {
    const seen = new Set<string>();
    for (const r of this.#limitRows) {
      seen.add(r.key);
      const s = this.#limits.get(r.key);
      if (!s) {
        this.#p.report('event_missing', 'work_limits', r.key, `limit ${r.key} has no work_limit_set event`);
        continue;
      }
      const rate = r.rate_count === null ? null : { count: r.rate_count, period_ms: r.rate_period_ms };
      this.#p.differs('work_limits', r.key, 'max_in_flight', s.max_in_flight, r.max_in_flight);
      this.#p.differs('work_limits', r.key, 'rate', s.rate, rate);
    }
    for (const key of this.#limits.keys()) {
      if (!seen.has(key))
        this.#p.report('row_missing', 'work_limits', key, `limit ${key} is in the log but has no row`);
    }
  }
}
