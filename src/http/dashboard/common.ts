// What every dashboard page shares: its frame and instance, the calls to the operation table, the error page,
// and the pieces its tables are made of (relative times, leases, item and event rows).
import type { Context } from 'hono';
import { WAIT_FOREVER } from '../../core/runs/types.js';
import type { EventRecord, WorkItem } from '../../core/types.js';
import { isRunQuestion, ownerOf } from '../../core/work/owners.js';
import { attemptsText } from '../../core/work/rules.js';
import { ERROR_TABLE, toAgentStateError } from '../../errors.js';
import type { Instance } from '../../instance/instance.js';
import { callOperation } from '../../service/edge.js';
import { type AppContext, type AppEnv, edgeCallOf, instanceOf } from '../context.js';
import { type Html, h, href } from './html.js';
import type { Section } from './layout.js';

export type C = Context<AppEnv>;

export const STATUSES = ['failed', 'waiting_human', 'in_flight', 'pending', 'done', 'cancelled'] as const;
export const PAGE = 50;

/** The filters of a list page that are set (an empty parameter is unset): shown in its form, passed to its call. */
export function filters<K extends string>(c: C, ...names: K[]): Partial<Record<K, string>> {
  const set: Partial<Record<K, string>> = {};
  for (const name of names) {
    const v = c.req.query(name);
    if (v) set[name] = v;
  }
  return set;
}

/** How many rows a list page shows: its `limit` parameter (1 to 1000), PAGE when absent or not a number. */
export const pageLimit = (c: C) => Math.min(Math.max(Number(c.req.query('limit') ?? PAGE) || PAGE, 1), 1000);
/**
 * A human decision is an item a document's commit enqueued (its key is the store's own `doc:…`, which no
 * plain enqueue may use), never an item whose payload merely looks like one.
 */
export const isDecision = (i: WorkItem) => ownerOf(i) !== null || isRunQuestion(i);

const fmtTime = (t: string | null) => (t ? t.replace('T', ' ').replace(/\.\d+Z$/, 'Z') : '');

