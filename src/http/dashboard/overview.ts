// The overview: what is stuck first (each problem with its way out), then the counts by status, the failed
// items, what waits for a person, the leases that run out first and the latest events.
import type { Hono } from 'hono';
import type { EventRecord, QueueHistory, WorkItem } from '../../core/types.js';
import type { AppContext, AppEnv } from '../context.js';
import { depthChart, throughputChart } from './charts.js';
import { eventRows, frame, guarded, itemPath, itemRows, run, STATUSES, short, when } from './common.js';
import { type Html, h, href } from './html.js';
import { page } from './layout.js';

/** What `queue_stats` answers (the parts the overview reads). */
interface QueueStats {
  oldest_ready_since: string | null;
  leases_expired: number;
  blocked_on_failure: number;
  last_attempt: number;
  waiting_long: number;
}

/** How long the oldest ready item may wait before it is a problem: no worker is claiming. */
const READY_WAIT_MS = 5 * 60_000;
/** How long a decision may wait for a person before it is a problem. */
const DECISION_WAIT_MS = 60 * 60_000;

/** One problem the overview shows first: what is stuck, the items, and the way out. */
interface Problem {
  what: string;
  detail: Html | string;
  wayOut: Html | string;
}

/** The overview's problems, worst first; empty when nothing is stuck. */
function problemsOf(
  key: string,
  d: {
    stats: QueueStats;
    stuck: WorkItem[];
    pending: WorkItem[];
    waiting: WorkItem[];
    inFlight: WorkItem[];
    now: number;
  },
): Problem[] {
  const item = (i: WorkItem) =>
    h`<a href="${href(itemPath(i.id), { instance: key })}">${short(i.title, 60)}</a>`;
  // Up to five items by name and how many more; none named (beyond the lists read): the status's list.
  const list = (items: WorkItem[], more: number, status = 'pending') =>
    items.length === 0
      ? h`<a href="${href('/items', { instance: key, status })}">see the ${status.replace('_', ' ')} items</a>`
      : h`${items.map((i, n) => h`${n > 0 ? ', ' : ''}${item(i)}`)}${more > 0 ? h` and ${more} more` : ''}`;
  const out: Problem[] = [];
  const s = d.stats;
  if (s.blocked_on_failure > 0) {
    const blockers = [...new Set(d.stuck.flatMap((i) => i.blocked_on_failure ?? []))];
    out.push({
      what: `${s.blocked_on_failure} blocked behind a failure:`,
      detail: list(d.stuck, s.blocked_on_failure - d.stuck.length),
      wayOut: h`Retry the failed blocker (${blockers.map((b, n) => h`${n > 0 ? ', ' : ''}<a href="${href(itemPath(b), { instance: key })}">${b}</a>`)}) so they go on, or cancel the items that should not.`,
    });
  }
  if (s.leases_expired > 0) {
    const expired = d.inFlight.filter(
      (i) => i.lease_expires_at !== null && Date.parse(i.lease_expires_at) <= d.now,
    );
    out.push({
      what: `${s.leases_expired} held past an expired lease:`,
      detail: list(expired.slice(0, 5), s.leases_expired - Math.min(5, expired.length), 'in_flight'),
      wayOut: h`Their worker stopped or stalled: the next claim (or <code>agentstate replay</code>) gives them back; check the worker.`,
    });
  }
  // The counts are the store's (queue_stats); the items named are those of the lists the page read.
  const last = d.pending.filter((i) => i.attempts > 0 && i.attempts >= i.max_attempts - 1).slice(0, 5);
  if (s.last_attempt > 0) {
    out.push({
      what: `${s.last_attempt} on their last attempt:`,
      detail: list(last, s.last_attempt - last.length),
      wayOut: 'One more failure fails them for good: look at their last error before a worker takes them.',
    });
  }
  if (s.oldest_ready_since !== null && d.now - Date.parse(s.oldest_ready_since) > READY_WAIT_MS) {
    out.push({
      what: 'Ready work is waiting:',
      detail: h`the oldest ready item became claimable ${when(s.oldest_ready_since, d.now)} and no one has claimed it.`,
      wayOut: h`No worker is claiming it: start one (<code>agentstate work …</code>), or check that the workers claim its kind.`,
    });
  }
  const old = d.waiting.filter((i) => d.now - Date.parse(i.updated_at) >= DECISION_WAIT_MS).slice(0, 5);
  if (s.waiting_long > 0) {
    out.push({
      what: `${s.waiting_long} waiting for a person for over an hour:`,
      detail: list(old, s.waiting_long - old.length, 'waiting_human'),
      wayOut: 'Open one to answer it (a parked item: unpark or cancel it).',
    });
  }
  return out;
}

