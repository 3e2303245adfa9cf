// An item's attempts, read from its event history: who held it, from when, for how long, and how each attempt
// ended (done, failed, failed and retried later, released, lease ran out, cancelled, still running); drawn as
// a server-rendered SVG timeline (no script, no external asset) over a table that says the same in words.
import { type RunRecord, recordSummary } from '../../core/codecs/run-records.js';
import type { EventRecord, WorkItem } from '../../core/types.js';
import { attemptsText } from '../../core/work/rules.js';
import { duration, exactTime, relative, short } from './common.js';
import { type Html, h } from './html.js';

/** One attempt: a claim and what ended it. */
export interface Attempt {
  attempt: number;
  worker: string;
  started: string;
  /** When it ended; null while it runs. */
  ended: string | null;
  outcome: 'done' | 'failed' | 'retry' | 'released' | 'expired' | 'cancelled' | 'parked' | 'running';
  error: string | null;
  /** For a retried failure: not claimable before this time. */
  retryAt: string | null;
}

const OUTCOME: Record<Attempt['outcome'], string> = {
  done: 'done',
  failed: 'failed',
  retry: 'failed, tried again',
  released: 'handed back',
  expired: 'lease ran out',
  cancelled: 'cancelled',
  parked: 'parked for a person',
  running: 'running',
};

const obj = (d: unknown): Record<string, unknown> =>
  typeof d === 'object' && d !== null && !Array.isArray(d) ? (d as Record<string, unknown>) : {};
const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);

/** The attempts of `item` from its events (oldest first, as `read_events` gives them). */
export function attemptsOf(item: WorkItem, events: EventRecord[]): Attempt[] {
  const out: Attempt[] = [];
  let open: Attempt | null = null;
  const end = (at: string, outcome: Attempt['outcome'], error: unknown = null, retryAt: unknown = null) => {
    if (!open) return;
    Object.assign(open, { ended: at, outcome, error: str(error), retryAt: str(retryAt) });
    open = null;
  };
  for (const e of events) {
    const d = obj(e.data);
    switch (e.type) {
      case 'work_item_claimed':
        end(e.created_at, 'expired');
        open = {
          attempt: typeof d.attempt === 'number' ? d.attempt : out.length + 1,
          worker: str(d.worker) ?? e.actor ?? '',
          started: e.created_at,
          ended: null,
          outcome: 'running',
          error: null,
          retryAt: null,
        };
        out.push(open);
        break;
      case 'work_item_resolved': {
        const status = str(d.status);
        end(
          e.created_at,
          status === 'done'
            ? 'done'
            : status === 'pending'
              ? 'retry'
              : status === 'waiting_human'
                ? 'parked'
                : 'failed',
          d.error,
          d.retry_at,
        );
        break;
      }
      case 'work_item_released':
        end(e.created_at, 'released');
        break;
      case 'work_item_reclaimed':
        // Its data's error is the item's as it was (an earlier attempt's), not this attempt's.
        end(e.created_at, 'expired');
        break;
      case 'work_item_cancelled':
        end(e.created_at, 'cancelled', d.reason ?? d.error);
        break;
    }
  }
  // An attempt with no end in the log: still running if the item is in flight on it.
  if (open && item.status !== 'in_flight') (open as Attempt).outcome = 'expired';
  return out;
}

/** The narrowest bar, in the drawing's 600 units: about 7 px at a phone's width, so a 0 ms attempt shows. */
const MIN_BAR = 12;

/**
 * The attempts as an SVG timeline and a table; empty when the item was never claimed. Times are exact (UTC, to
 * the millisecond) and durations too (`0 ms`, `340 ms`, `8.3 s`): attempts are often shorter than what a
 * relative time can tell apart. Every bar is at least MIN_BAR wide, so the shortest attempt is still seen.
 */
