// Kind `schedule`: the body's types, and which ticks of a schedule are due at a time (pure, from the cron
// expression, the time zone, the catch-up policy and the last tick enqueued).
import { Cron } from 'croner';
import type { Json } from '../../core/types.js';
import { SCHEDULE_KEY_PREFIX } from '../../core/work/owners.js';
import { InvalidInputError } from '../../errors.js';
import { CATCH_UP_MAX, type CatchUpPolicy } from './schema.js';

/** The work item each tick enqueues (enqueue's fields; the tick's time is added to an object payload). */
export interface ScheduleItem {
  title: string;
  kind?: string | null;
  payload?: Json;
  priority?: number;
  max_attempts?: number;
  concurrency_key?: string | null;
}

/** A schedule document's body. */
export interface Schedule {
  /** Five fields (minute hour day month weekday) or six (seconds first). */
  cron: string;
  /** IANA time zone the expression is read in [default: UTC]. */
  timezone?: string | null;
  item: ScheduleItem;
  catch_up: CatchUpPolicy;
  enabled: boolean;
  /** When the schedule was added: no tick at or before it is ever enqueued. */
  created_at: string;
  /** The newest tick enqueued (a cursor: exactly-once comes from the items' idempotency keys, not from it). */
  last_tick: string | null;
}

/** Whether `zone` is an IANA time zone this runtime knows. */
function knownZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** The parsed expression, or INVALID_INPUT saying what is wrong with it or with the time zone. */
export function cronOf(expr: string, timezone: string | null | undefined, field = 'cron'): Cron {
  if (timezone != null && !knownZone(timezone)) {
    throw new InvalidInputError(
      `timezone ${JSON.stringify(timezone)} is not an IANA time zone (e.g. UTC, Europe/Berlin, America/New_York)`,
      { field: 'timezone' },
    );
  }
  try {
    return new Cron(expr, {
      paused: true,
      mode: '5-or-6-parts',
      ...(timezone == null ? { timezone: 'UTC' } : { timezone }),
    });
  } catch (err) {
    const why = (err as Error).message.replace(/^CronPattern: /, '');
    throw new InvalidInputError(
      `${field} ${JSON.stringify(expr)} is not a cron expression: ${why} (five fields: minute hour day month weekday, e.g. "*/5 * * * *"; or six, seconds first)`,
      { field },
    );
  }
}

/**
 * The ticks of `s` to enqueue at `now` (epoch ms, oldest first): those after its last tick (or its
 * creation) and at or before `now`, as its catch-up policy says — `latest`: only the newest; `all`: every
 * one, at most the newest CATCH_UP_MAX; `none`: the newest only when it came due within `toleranceMs`
 * (a scheduler that was down skips what it missed). `missed`: the due ticks not enqueued (exact while
 * at most CATCH_UP_MAX came due, a lower bound beyond); `newest`: the
 * newest due tick, enqueued or not (where the cursor moves to).
 */
export function dueTicks(
  s: Pick<Schedule, 'cron' | 'timezone' | 'catch_up' | 'created_at' | 'last_tick'>,
  now: number,
  toleranceMs: number,
): { ticks: number[]; missed: number; newest: number | null } {
  const after = Math.max(Date.parse(s.created_at), s.last_tick ? Date.parse(s.last_tick) : 0);
  if (!(now > after)) return { ticks: [], missed: 0, newest: null };
  const cron = cronOf(s.cron, s.timezone);
  // Forward from the cursor (usually one tick or none); past the cap, the newest CATCH_UP_MAX from `now` back.
  const walked: number[] = [];
  for (let t = cron.nextRun(new Date(after)); t && t.getTime() <= now; t = cron.nextRun(t)) {
    walked.push(t.getTime());
    if (walked.length > CATCH_UP_MAX) break;
  }
  const beyond = walked.length > CATCH_UP_MAX;
  const due = beyond
    ? cron
        .previousRuns(CATCH_UP_MAX, new Date(now + 1))
        .map((d) => d.getTime())
        .filter((t) => t > after && t <= now)
        .reverse()
    : walked;
  const newest = due.at(-1);
  if (newest === undefined) return { ticks: [], missed: 0, newest: null };
  let ticks: number[];
  if (s.catch_up === 'all') ticks = due;
  else if (s.catch_up === 'latest' || now - newest <= toleranceMs) ticks = [newest];
  else ticks = [];
  // Past the cap, what was left out is known only to be more than the cap.
  return { ticks, missed: (beyond ? CATCH_UP_MAX + 1 : due.length) - ticks.length, newest };
}

/** The idempotency key of the item a schedule's tick enqueues: the same for every scheduler. */
export function tickKey(name: string, tick: number): string {
  return `${SCHEDULE_KEY_PREFIX}${name}@${new Date(tick).toISOString()}`;
}