/** Mounts the overview at /: problems first, then counts, failures, approvals, leases and recent events. */
export function mountOverview(app: Hono<AppEnv>, ctx: AppContext): void {
  app.get(
    '/',
    guarded(async (c) => {
      const { inst, key, f } = await frame(c, ctx, 'overview', 'Overview');
      const [counts, failed, waiting, inFlight, recent, stats, history] = await Promise.all([
        run<Record<string, number>>(inst, 'count_items'),
        run<WorkItem[]>(inst, 'list_items', { status: 'failed', limit: 20 }),
        run<WorkItem[]>(inst, 'list_items', { status: 'waiting_human', limit: 20 }),
        run<WorkItem[]>(inst, 'list_items', { status: 'in_flight', limit: 200 }),
        run<EventRecord[]>(inst, 'read_events', { reverse: true, limit: 20 }),
        run<QueueStats>(inst, 'queue_stats', { waiting_longer_than_ms: DECISION_WAIT_MS }),
        run<QueueHistory>(inst, 'queue_history'),
      ]);
      // The items a problem names, read only when the counts say there is one to name.
      const [stuck, pending] = await Promise.all([
        stats.blocked_on_failure > 0
          ? run<WorkItem[]>(inst, 'list_items', { blocked_on_failure: true, limit: 5 })
          : [],
        stats.last_attempt > 0 ? run<WorkItem[]>(inst, 'list_items', { status: 'pending', limit: 500 }) : [],
      ]);
      const problems = problemsOf(key, { stats, stuck, pending, waiting, inFlight, now: Date.now() });
      const soon = [...inFlight]
        .sort((a, b) => (a.lease_expires_at ?? '').localeCompare(b.lease_expires_at ?? ''))
        .slice(0, 10);
      const body = h`<h1>Overview of ${key}</h1><div data-live-region>
<section aria-labelledby="h-problems"><h2 id="h-problems">Problems</h2>${
        problems.length === 0
          ? h`<p class="muted">None: nothing is stuck.</p>`
          : h`<ul class="problems">${problems.map((p) => h`<li><b>${p.what}</b> ${p.detail}<div class="way-out">${p.wayOut}</div></li>`)}</ul>`
      }</section>
<ul class="counts" aria-label="Work items by status">${STATUSES.map(
        (s) =>
          h`<li class="${s}"><a href="${href('/items', { instance: key, status: s })}"><b>${counts[s] ?? 0}</b>${s.replace('_', ' ')}</a></li>`,
      )}</ul>
<section aria-labelledby="h-trends"><h2 id="h-trends">Over time</h2><div class="charts">${throughputChart(history)}${depthChart(history)}</div></section>
<div class="grid"><section aria-labelledby="h-failed"><h2 id="h-failed">Failed</h2>${itemRows(key, failed)}</section>
<section aria-labelledby="h-waiting"><h2 id="h-waiting">Waiting for a human</h2>${itemRows(key, waiting)}</section>
<section aria-labelledby="h-leases"><h2 id="h-leases">Leases expiring first</h2>${itemRows(key, soon)}</section>
<section aria-labelledby="h-recent"><h2 id="h-recent">Recent events</h2>${eventRows(key, recent)}<p><a href="${href('/events', { instance: key })}">All events</a></p></section></div></div>`;
      return c.html(page({ ...f, live: href('/api/v1/events', { instance: key }) }, body).value);
    }),
  );
}
