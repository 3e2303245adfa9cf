// Time helpers: the store keeps epoch milliseconds, the API speaks ISO-8601 UTC.
import { InvalidInputError } from '../errors.js';

/** A clock returning epoch milliseconds; injectable so tests can move time. */
export type Clock = () => number;
/** The real clock: `Date.now()`. */
export const systemClock: Clock = () => Date.now();

/** The clocks `wholeMs` made (wrapping one again would only check it twice). */
const whole = new WeakSet<Clock>();

/**
 * `clock` in whole milliseconds, which is what every backend keeps: an injected clock may return fractions
 * (`performance.timeOrigin + performance.now()`, a simulation), and one that returns no finite number is an
 * error that says so before anything is written.
 */
export function wholeMs(clock: Clock): Clock {
  if (clock === systemClock || whole.has(clock)) return clock;
  const checked: Clock = () => {
    const t = clock();
    if (typeof t !== 'number' || !Number.isFinite(t))
      throw new TypeError(`the store's clock returned ${String(t)}, not epoch milliseconds`);
    return Math.floor(t);
  };
  whole.add(checked);
  return checked;
}

export function toIso(ms: number): string;
export function toIso(ms: number | null | undefined): string | null;
export function toIso(ms: number | null | undefined): string | null {
  if (ms === null || ms === undefined) return null;
  // Whole milliseconds from 1970 to 9999 (four-digit years): the day's text is kept, the time computed.
  // Rows of one batch share a few days at most, and this is called for every time of every row.
  if (!Number.isInteger(ms) || ms < 0 || ms >= MAX_FAST_ISO) return new Date(ms).toISOString();
  let rest = ms % DAY_MS;
  const day = ms - rest;
  if (day !== isoDay) {
    isoDayText = new Date(day).toISOString().slice(0, 11);
    isoDay = day;
  }
  const h = Math.floor(rest / 3_600_000);
  rest -= h * 3_600_000;
  const m = Math.floor(rest / 60_000);
  rest -= m * 60_000;
  const s = Math.floor(rest / 1000);
  const milli = rest - s * 1000;
  return `${isoDayText}${TWO[h]}:${TWO[m]}:${TWO[s]}.${milli < 10 ? '00' : milli < 100 ? '0' : ''}${milli}Z`;
}

const DAY_MS = 86_400_000;
/** 10000-01-01T00:00:00.000Z: from here toISOString writes a six-digit year. */
const MAX_FAST_ISO = 253_402_300_800_000;
const TWO = Array.from({ length: 60 }, (_, i) => String(i).padStart(2, '0'));
let isoDay = -1;
let isoDayText = '';

/**
 * ISO-8601 of epoch ms without a zero millisecond part (`2026-01-31T10:00:00Z`), as the state-file seeds
 * write times (Grid §5.1's `%Y-%m-%dT%H:%M:%SZ`), keeping the milliseconds when there are any.
 */
export function isoTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.000Z$/, 'Z');
}

const DURATION = /^(\d+(?:\.\d+)?)(ms|s|m|h|d|w)$/;
const UNIT_MS: Record<string, number> = {
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 604_800_000,
};
/** Longest duration accepted anywhere: 100 years. */
export const MAX_DURATION_MS = 100 * 365.25 * 86_400_000;

/**
 * The one duration grammar (leases, `--since 24h`, not-before offsets): `<number><unit>` with unit
 * `ms`, `s`, `m`, `h`, `d` or `w`, decimals allowed (`1.5h`), rounded to whole milliseconds, at most 100
 * years. A bare number is refused: `30` could mean seconds or milliseconds.
 * @example parseDuration('30s', 'lease') // 30000
 */
export function parseDuration(value: string, field: string): number {
  const v = value.trim();
  const m = DURATION.exec(v);
  if (!m) {
    const hint = /^\d+(\.\d+)?$/.test(v)
      ? `: give a unit, e.g. ${v}s or ${v}ms`
      : ': use <number><unit> with ms, s, m, h, d or w, e.g. 30s, 5m, 1.5h';
    throw new InvalidInputError(`${field} ${JSON.stringify(value)} is not a duration${hint}`, { field });
  }
  const ms = Math.round(Number(m[1]) * UNIT_MS[m[2]!]!);
  if (!Number.isFinite(ms) || ms > MAX_DURATION_MS) {
    throw new InvalidInputError(`${field} ${JSON.stringify(value)} is longer than 100 years`, { field });
  }
  return ms;
}

const ISO =
  /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(Z|[+-](\d{2}):?(\d{2}))?)?$/i;

function daysIn(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

/**
 * Parses an ISO-8601 date (`2026-11-30`) or date-time (`2026-11-30T10:00:00Z`, offsets allowed) into
 * epoch ms, refusing what Date.parse would silently roll over: `2026-02-30`, `25:61`, a second of 60.
 */
export function parseIsoTime(value: string, field: string): number {
  const m = ISO.exec(value);
  const bad = (why: string): never => {
    throw new InvalidInputError(`${field} ${JSON.stringify(value)} is not a valid ISO-8601 time${why}`, {
      field,
    });
  };
  if (!m) return bad(': write e.g. 2026-11-30 or 2026-11-30T10:00:00Z');
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (month < 1 || month > 12) bad(`: there is no month ${m[2]}`);
  if (day < 1 || day > daysIn(year, month)) bad(`: ${m[1]}-${m[2]} has no day ${m[3]}`);
  if (m[4] !== undefined && (Number(m[4]) > 23 || Number(m[5]) > 59 || Number(m[6] ?? 0) > 59)) {
    bad(': hours go to 23, minutes and seconds to 59');
  }
  if (m[8] !== undefined && (Number(m[8]) > 23 || Number(m[9]) > 59)) bad(': the offset is out of range');
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) bad('');
  return ms;
}

/**
 * The one time grammar of every time input (`not_before`, `since`, `before`, `until`): an ISO-8601 date or
 * date-time, or a duration (`parseDuration`) counted from `now` — back for a bound of the past (`ago`: since
 * `24h`), forward for a time to come (`ahead`: not before `5m`). Returns epoch ms.
 * @example parseTime('2026-11-30T10:00:00Z', 'since') // 1796032800000
 * @example parseTime('5m', 'not_before', now, 'ahead') // now + 300000
 */
export function parseTime(
  value: string,
  field: string,
  now: number = Date.now(),
  direction: 'ago' | 'ahead' = 'ago',
): number {
  const v = value.trim();
  if (/^\d/.test(v) && !/^\d{4}-/.test(v)) {
    const ms = parseDuration(value, field);
    return direction === 'ago' ? now - ms : now + ms;
  }
  if (!/^\d{4}-\d{2}-\d{2}/.test(value)) {
    throw new InvalidInputError(
      `${field} must be an ISO-8601 time or a duration such as 5m or 24h, got ${JSON.stringify(value)}`,
      { field },
    );
  }
  return parseIsoTime(value, field);
}

/** Waits `ms`, or less when `signal` aborts or the function handed to `onWake` is called. */
export function sleep(ms: number, signal?: AbortSignal, onWake?: (wake: () => void) => void): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
    onWake?.(done);
  });
}
