// The dashboard's pages, mounted on the serve app: server-rendered HTML from the operation table (the same
// runOperation every edge calls), paginated, with a small script for live regions. Writes go through a
// confirmation page and are recorded as the signed-in human's (actor_kind human).
import type { Context, Hono } from 'hono';
import type { EventRecord, WorkItem } from '../../core/types.js';
import { ownerOf } from '../../core/work-rules.js';
import { ERROR_TABLE, toAgentStateError } from '../../errors.js';
import type { Instance } from '../../instance/instance.js';
import { getKind, kindNames } from '../../kinds/registry.js';
import { runOperation } from '../../service/invoke.js';
import { getOperation } from '../../service/table.js';
import { type AppContext, type AppEnv, attributed, instanceOf } from '../context.js';
import { APP_CSS, APP_JS } from './assets.js';
import { type Html, h, href, pretty } from './html.js';
import { page } from './layout.js';

type C = Context<AppEnv>;

const STATUSES = ['failed', 'waiting_human', 'in_flight', 'pending', 'done', 'cancelled'] as const;
const PAGE = 50;

/** The filters of a list page that are set (an empty parameter is unset): shown in its form, passed to its call. */
function filters<K extends string>(c: C, ...names: K[]): Partial<Record<K, string>> {
  const set: Partial<Record<K, string>> = {};
  for (const name of names) {
    const v = c.req.query(name);
    if (v) set[name] = v;
  }
  return set;
}

/** How many rows a list page shows: its `limit` parameter (1 to 1000), PAGE when absent or not a number. */
const pageLimit = (c: C) => Math.min(Math.max(Number(c.req.query('limit') ?? PAGE) || PAGE, 1), 1000);
/** The actions an item page offers, each the operation it runs, and what its confirmation asks. */
const ACTIONS: Record<
  string,
  { op: string; label: string; ask: string | ((i: WorkItem) => string); when: (i: WorkItem) => boolean }
> = {
  retry: {
    op: 'retry',
    label: 'Retry',
    ask: (i) =>
      isDecision(i)
        ? 'Ask this decision again? It waits for a human’s answer once more (its history is kept).'
        : 'Put this item back in the queue with a fresh attempt budget (its history is kept)?',
    when: (i) => i.status === 'failed' || i.status === 'cancelled',
  },
  cancel: {
    op: 'cancel',
    label: 'Cancel',
    ask: (i) =>
      isDecision(i)
        ? 'Cancel this decision? Its question stays unanswered until a person asks it again (Retry).'
        : 'Cancel this item? It will not run again.',
    // A parked approval is approved or rejected (below); a decision's is cancelled here.
    when: (i) =>
      i.status === 'pending' || i.status === 'in_flight' || (i.status === 'waiting_human' && isDecision(i)),
  },
  release: {
    op: 'release',
    label: 'Release lease',
    ask: 'Hand this item back to the queue (the worker holding it loses its lease)?',
    when: (i) => i.status === 'in_flight',
  },
  park: {
    op: 'park',
    label: 'Park for a human',
    ask: 'Park this item (waiting_human)?',
    when: (i) => i.status === 'pending',
  },
  approve: {
    op: 'unpark',
    label: 'Approve',
    ask: 'Approve this parked item? It goes back to the queue and runs.',
    when: (i) => i.status === 'waiting_human' && !isDecision(i),
  },
  reject: {
    op: 'cancel',
    label: 'Reject',
    ask: 'Reject this parked item? It is cancelled and does not run.',
    when: (i) => i.status === 'waiting_human' && !isDecision(i),
  },
};

/** What the item page says after an action went through (`?done=`). */
const DONE: Record<string, string> = {
  retry: 'Retried: the item is back in the queue with a fresh attempt budget.',
  cancel: 'Cancelled: the item will not run.',
  release: 'Released: the item is back in the queue; its worker lost the lease.',
  park: 'Parked: the item waits for a person.',
  approve: 'Approved: the item is back in the queue.',
  reject: 'Rejected: the item is cancelled.',
  answer: 'Answered: the decision is recorded as yours.',
};

/**
 * A human decision is an item a document's commit enqueued (its key is the store's own `doc:…`, which no
 * plain enqueue may use), never an item whose payload merely looks like one.
 */
const isDecision = (i: WorkItem) => ownerOf(i) !== null;

const fmtTime = (t: string | null) => (t ? t.replace('T', ' ').replace(/\.\d+Z$/, 'Z') : '');

