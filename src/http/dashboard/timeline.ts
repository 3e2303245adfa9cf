// An item's attempts, read from its event history: who held it, from when, for how long, and how each attempt
// ended (done, failed, failed and retried later, released, lease ran out, cancelled, still running); drawn as
// a server-rendered SVG timeline (no script, no external asset) over a table that says the same in words.
import type { EventRecord, WorkItem } from '../../core/types.js';
import { span, when } from './common.js';
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

/** The attempts as an SVG timeline and a table; empty when the item was never claimed. */
export function attemptTimeline(
  item: WorkItem,
  attempts: Attempt[],
  now: number = Date.now(),
): Html | string {
  if (attempts.length === 0) return '';
  const t0 = Date.parse(attempts[0]!.started);
  const endOf = (a: Attempt) => (a.ended ? Date.parse(a.ended) : now);
  const t1 = Math.max(...attempts.map(endOf), t0 + 1);
  const W = 600;
  const ROW = 22;
  const x = (t: number) => Math.round(((t - t0) / (t1 - t0)) * (W - 2) * 10) / 10 + 1;
  const took = (a: Attempt) => span(endOf(a) - Date.parse(a.started));
  const summary = attempts
    .map((a) => `attempt ${a.attempt} by ${a.worker}: ${OUTCOME[a.outcome]} after ${took(a)}`)
    .join('; ');
  const svg = h`<svg class="timeline" width="100%" height="${attempts.length * ROW + 4}" viewBox="0 0 ${W} ${attempts.length * ROW + 4}" preserveAspectRatio="none" role="img" aria-label="${`Attempts over ${span(t1 - t0)}: ${summary}`}">${attempts.map(
    (a, n) =>
      h`<rect class="o-${a.outcome}" x="${x(Date.parse(a.started))}" y="${n * ROW + 4}" width="${Math.max(2, x(endOf(a)) - x(Date.parse(a.started)))}" height="${ROW - 8}" rx="2"><title>${`attempt ${a.attempt}, ${a.worker}: ${OUTCOME[a.outcome]} after ${took(a)}`}</title></rect>`,
  )}</svg><p class="muted">From ${when(attempts[0]!.started, now)} to ${attempts.at(-1)!.ended ? when(attempts.at(-1)!.ended, now) : 'now'}: ${span(t1 - t0)}.</p>`;
  return h`<section aria-labelledby="h-attempts"><h2 id="h-attempts">Attempts (${attempts.length} of ${item.max_attempts})</h2>${svg}
<div class="wrap"><table class="stack"><thead><tr><th>#</th><th>Worker</th><th>Started</th><th>Took</th><th>Outcome</th></tr></thead><tbody>${attempts.map(
    (a) =>
      h`<tr><td class="num">${a.attempt}</td><td class="nb">${a.worker}</td><td>${when(a.started, now)}</td><td class="num">${took(a)}${a.ended ? '' : ' so far'}</td><td><span class="badge o-${a.outcome}">${OUTCOME[a.outcome]}</span>${a.retryAt ? h` <span class="muted">next try ${when(a.retryAt, now)}</span>` : ''}${a.error ? h`<div class="problem">${a.error}</div>` : ''}</td></tr>`,
  )}</tbody></table></div></section>`;
}