export function attemptTimeline(
  item: WorkItem,
  attempts: Attempt[],
  records: RunRecord[] = [],
  now: number = Date.now(),
): Html | string {
  if (attempts.length === 0) return '';
  const first = attempts[0]!;
  const last = attempts.at(-1)!;
  const t0 = Date.parse(first.started);
  const endOf = (a: Attempt) => (a.ended ? Date.parse(a.ended) : now);
  const t1 = Math.max(...attempts.map(endOf), t0 + 1);
  const W = 600;
  const ROW = 22;
  const x = (t: number) => ((t - t0) / (t1 - t0)) * (W - 2) + 1;
  const tenth = (v: number) => Math.round(v * 10) / 10;
  /** An attempt's bar: where it starts and ends, widened to MIN_BAR and kept inside the drawing. */
  const bar = (a: Attempt) => {
    const from = x(Date.parse(a.started));
    const width = Math.max(MIN_BAR, x(endOf(a)) - from);
    return { x: tenth(Math.min(from, W - 1 - width)), width: tenth(width) };
  };
  const took = (a: Attempt) => duration(endOf(a) - Date.parse(a.started));
  const day = (t: string) => new Date(Date.parse(t)).toISOString().slice(0, 10);
  /** A time of the attempts: its clock alone on the first attempt's day (said once, above the table). */
  const at = (t: string) => exactTime(t, now, day(t) === day(first.started));
  const summary = attempts
    .map((a) => `attempt ${a.attempt} by ${a.worker}: ${OUTCOME[a.outcome]} after ${took(a)}`)
    .join('; ');
  /** The durable run's records made in an attempt: a mark each, on its bar, where it was recorded. */
  const row = new Map(attempts.map((a, n) => [a.attempt, n]));
  const marks = records.flatMap((r) => {
    const n = r.type === 'reset' ? undefined : row.get(r.attempt);
    if (n === undefined) return [];
    const mx = tenth(Math.min(W - 3, Math.max(2, x(Date.parse(r.at)))));
    return [
      h`<rect class="mark m-${markClass(r)}" x="${tenth(mx - 1.5)}" y="${n * ROW + 2}" width="3" height="${ROW - 4}"><title>${`${recordSummary(r)}, attempt ${(r as { attempt: number }).attempt}`}</title></rect>`,
    ];
  });
  const marked = marks.length > 0 ? `; ${records.length} records of its durable run marked` : '';
  const svg = h`<svg class="timeline" width="100%" height="${attempts.length * ROW + 4}" viewBox="0 0 ${W} ${attempts.length * ROW + 4}" preserveAspectRatio="none" role="img" aria-label="${`Attempts over ${duration(t1 - t0)}: ${summary}${marked}`}">${attempts.map(
    (a, n) =>
      h`<rect class="o-${a.outcome}" x="${bar(a).x}" y="${n * ROW + 4}" width="${bar(a).width}" height="${ROW - 8}" rx="2"><title>${`attempt ${a.attempt}, ${a.worker}: ${OUTCOME[a.outcome]} after ${took(a)}`}</title></rect>`,
  )}${marks}</svg><p class="muted">From ${exactTime(first.started, now)} to ${last.ended ? at(last.ended) : 'now'} UTC (${relative(first.started, now)}): ${duration(t1 - t0)}.</p>`;
  return h`<section aria-labelledby="h-attempts"><h2 id="h-attempts">Attempts: ${attemptsText(item)}</h2>${svg}
<div class="wrap"><table class="stack"><thead><tr><th>#</th><th>Worker</th><th>Started (UTC)</th><th>Took</th><th>Outcome</th></tr></thead><tbody>${attempts.map(
    (a) =>
      h`<tr><td class="num">${a.attempt}</td><td class="nb">${a.worker}</td><td class="nb">${at(a.started)} <span class="muted">(${relative(a.started, now)})</span></td><td class="num">${took(a)}${a.ended ? '' : ' so far'}</td><td><span class="badge o-${a.outcome}">${OUTCOME[a.outcome]}</span>${a.retryAt ? h` <span class="muted">next try ${at(a.retryAt)}</span>` : ''}${a.error ? h`<div class="problem">${a.error}</div>` : ''}</td></tr>`,
  )}</tbody></table></div></section>`;
}

/** How a record's mark is drawn: a step done, a step failed, or a pause (sleep, wait). */
function markClass(r: RunRecord): 'done' | 'failed' | 'pause' {
  if (r.type === 'step') return r.status === 'completed' ? 'done' : 'failed';
  return 'pause';
}

/**
 * What the item's durable run recorded, in order (docs/runs.md): each step with its attempt, duration and
 * result or error; sleeps, waits and signals taken; resets. Empty when it recorded nothing.
 */
export function runSection(records: RunRecord[], now: number = Date.now()): Html | string {
  if (records.length === 0) return '';
  const result = (r: RunRecord): Html | string => {
    switch (r.type) {
      case 'step':
        return r.status === 'completed'
          ? h`<code>${short(JSON.stringify(r.result), 160)}</code>`
          : h`<div class="problem">${r.error}</div>`;
      case 'sleep':
        return h`until ${exactTime(r.wake_at, now)} UTC`;
      case 'waiting':
        return r.timeout_at === null
          ? 'for the signal'
          : h`for the signal, or until ${exactTime(r.timeout_at, now)} UTC`;
      case 'waited':
        return r.outcome === 'timeout'
          ? 'timed out'
          : h`signalled by ${r.sent_by ?? 'unknown'}: <code>${short(JSON.stringify(r.payload), 120)}</code>`;
      case 'reset':
        return h`reset by ${r.actor ?? 'unknown'} (${r.actor_kind})${r.reason ? h`: ${r.reason}` : ''}`;
    }
  };
  const status = (r: RunRecord) =>
    r.type === 'step' ? r.status : r.type === 'waiting' ? 'waiting' : r.type === 'waited' ? 'waited' : r.type;
  return h`<section aria-labelledby="h-run"><h2 id="h-run">Durable run (${records.length} record${records.length === 1 ? '' : 's'})</h2>
<p class="muted">What the handler recorded: a later attempt gets these back instead of doing them again. Each is marked on its attempt above.</p>
<div class="wrap"><table class="stack"><thead><tr><th>Place</th><th>Call</th><th>Status</th><th>Attempt</th><th>Took</th><th>Result</th></tr></thead><tbody>${records.map(
    (r) =>
      h`<tr><td class="num">${r.type === 'reset' ? h`<span class="muted">from ${r.from_seq}</span>` : r.seq}</td><td class="nb">${r.type === 'waiting' || r.type === 'waited' ? 'wait' : r.type} <strong>${r.name}</strong>${r.occurrence > 1 ? h` <span class="muted">#${r.occurrence}</span>` : ''}</td><td><span class="badge m-${markClass(r)}">${status(r)}</span></td><td class="num">${r.type === 'reset' ? '' : r.attempt}</td><td class="num">${r.type === 'step' ? `${duration(r.duration_ms)}${r.tries > 1 ? ` (${r.tries} tries)` : ''}` : ''}</td><td>${result(r)}</td></tr>`,
  )}</tbody></table></div></section>`;
}