/** `ms` as a short duration: 45 s, 12 min, 3 h, 2 d. */
function span(ms: number): string {
  const s = Math.round(Math.abs(ms) / 1000);
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.round(s / 60)} min`;
  if (s < 172_800) return `${Math.round(s / 3600)} h`;
  return `${Math.round(s / 86_400)} d`;
}

/** A time as people read it on a dashboard: relative ("5 min ago", "in 40 s"), the exact time on hover. */
export function when(t: string | null, now: number = Date.now()): Html | string {
  if (!t) return '';
  const d = Date.parse(t) - now;
  const rel = Math.abs(d) < 1000 ? 'now' : d < 0 ? `${span(d)} ago` : `in ${span(d)}`;
  return h`<time datetime="${t}" title="${fmtTime(t)}">${rel}</time>`;
}

/** A name that may wrap only after its separators (`_`, `:`, `/`, `.`), never inside a word. */
function breakable(name: string): Html {
  return h`${name.split(/(?<=[_:/.])/).map((part, i) => (i === 0 ? part : h`<wbr>${part}`))}`;
}

/** What `queue_stats` answers (the parts the overview reads). */
interface QueueStats {
  oldest_ready_since: string | null;
  leases_expired: number;
  blocked_on_failure: number;
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
    h`<a href="${href(`/items/${encodeURIComponent(i.id)}`, { instance: key })}">${short(i.title, 60)}</a>`;
  const list = (items: WorkItem[], more: number) =>
    h`${items.map((i, n) => h`${n > 0 ? ', ' : ''}${item(i)}`)}${more > 0 ? h` and ${more} more` : ''}`;
  const out: Problem[] = [];
  const s = d.stats;
  if (s.blocked_on_failure > 0) {
    const blockers = [...new Set(d.stuck.flatMap((i) => i.blocked_on_failure ?? []))];
    out.push({
      what: `${s.blocked_on_failure} blocked behind a failure:`,
      detail: list(d.stuck, s.blocked_on_failure - d.stuck.length),
      wayOut: h`Retry the failed blocker (${blockers.map((b, n) => h`${n > 0 ? ', ' : ''}<a href="${href(`/items/${encodeURIComponent(b)}`, { instance: key })}">${b}</a>`)}) so they go on, or cancel the items that should not.`,
    });
  }
  if (s.leases_expired > 0) {
    const expired = d.inFlight.filter(
      (i) => i.lease_expires_at !== null && Date.parse(i.lease_expires_at) <= d.now,
    );
    out.push({
      what: `${s.leases_expired} held past an expired lease:`,
      detail: list(expired.slice(0, 5), s.leases_expired - Math.min(5, expired.length)),
      wayOut: h`Their worker stopped or stalled: the next claim (or <code>agentstate replay</code>) gives them back; check the worker.`,
    });
  }
  const last = d.pending.filter((i) => i.attempts > 0 && i.attempts >= i.max_attempts - 1);
  if (last.length > 0) {
    out.push({
      what: `${last.length} on their last attempt:`,
      detail: list(last.slice(0, 5), last.length - Math.min(5, last.length)),
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
  const old = d.waiting.filter((i) => d.now - Date.parse(i.updated_at) > DECISION_WAIT_MS);
  if (old.length > 0) {
    out.push({
      what: `${old.length} waiting for a person for over an hour:`,
      detail: list(old.slice(0, 5), old.length - Math.min(5, old.length)),
      wayOut: 'Open one to answer it (a parked item: unpark or cancel it).',
    });
  }
  return out;
}

/** The lease of an item as a cell: its holder and when it runs out while in flight, who last held it after. */
function lease(i: WorkItem): Html | string {
  if (i.status === 'in_flight' && i.lease_owner) {
    const ended = i.lease_expires_at !== null && Date.parse(i.lease_expires_at) <= Date.now();
    return ended
      ? h`<span class="problem">${i.lease_owner}, lease ended ${when(i.lease_expires_at)}</span>`
      : h`${i.lease_owner}, lease ends ${when(i.lease_expires_at)}`;
  }
  return i.lease_owner ? h`<span class="muted">last held by ${i.lease_owner}</span>` : '';
}

function short(v: unknown, max = 140): string {
  const s = typeof v === 'string' ? v : (JSON.stringify(v) ?? '');
  return s.length > max ? `${s.slice(0, max)}…` : s;
}

/** The instance a request names, and its key (`host/name`) for links. */
async function opened(c: C, ctx: AppContext) {
  const inst = await instanceOf(c, ctx.registry);
  return { inst, key: `${inst.host}/${inst.name}` };
}

async function frame(
  c: C,
  ctx: AppContext,
  section: 'overview' | 'items' | 'events' | 'documents' | 'files',
  title: string,
) {
  const { inst, key } = await opened(c, ctx);
  const caller = c.get('caller');
  return {
    inst,
    key,
    f: {
      title,
      section,
      instance: key,
      instances: await ctx.registry.list(),
      actor: caller.via === 'session' ? caller.principal.name : null,
      csrf: caller.via === 'session' ? caller.session.csrf : null,
      path: new URL(c.req.url).pathname,
    },
  };
}

const run = <T>(inst: Instance, op: string, input: Record<string, unknown> = {}) =>
  runOperation(inst, op, input) as Promise<T>;

function itemRows(key: string, items: WorkItem[], select = false): Html {
  if (items.length === 0) return h`<p class="muted">None.</p>`;
  return h`<div class="wrap"><table class="stack"><thead><tr>${select ? h`<th><input type="checkbox" id="select-all" aria-label="Select all"></th>` : ''}<th>Item</th><th>Status</th><th class="opt">Kind</th><th class="opt">Attempts</th><th>Error / lease</th><th class="opt">Updated</th></tr></thead><tbody>${items.map(
    (i) =>
      h`<tr>${select ? h`<td><input type="checkbox" name="id" value="${i.id}" aria-label="Select ${i.title}"></td>` : ''}<td><a href="${href(`/items/${encodeURIComponent(i.id)}`, { instance: key })}">${short(i.title, 90)}</a><div class="muted id">${i.id}</div></td><td><span class="badge st-${i.status}">${i.status}</span></td><td class="opt nb">${i.kind ?? ''}</td><td class="opt num">${i.attempts}/${i.max_attempts}</td><td>${i.error ? h`<span class="problem">${short(i.error, 120)}</span>` : lease(i)}</td><td class="opt">${when(i.updated_at)}</td></tr>`,
  )}</tbody></table></div>`;
}

function eventRows(key: string, events: EventRecord[]): Html {
  if (events.length === 0) return h`<p class="muted">No events.</p>`;
  return h`<div class="wrap"><table class="stack"><thead><tr><th>#</th><th>Type</th><th class="opt">Time</th><th class="opt">Stream</th><th>Actor</th><th>Data</th></tr></thead><tbody>${events.map(
    (e) =>
      h`<tr><td class="num">${e.position}</td><td class="nb">${breakable(e.type)}</td><td class="opt">${when(e.created_at)}</td><td class="opt nb">${breakable(e.stream)}</td><td class="nb">${e.actor ?? ''}</td><td class="data">${e.work_item_id ? h`<a href="${href(`/items/${encodeURIComponent(e.work_item_id)}`, { instance: key })}">${e.work_item_id}</a> ` : ''}<code>${short(e.data)}</code></td></tr>`,
  )}</tbody></table></div>`;
}

/** The page the browser came from, when it is one of ours (the CSP allows no `javascript:` link). */
function back(c: C): string {
  const ref = c.req.header('referer');
  if (!ref) return '/';
  try {
    const u = new URL(ref);
    return u.host === c.req.header('host') ? `${u.pathname}${u.search}` : '/';
  } catch {
    return '/';
  }
}

/** An error page with the error table's status (no stack trace). */
function errorPage(c: C, err: unknown): Response {
  const e = toAgentStateError(err);
  if (e.code === 'UNAUTHENTICATED') return c.redirect('/login', 303);
  const body = h`<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${e.code} · agentstate</title><link rel="stylesheet" href="/assets/app.css"></head><body><header><strong>agentstate</strong><nav aria-label="Sections"><a href="/">Overview</a><a href="/items">Work items</a><a href="/events">Events</a><a href="/documents">Documents</a><a href="/files">State files</a></nav></header><main><h1>${e.code}</h1><p class="problem" role="alert">${e.message}</p><p><a href="${back(c)}">Back</a> · <a href="/">Overview</a></p></main></body></html>`;
  return c.html(body.value, ERROR_TABLE[e.code].http as 400);
}

function guarded(fn: (c: C) => Promise<Response>) {
  return async (c: C) => {
    try {
      return await fn(c);
    } catch (err) {
      return errorPage(c, err);
    }
  };
}

/** Mounts the dashboard at /. */
export function mountDashboard(app: Hono<AppEnv>, ctx: AppContext): void {
  app.get('/assets/app.js', (c) =>
    c.body(APP_JS, 200, { 'content-type': 'text/javascript; charset=utf-8', 'cache-control': 'max-age=300' }),
  );
  app.get('/assets/app.css', (c) =>
    c.body(APP_CSS, 200, { 'content-type': 'text/css; charset=utf-8', 'cache-control': 'max-age=300' }),
  );

  app.get(
    '/',
    guarded(async (c) => {
      const { inst, key, f } = await frame(c, ctx, 'overview', 'Overview');
      const [counts, failed, waiting, inFlight, recent, stats, stuck, pending] = await Promise.all([
        run<Record<string, number>>(inst, 'count_items'),
        run<WorkItem[]>(inst, 'list_items', { status: 'failed', limit: 20 }),
        run<WorkItem[]>(inst, 'list_items', { status: 'waiting_human', limit: 20 }),
        run<WorkItem[]>(inst, 'list_items', { status: 'in_flight', limit: 200 }),
        run<EventRecord[]>(inst, 'read_events', { reverse: true, limit: 20 }),
        run<QueueStats>(inst, 'queue_stats'),
        run<WorkItem[]>(inst, 'list_items', { blocked_on_failure: true, limit: 5 }),
        run<WorkItem[]>(inst, 'list_items', { status: 'pending', limit: 500 }),
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
<div class="grid"><section aria-labelledby="h-failed"><h2 id="h-failed">Failed</h2>${itemRows(key, failed)}</section>
<section aria-labelledby="h-waiting"><h2 id="h-waiting">Waiting for a human</h2>${itemRows(key, waiting)}</section>
<section aria-labelledby="h-leases"><h2 id="h-leases">Leases expiring first</h2>${itemRows(key, soon)}</section>
<section aria-labelledby="h-recent"><h2 id="h-recent">Recent events</h2>${eventRows(key, recent)}<p><a href="${href('/events', { instance: key })}">All events</a></p></section></div></div>`;
      return c.html(page({ ...f, live: href('/api/v1/events', { instance: key }) }, body).value);
    }),
  );

  app.get(
    '/items',
    guarded(async (c) => {
      const { inst, key, f } = await frame(c, ctx, 'items', 'Work items');
      const filter = filters(c, 'status', 'kind');
      const { status, kind } = filter;
      const q = (c.req.query('q') ?? '').trim().toLowerCase();
      const limit = pageLimit(c);
      const all = await run<WorkItem[]>(inst, 'list_items', { ...filter, limit: q ? 1000 : limit + 1 });
      const matched = q
        ? all.filter((i) => `${i.title} ${i.id} ${i.error ?? ''}`.toLowerCase().includes(q))
        : all;
      const shown = matched.slice(0, limit);
      const more = matched.length > limit;
      const bulk = status === 'failed' && shown.length > 0;
      const table = itemRows(key, shown, bulk);
      const retried = Number(c.req.query('retried'));
      const notice =
        Number.isSafeInteger(retried) && retried > 0
          ? h`<p class="notice" role="status">Retried ${retried} item${retried === 1 ? '' : 's'}: back in the queue with a fresh attempt budget.</p>`
          : '';
      const body = h`<h1>Work items</h1>${notice}
<form class="filters" method="get" action="/items"><input type="hidden" name="instance" value="${key}">
<div><label for="f-status">Status</label><select id="f-status" name="status"><option value="">any</option>${STATUSES.map((s) => h`<option${s === status ? h` selected` : ''}>${s}</option>`)}</select></div>
<div><label for="f-kind">Kind</label><input id="f-kind" name="kind" value="${kind ?? ''}"></div>
<div><label for="f-q">Text</label><input id="f-q" name="q" type="search" value="${q}"></div><button type="submit">Filter</button></form>
<div data-live-region>${
        bulk
          ? h`<form method="get" action="/items/bulk-confirm"><input type="hidden" name="instance" value="${key}">${table}<div class="actions"><button type="submit" class="primary">Retry selected…</button><a href="${href('/items/bulk-confirm', { instance: key, match: 'failed', kind, q })}">Retry every failed item this filter matches…</a></div></form>`
          : table
      }
${more ? h`<div class="pager"><a href="${href('/items', { instance: key, status, kind, q, limit: Math.min(limit + PAGE, 1000) })}">Show more</a></div>` : ''}</div>`;
      return c.html(page({ ...f, live: href('/api/v1/events', { instance: key }) }, body).value);
    }),
  );

  app.get(
    '/items/bulk-confirm',
    guarded(async (c) => {
      const { inst, key, f } = await frame(c, ctx, 'items', 'Retry selected');
      // The selected items, or every failed item a filter matches (at most 1,000): the preview is the set the
      // confirmation retries, in one transaction, so what was counted is what is retried (or nothing is).
      let ids = c.req.queries('id') ?? [];
      let items: WorkItem[] = [];
      if (c.req.query('match') === 'failed') {
        const kind = c.req.query('kind') || undefined;
        const q = (c.req.query('q') ?? '').trim().toLowerCase();
        items = (await run<WorkItem[]>(inst, 'list_items', { status: 'failed', kind, limit: 1000 })).filter(
          (i) => !q || `${i.title} ${i.id} ${i.error ?? ''}`.toLowerCase().includes(q),
        );
        ids = items.map((i) => i.id);
      }
      const titled = new Map(items.map((i) => [i.id, i.title]));
      const body = h`<h1>Retry ${ids.length} failed item${ids.length === 1 ? '' : 's'}?</h1>
${ids.length === 0 ? h`<p class="problem" role="alert">No failed item matches: nothing to retry.</p>` : ''}
<form method="post" action="${href('/items/bulk-retry', { instance: key })}"><input type="hidden" name="_csrf" value="${f.csrf ?? ''}">${ids.map((id) => h`<input type="hidden" name="id" value="${id}">`)}
<ul>${ids.slice(0, 20).map((id) => h`<li>${titled.get(id) ?? ''} <span class="id muted">${id}</span></li>`)}${ids.length > 20 ? h`<li>and ${ids.length - 20} more</li>` : ''}</ul>
<div class="actions">${ids.length > 0 ? h`<button type="submit" class="primary">Yes, retry ${ids.length}</button>` : ''}<a href="${href('/items', { instance: key, status: 'failed' })}">No, go back</a></div></form>`;
      return c.html(page(f, body).value);
    }),
  );

  app.post(
    '/items/bulk-retry',
    guarded(async (c) => {
      const { inst, key } = await opened(c, ctx);
      const form = await c.req.parseBody({ all: true });
      const ids = ([] as unknown[]).concat(form.id ?? []).filter((x): x is string => typeof x === 'string');
      // One transaction for all of them (retry_many): either every selected item is retried or none is.
      await runOperation(
        inst,
        'retry_many',
        attributed(getOperation('retry_many'), { ids }, c.get('caller')),
      );
      return c.redirect(href('/items', { instance: key, status: 'failed', retried: ids.length }), 303);
    }),
  );

  app.get(
    '/items/:id',
    guarded(async (c) => {
      const { inst, key, f } = await frame(c, ctx, 'items', 'Work item');
      const id = c.req.param('id') ?? '';
      const item = await run<WorkItem>(inst, 'get_item', { id });
      const events = await run<EventRecord[]>(inst, 'read_events', { work_item_id: id, limit: 500 });
      const actions = Object.entries(ACTIONS).filter(([, a]) => a.when(item));
      const done = c.req.query('done') ?? '';
      const notice = Object.hasOwn(DONE, done) ? h`<p class="notice" role="status">${DONE[done]}</p>` : '';
      // What a retry of this ended item re-opens: the pending items waiting behind it (directly or not).
      const behind =
        item.status === 'failed' || item.status === 'cancelled'
          ? (await run<WorkItem[]>(inst, 'list_items', { blocked_on_failure: true, limit: 1000 })).filter(
              (w) => (w.blocked_on_failure ?? []).includes(item.id),
            )
          : [];
      let answer: Html | string = '';
      if (item.status === 'waiting_human' && isDecision(item)) {
        // The store wrote this payload (the item is its document's): the question and options come from the
        // document that owns the item.
        const p = item.payload as { ambiguity_id?: string; question?: string };
        const owner = ownerOf(item)!;
        let options: string[] = [];
        if (owner.kind === 'task-ir') {
          const doc = await run<{ body: { ambiguities?: Array<{ id: string; options?: string[] }> } }>(
            inst,
            'get_document',
            { kind: owner.kind, id: owner.id },
          ).catch(() => null);
          options = doc?.body.ambiguities?.find((a) => a.id === p.ambiguity_id)?.options ?? [];
        }
        answer = h`<section aria-labelledby="h-answer"><h2 id="h-answer">Answer this decision</h2><p>${p.question ?? item.title}</p>
<form method="post" action="${href(`/items/${encodeURIComponent(id)}/confirm`, { instance: key })}"><input type="hidden" name="_csrf" value="${f.csrf ?? ''}"><input type="hidden" name="action" value="answer">
${options.length > 0 ? h`<fieldset><legend>Options</legend>${options.map((o, n) => h`<div class="option"><input type="radio" name="answer" id="opt-${n}" value="${o}"><label for="opt-${n}">${o}</label></div>`)}</fieldset><label for="answer-other">or another answer</label>` : h`<label for="answer-other">Your answer</label>`}
<textarea id="answer-other" name="answer_text" rows="2" maxlength="10000"${options.length > 0 ? '' : h` required`}></textarea>
<div class="actions"><button type="submit" class="primary">Answer…</button></div></form></section>`;
      }
      const body = h`<h1>${item.title}</h1>${notice}
<div class="actions">${actions.map(
        ([name, a]) =>
          h`<form method="get" action="/items/${encodeURIComponent(id)}/confirm"><input type="hidden" name="instance" value="${key}"><input type="hidden" name="action" value="${name}"><button type="submit"${name === 'cancel' || name === 'reject' ? h` class="danger"` : ''}>${a.label}…</button></form>`,
      )}</div>
${answer}${
  behind.length > 0
    ? h`<section aria-labelledby="h-behind"><h2 id="h-behind">Waiting behind this item (${behind.length})</h2><p>A retry re-opens them: they become ready once this item is done.</p>${itemRows(key, behind)}</section>`
    : ''
}
<div data-live-region><dl class="kv"><dt>id</dt><dd><span class="id">${item.id}</span></dd><dt>status</dt><dd><span class="badge st-${item.status}">${item.status}</span></dd><dt>kind</dt><dd>${item.kind ?? ''}</dd><dt>priority</dt><dd>${item.priority}</dd><dt>attempts</dt><dd>${item.attempts} of ${item.max_attempts}</dd><dt>lease</dt><dd>${lease(item) || 'none'}</dd><dt>blocked by</dt><dd>${item.blocked_by.join(', ')}</dd><dt>created</dt><dd>${when(item.created_at)}</dd><dt>updated</dt><dd>${when(item.updated_at)}</dd></dl>
${item.error ? h`<h2>Error</h2><pre class="problem">${item.error}</pre>` : ''}
<h2>Payload</h2><pre>${pretty(item.payload)}</pre><h2>Result</h2><pre>${pretty(item.result)}</pre><h2>Notes</h2><pre>${pretty(item.notes)}</pre>
<h2>History</h2>${eventRows(key, events)}</div>`;
      return c.html(
        page(
          { ...f, title: item.title, live: href('/api/v1/events', { instance: key, work_item_id: id }) },
          body,
        ).value,
      );
    }),
  );

  // The confirmation of an action. An answer to a decision comes in a POST body (answers do not belong in
  // URLs, logs or history); the other actions, which carry no text, are links.
  const confirm = async (c: C, field: (name: string) => string) => {
    const { inst, key, f } = await frame(c, ctx, 'items', 'Confirm');
    const id = c.req.param('id') ?? '';
    const action = field('action');
    const item = await run<WorkItem>(inst, 'get_item', { id });
    const answer = field('answer_text').trim() || field('answer').trim();
    const a = ACTIONS[action];
    const back = href(`/items/${encodeURIComponent(id)}`, { instance: key });
    const ask =
      action === 'answer'
        ? h`Answer “${item.title}” with <b>${answer}</b>?`
        : a
          ? h`${typeof a.ask === 'string' ? a.ask : a.ask(item)}`
          : h`Unknown action.`;
    const applies = a ? a.when(item) : action === 'answer' && item.status === 'waiting_human';
    const refusal =
      action === 'answer' && answer === '' && applies
        ? h`<p class="problem" role="alert">Write an answer or pick an option first.</p><p><a href="${back}">Back to the decision</a></p>`
        : h`<p class="problem" role="alert">This action does not apply to the item as it is now (${item.status}).</p><p><a href="${back}">Back to the item</a></p>`;
    const body = h`<h1>Confirm</h1><p>${ask}</p><p class="muted">${item.title} (${item.id}) — recorded as ${f.actor ?? 'the token holder'}, actor_kind human.</p>
${
  applies && (action !== 'answer' || answer !== '')
    ? h`<form method="post" action="${href(`/items/${encodeURIComponent(id)}/act`, { instance: key })}"><input type="hidden" name="_csrf" value="${f.csrf ?? ''}"><input type="hidden" name="action" value="${action}"><input type="hidden" name="answer" value="${answer}">${action === 'cancel' ? h`<label for="reason">Reason (optional)</label><input id="reason" name="reason" maxlength="2000">` : ''}<div class="actions"><button type="submit" class="primary">Yes, ${action === 'answer' ? 'answer' : a!.label.toLowerCase()}</button><a href="${back}">No, go back</a></div></form>`
    : refusal
}`;
    return c.html(page(f, body).value);
  };
  app.get(
    '/items/:id/confirm',
    guarded((c) =>
      confirm(c, (name) => (name === 'answer' || name === 'answer_text' ? '' : (c.req.query(name) ?? ''))),
    ),
  );
  app.post(
    '/items/:id/confirm',
    guarded(async (c) => {
      const form = await c.req.parseBody();
      return confirm(c, (name) => (typeof form[name] === 'string' ? (form[name] as string) : ''));
    }),
  );

  app.post(
    '/items/:id/act',
    guarded(async (c) => {
      const { inst, key } = await opened(c, ctx);
      const id = c.req.param('id') ?? '';
      const form = await c.req.parseBody();
      const action = typeof form.action === 'string' ? form.action : '';
      const caller = c.get('caller');
      if (action === 'answer') {
        const answer = typeof form.answer === 'string' ? form.answer : '';
        await runOperation(
          inst,
          'resolve',
          attributed(getOperation('resolve'), { id, status: 'done', result: { answer } }, caller),
        );
      } else {
        const a = ACTIONS[action];
        if (!a)
          throw toAgentStateError(
            Object.assign(new Error(`unknown action ${action}`), {
              code: 'INVALID_INPUT',
              details: { field: 'action' },
            }),
          );
        const reason =
          typeof form.reason === 'string' && form.reason.trim() !== '' ? { reason: form.reason.trim() } : {};
        const input: Record<string, unknown> = { id, ...(action === 'cancel' ? reason : {}) };
        if (action === 'release') {
          const item = (await runOperation(inst, 'get_item', { id })) as WorkItem;
          if (item.lease_owner) input.worker = item.lease_owner;
        }
        await runOperation(inst, a.op, attributed(getOperation(a.op), input, caller));
      }
      return c.redirect(href(`/items/${encodeURIComponent(id)}`, { instance: key, done: action }), 303);
    }),
  );

  app.get(
    '/events',
    guarded(async (c) => {
      const { inst, key, f } = await frame(c, ctx, 'events', 'Events');
      const filter = filters(c, 'type', 'stream');
      const { type, stream } = filter;
      const until = c.req.query('until') ? Number(c.req.query('until')) : undefined;
      const events = await run<EventRecord[]>(inst, 'read_events', {
        reverse: true,
        limit: PAGE,
        ...filter,
        ...(until !== undefined && Number.isSafeInteger(until) && until >= 0 ? { until } : {}),
      });
      const head = await inst.events.head();
      const verify =
        c.req.query('verify') === '1'
          ? await run<{ ok: boolean; problems?: unknown[]; head?: unknown }>(inst, 'verify')
          : null;
      const older = events.length === PAGE ? events.at(-1)!.position - 1 : null;
      const body = h`<h1>Event log</h1>
<section aria-labelledby="h-chain"><h2 id="h-chain">Hash chain</h2><dl class="kv"><dt>head</dt><dd>${head ? `${head.position}:${head.hash}` : 'empty'}</dd>
<dt>verify</dt><dd>${
        verify
          ? verify.ok
            ? h`<b class="st-done">ok</b> — chain, documents and work items agree with the log`
            : h`<b class="problem">failed</b><pre>${pretty(verify.problems ?? verify)}</pre>`
          : h`<a href="${href('/events', { instance: key, type, stream, verify: 1 })}">Run verify</a> (reads the whole log)`
      }</dd></dl></section>
<form class="filters" method="get" action="/events"><input type="hidden" name="instance" value="${key}"><div><label for="f-type">Type</label><input id="f-type" name="type" value="${type ?? ''}"></div><div><label for="f-stream">Stream</label><input id="f-stream" name="stream" value="${stream ?? ''}"></div><button type="submit">Filter</button></form>
<div data-live-region>${eventRows(key, events)}</div>
<div class="pager">${until !== undefined ? h`<a href="${href('/events', { instance: key, type, stream })}">Newest</a>` : ''}${older !== null && older > 0 ? h`<a href="${href('/events', { instance: key, type, stream, until: older })}">Older</a>` : ''}</div>`;
      const live = until === undefined ? href('/api/v1/events', { instance: key, type, stream }) : undefined;
      return c.html(page({ ...f, ...(live ? { live } : {}) }, body).value);
    }),
  );

  mountDocumentPages(app, ctx);
}