/** `ms` as a short duration: 45 s, 12 min, 3 h, 2 d. */
export function span(ms: number): string {
  const s = Math.round(Math.abs(ms) / 1000);
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.round(s / 60)} min`;
  if (s < 172_800) return `${Math.round(s / 3600)} h`;
  return `${Math.round(s / 86_400)} d`;
}

/**
 * `ms` exactly enough to tell short attempts apart: `0 ms`, `340 ms`, `8.3 s`, `30 s`, `5 min 12 s`, `2 h 5 min`.
 */
export function duration(ms: number): string {
  const a = Math.max(0, Math.round(ms));
  if (a < 1000) return `${a} ms`;
  if (a < 59_950) return `${Math.round(a / 100) / 10} s`;
  const s = Math.round(a / 1000);
  if (s < 3600) return s % 60 === 0 ? `${s / 60} min` : `${Math.floor(s / 60)} min ${s % 60} s`;
  const m = Math.round(s / 60);
  return m % 60 === 0 ? `${m / 60} h` : `${Math.floor(m / 60)} h ${m % 60} min`;
}

/**
 * A time exactly, in UTC to the millisecond: `2026-11-30 05:03:20.937`, or only its clock `05:03:20.937` when
 * `clockOnly` (a table whose date is said once above it); the relative time on hover.
 */
export function exactTime(t: string, now: number = Date.now(), clockOnly = false): Html {
  const iso = new Date(Date.parse(t)).toISOString();
  return h`<time class="exact" datetime="${t}" title="${relative(t, now)}">${clockOnly ? iso.slice(11, 23) : `${iso.slice(0, 10)} ${iso.slice(11, 23)}`}</time>`;
}

/** A time as people read it on a dashboard: relative ("5 min ago", "in 40 s"), the exact time on hover. */
export function when(t: string | null, now: number = Date.now()): Html | string {
  if (!t) return '';
  return h`<time datetime="${t}" title="${fmtTime(t)}">${relative(t, now)}</time>`;
}

/** How far `t` is from `now`: `now`, `5 min ago`, `in 40 s`. */
export function relative(t: string, now: number = Date.now()): string {
  const d = Date.parse(t) - now;
  return Math.abs(d) < 1000 ? 'now' : d < 0 ? `${span(d)} ago` : `in ${span(d)}`;
}

/** A name that may wrap only after its separators (`_`, `:`, `/`, `.`), never inside a word. */
export function breakable(name: string): Html {
  return h`${name.split(/(?<=[_:/.])/).map((part, i) => (i === 0 ? part : h`<wbr>${part}`))}`;
}

/** The lease of an item as a cell: its holder and when it runs out while in flight, who last held it after. */
export function lease(i: WorkItem): Html | string {
  if (i.status === 'in_flight' && i.lease_owner) {
    const ended = i.lease_expires_at !== null && Date.parse(i.lease_expires_at) <= Date.now();
    return ended
      ? h`<span class="problem">${i.lease_owner}, lease ended ${when(i.lease_expires_at)}</span>`
      : h`${i.lease_owner}, lease ends ${when(i.lease_expires_at)}`;
  }
  return i.lease_owner ? h`<span class="muted">last held by ${i.lease_owner}</span>` : '';
}

export function short(v: unknown, max = 140): string {
  const s = typeof v === 'string' ? v : (JSON.stringify(v) ?? '');
  return s.length > max ? `${s.slice(0, max)}…` : s;
}

/** The instance a request names, and its key (`host/name`) for links. */
export async function opened(c: C, ctx: AppContext) {
  const inst = await instanceOf(c, ctx.registry);
  return { inst, key: `${inst.host}/${inst.name}` };
}

export async function frame(c: C, ctx: AppContext, section: Section, title: string) {
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

/** A read the page makes (any signed-in caller may read), through the edges' one pipeline. */
export const run = <T>(inst: Instance, op: string, input: Record<string, unknown> = {}) =>
  callOperation(inst, op, input) as Promise<T>;

/** A write the page makes for the signed-in caller: checked against their access, recorded as theirs. */
export const runAs = (c: C, inst: Instance, op: string, input: Record<string, unknown>) =>
  callOperation(inst, op, input, edgeCallOf(c.get('caller')));

/** The path of an item's page. */
export const itemPath = (id: string) => `/items/${encodeURIComponent(id)}`;

/** The path of a document's page. */
export const docPath = (kind: string, id: string) =>
  `/documents/${encodeURIComponent(kind)}/${encodeURIComponent(id)}`;

/**
 * Whether an item's `not_before` still holds it back: it is pending and the time is ahead. Once it passed, or
 * the item was claimed, resolved or cancelled, the time says nothing any more and is not shown.
 */
export const scheduled = (i: WorkItem, now: number = Date.now()): boolean =>
  i.status === 'pending' && i.not_before !== null && Date.parse(i.not_before) > now;

/** A pending item handed back by a durable run's wait with no timeout: only a signal wakes it. */
export const waitsForSignal = (i: WorkItem): boolean =>
  i.status === 'pending' && i.not_before !== null && Date.parse(i.not_before) >= WAIT_FOREVER;

/**
 * What a pending item that is not ready waits for: a failed or cancelled blocker (a problem: its link), or
 * the time it is scheduled for. Empty otherwise.
 */
export function waitingFor(key: string, i: WorkItem, now: number = Date.now()): Html | string {
  if (i.status !== 'pending') return '';
  const failed = i.blocked_on_failure ?? [];
  if (failed.length > 0)
    return h`<span class="problem">blocked: ${failed.map((b, n) => h`${n > 0 ? ', ' : ''}<a href="${href(itemPath(b), { instance: key })}">${b}</a>`)} ended unsuccessfully</span>`;
  if (waitsForSignal(i)) return h`<span class="badge o-retry">waiting</span> for a signal`;
  if (scheduled(i, now))
    return h`<span class="badge o-retry">scheduled</span> ready ${when(i.not_before, now)}`;
  return '';
}

export function itemRows(key: string, items: WorkItem[], select = false): Html {
  if (items.length === 0) return h`<p class="muted">None.</p>`;
  return h`<div class="wrap"><table class="stack"><thead><tr>${select ? h`<th><input type="checkbox" id="select-all" aria-label="Select all"></th>` : ''}<th>Item</th><th>Status</th><th class="opt">Kind</th><th class="opt">Attempts</th><th>State</th><th class="opt">Updated</th></tr></thead><tbody>${items.map(
    (i) =>
      h`<tr>${select ? h`<td><input type="checkbox" name="id" value="${i.id}" aria-label="Select ${i.title}"></td>` : ''}<td><a href="${href(itemPath(i.id), { instance: key })}">${short(i.title, 90)}</a><div class="muted id">${i.id}</div></td><td><span class="badge st-${i.status}">${i.status}</span></td><td class="opt nb">${i.kind ?? ''}</td><td class="opt nb">${attemptsText(i)}</td><td>${waitingFor(key, i)}${i.error ? h`<div class="problem">${short(i.error, 120)}</div>` : lease(i)}</td><td class="opt">${when(i.updated_at)}</td></tr>`,
  )}</tbody></table></div>`;
}

export function eventRows(key: string, events: EventRecord[]): Html {
  if (events.length === 0) return h`<p class="muted">No events.</p>`;
  return h`<div class="wrap"><table class="stack"><thead><tr><th>#</th><th>Type</th><th class="opt">Time</th><th class="opt">Stream</th><th>Actor</th><th>Data</th></tr></thead><tbody>${events.map(
    (e) =>
      h`<tr><td class="num">${e.position}</td><td class="nb">${breakable(e.type)}</td><td class="opt">${when(e.created_at)}</td><td class="opt nb">${breakable(e.stream)}</td><td class="nb">${e.actor ?? ''}</td><td class="data">${e.work_item_id ? h`<a href="${href(itemPath(e.work_item_id), { instance: key })}">${e.work_item_id}</a> ` : ''}<code>${short(e.data)}</code></td></tr>`,
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
export function errorPage(c: C, err: unknown): Response {
  const e = toAgentStateError(err);
  if (e.code === 'UNAUTHENTICATED') return c.redirect('/login', 303);
  const body = h`<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${e.code} · agentstate</title><link rel="stylesheet" href="/assets/app.css"></head><body><header><strong>agentstate</strong><nav aria-label="Sections"><a href="/">Overview</a><a href="/items">Work items</a><a href="/runs">Runs</a><a href="/events">Events</a><a href="/documents">Documents</a><a href="/files">State files</a></nav></header><main><h1>${e.code}</h1><p class="problem" role="alert">${e.message}</p><p><a href="${back(c)}">Back</a> · <a href="/">Overview</a></p></main></body></html>`;
  return c.html(body.value, ERROR_TABLE[e.code].http as 400);
}

export function guarded(fn: (c: C) => Promise<Response>) {
  return async (c: C) => {
    try {
      return await fn(c);
    } catch (err) {
      return errorPage(c, err);
    }
  };
}
