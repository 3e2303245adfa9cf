// Replay: what a run's records hold at each of its places (after any resets), the signals no wait has taken
// yet, and the idempotency key of a step.
import { createHash } from 'node:crypto';
import type {
  CompletedStep,
  RecordPlace,
  RunRecord,
  SignalRecord,
  SleepRecord,
  WaitedRecord,
  WaitingRecord,
} from '../codecs/run-records.js';

/** What a place of a run holds on replay: a completed step, a sleep, or a wait (begun, or ended). */
export type PlaceRecord = CompletedStep | SleepRecord | WaitingRecord | WaitedRecord;

/** The kind of call a place is: what the handler called there. */
export type CallType = 'step' | 'sleep' | 'wait';

/** The kind of call that made a record: a wait's beginning and end are both a `wait`. */
export const callOf = (r: PlaceRecord): CallType =>
  r.type === 'waiting' || r.type === 'waited' ? 'wait' : r.type;

/** What replay finds at each place of a run (its step results, sleeps and waits, after any resets), and its signals. */
export class RunJournal {
  /** Every record, in log order (failed steps and resets included): what `work.steps` lists. */
  readonly records: RunRecord[];
  /** The signals sent to the item, in log order. */
  readonly signals: SignalRecord[];
  readonly #at = new Map<number, PlaceRecord>();
  /** How many resets took away the record of a name and occurrence (it is part of the step's key). */
  readonly #generation = new Map<string, number>();

  constructor(records: RunRecord[], signals: SignalRecord[] = []) {
    this.records = records;
    this.signals = signals;
    for (const r of records) {
      if (r.type === 'reset') {
        for (const [seq, kept] of this.#at) {
          if (seq < r.from_seq) continue;
          this.#at.delete(seq);
          const k = placeKey(kept.name, kept.occurrence);
          this.#generation.set(k, (this.#generation.get(k) ?? 0) + 1);
        }
      } else if (r.type === 'step') {
        if (r.status === 'completed') this.#at.set(r.seq, r);
      } else if (r.type !== 'waiting' || this.#at.get(r.seq)?.type !== 'waited') {
        // A wait's end replaces its beginning (a beginning recorded again later never replaces its end).
        this.#at.set(r.seq, r);
      }
    }
  }

  /** The record replay returns at `seq`, if any. */
  at(seq: number): PlaceRecord | undefined {
    return this.#at.get(seq);
  }

  /** The recorded place of `name`'s `occurrence` (the first such record kept), for a reset. */
  placeOf(name: string, occurrence: number): RecordPlace | undefined {
    for (const r of this.#at.values()) if (r.name === name && r.occurrence === occurrence) return r;
    return undefined;
  }

  /** How many resets took away the record of `name`'s `occurrence` (part of its step key). */
  generation(name: string, occurrence: number): number {
    return this.#generation.get(placeKey(name, occurrence)) ?? 0;
  }

  /** The positions of the signals the run's ended waits took (a reset gives them back). */
  taken(): Set<number> {
    const out = new Set<number>();
    for (const r of this.#at.values()) {
      if (r.type === 'waited' && r.signal_position !== null) out.add(r.signal_position);
    }
    return out;
  }
}

/** The oldest signal named `name` among `signals` that no wait has taken (`taken`: their positions). */
export function freeSignal(
  signals: SignalRecord[],
  name: string,
  taken: ReadonlySet<number>,
): SignalRecord | undefined {
  return signals.find((s) => s.name === name && !taken.has(s.position));
}

const placeKey = (name: string, occurrence: number) => `${occurrence}\u0000${name}`;

/** The idempotency key of a step: stable across attempts, new after a reset. */
export function stepKey(id: string, name: string, occurrence: number, generation: number): string {
  const h = createHash('sha256')
    .update(`${id}\u0000${name}\u0000${occurrence}\u0000${generation}`)
    .digest('base64url');
  return `as1_${h.slice(0, 39)}`;
}