interface HistoryEntry {
  version: number;
  parent_version: number;
  noop: boolean;
  content_hash: string;
  actor: string;
  actor_kind: string;
  provenance?: unknown;
  created_at: string;
  reason?: string | null;
}

/** The kinds whose documents have a human-readable state file. */
const fileKinds = () => kindNames().filter((k) => getKind(k).file !== undefined);

type FileView = { path: string; text: string; valid: boolean; problem?: string };

/** A document's state file as its kind renders it, and whether the stored body passes the kind's rules. */
async function fileView(inst: Instance, kind: string, id: string, version: number): Promise<FileView | null> {
  if (!getKind(kind).file) return null;
  return run<FileView>(inst, 'render_file', { kind, id, version });
}

function mountDocumentPages(app: Hono<AppEnv>, ctx: AppContext): void {
  app.get(
    '/files',
    guarded(async (c) => {
      const { inst, key, f } = await frame(c, ctx, 'files', 'State files');
      const rows: Html[] = [];
      for (const kind of fileKinds()) {
        const docs = await run<Array<{ id: string; version: number }>>(inst, 'list_documents', {
          kind,
          limit: PAGE,
        });
        for (const d of docs) {
          const v = await fileView(inst, kind, d.id, d.version);
          if (!v) continue;
          rows.push(
            h`<tr><td>${kind}</td><td><a href="${href(`/documents/${encodeURIComponent(kind)}/${encodeURIComponent(d.id)}`, { instance: key })}">${d.id}</a></td><td><code>${v.path}</code></td><td class="num">${d.version}</td><td>${v.valid ? h`<span class="badge st-done">valid</span>` : h`<span class="badge st-failed">invalid</span> ${v.problem}`}</td></tr>`,
          );
        }
      }
      const body = h`<h1>State files</h1><p class="muted">The human-readable files (${fileKinds().join(', ')}) as the store renders them, each checked against its kind’s current rules.</p>
${rows.length === 0 ? h`<p class="muted">No documents with a state file.</p>` : h`<div class="wrap"><table><thead><tr><th>Kind</th><th>Id</th><th>File</th><th>Version</th><th>Validation</th></tr></thead><tbody>${rows}</tbody></table></div>`}`;
      return c.html(page(f, body).value);
    }),
  );

  app.get(
    '/documents',
    guarded(async (c) => {
      const { inst, key, f } = await frame(c, ctx, 'documents', 'Documents');
      const filter = filters(c, 'kind');
      const { kind } = filter;
      const limit = pageLimit(c);
      const docs = await run<Array<{ kind: string; id: string; version: number; updated_at: string }>>(
        inst,
        'list_documents',
        { ...filter, limit: limit + 1 },
      );
      const body = h`<h1>Documents</h1><form class="filters" method="get" action="/documents"><input type="hidden" name="instance" value="${key}"><div><label for="f-kind">Kind</label><input id="f-kind" name="kind" value="${kind ?? ''}"></div><button type="submit">Filter</button></form>
${docs.length === 0 ? h`<p class="muted">No documents.</p>` : h`<div class="wrap"><table><thead><tr><th>Kind</th><th>Id</th><th>Version</th><th class="opt">Updated</th></tr></thead><tbody>${docs.slice(0, limit).map((d) => h`<tr><td>${d.kind}</td><td><a href="${href(`/documents/${encodeURIComponent(d.kind)}/${encodeURIComponent(d.id)}`, { instance: key })}">${d.id}</a></td><td class="num">${d.version}</td><td class="opt">${when(d.updated_at)}</td></tr>`)}</tbody></table></div>`}
${docs.length > limit ? h`<div class="pager"><a href="${href('/documents', { instance: key, kind, limit: Math.min(limit + PAGE, 1000) })}">Show more</a></div>` : ''}`;
      return c.html(page(f, body).value);
    }),
  );

  app.get(
    '/documents/:kind/:id',
    guarded(async (c) => {
      const { inst, key, f } = await frame(c, ctx, 'documents', 'Document');
      const kind = c.req.param('kind') ?? '';
      const id = c.req.param('id') ?? '';
      const v = c.req.query('version');
      const doc = await run<{ version: number; body: unknown }>(inst, 'get_document', {
        kind,
        id,
        ...(v ? { version: Number(v) } : {}),
      });
      const hist = await run<{ entries: HistoryEntry[] }>(inst, 'history', {
        kind,
        id,
        reverse: true,
        limit: 100,
      });
      const view = await fileView(inst, kind, id, doc.version).catch(() => null);
      const base = `/documents/${encodeURIComponent(kind)}/${encodeURIComponent(id)}`;
      const versions = hist.entries.map((e) => e.version);
      const body = h`<h1>${kind} / ${id}</h1>
<form class="filters" method="get" action="${base}/diff"><input type="hidden" name="instance" value="${key}">
<div><label for="d-from">Diff from version</label><select id="d-from" name="from">${versions.map((x) => h`<option${x === Math.max(1, doc.version - 1) ? h` selected` : ''}>${x}</option>`)}</select></div>
<div><label for="d-to">to version</label><select id="d-to" name="to">${versions.map((x) => h`<option${x === doc.version ? h` selected` : ''}>${x}</option>`)}</select></div><button type="submit">Show diff</button></form>
<h2>Version ${doc.version}</h2><pre>${pretty(doc.body, 100_000)}</pre>
${
  view
    ? h`<h2>State file <code>${view.path}</code> ${view.valid ? h`<span class="badge st-done">valid</span>` : h`<span class="badge st-failed">invalid</span>`}</h2>${view.valid ? '' : h`<p class="problem">${view.problem}</p>`}<pre>${view.text}</pre>`
    : ''
}
<h2>History</h2><div class="wrap"><table><thead><tr><th>Version</th><th>Actor</th><th>Actor kind</th><th class="opt">Time</th><th>Provenance</th><th class="opt">Reason</th></tr></thead><tbody>${hist.entries.map(
        (e) =>
          h`<tr><td class="num"><a href="${href(base, { instance: key, version: e.version })}">${e.version}</a>${e.noop ? h` <span class="badge">no-op</span>` : ''}</td><td>${e.actor}</td><td>${e.actor_kind}</td><td class="opt">${when(e.created_at)}</td><td><code>${e.provenance ? short(e.provenance, 200) : ''}</code></td><td class="opt">${e.reason ?? ''}</td></tr>`,
      )}</tbody></table></div>`;
      return c.html(page({ ...f, title: `${kind}/${id}` }, body).value);
    }),
  );

  app.get(
    '/documents/:kind/:id/diff',
    guarded(async (c) => {
      const { inst, key, f } = await frame(c, ctx, 'documents', 'Diff');
      const kind = c.req.param('kind') ?? '';
      const id = c.req.param('id') ?? '';
      const from = Number(c.req.query('from'));
      const to = Number(c.req.query('to'));
      const diff = await run<{ patch: Array<{ op: string; path: string; value?: unknown; from?: string }> }>(
        inst,
        'diff',
        { kind, id, from, to },
      );
      const [a, b] = await Promise.all([
        run<{ body: unknown }>(inst, 'get_document', { kind, id, version: from }),
        run<{ body: unknown }>(inst, 'get_document', { kind, id, version: to }),
      ]);
      const base = `/documents/${encodeURIComponent(kind)}/${encodeURIComponent(id)}`;
      const body = h`<h1>${kind} / ${id}: version ${from} → ${to}</h1><p><a href="${href(base, { instance: key })}">Back to the document</a></p>
<h2>Changes (${diff.patch.length})</h2>${
        diff.patch.length === 0
          ? h`<p class="muted">No changes.</p>`
          : h`<div class="wrap"><table aria-label="Changes"><thead><tr><th>Change</th><th>Field</th><th>New value</th></tr></thead><tbody>${diff.patch.map(
              (p) =>
                h`<tr class="diff-${p.op}"><td>${p.op}</td><td><code>${p.path}</code></td><td><code>${p.op === 'remove' ? '' : short(p.value ?? p.from, 400)}</code></td></tr>`,
            )}</tbody></table></div>`
      }
<div class="grid"><section><h2>Version ${from}</h2><pre>${pretty(a.body, 50_000)}</pre></section><section><h2>Version ${to}</h2><pre>${pretty(b.body, 50_000)}</pre></section></div>`;
      return c.html(page(f, body).value);
    }),
  );
}
