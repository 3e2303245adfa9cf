// The work-item pages: the list with its filters, bulk retry and cancel (a preview of exactly the items, then
// one transaction), an item with its history and the actions that apply to it, each behind a confirmation.

import type { Hono } from 'hono';
import type { RunRecord } from '../../core/codecs/run-records.js';
import type { EventRecord, WorkItem } from '../../core/types.js';
import { ownerOf } from '../../core/work/owners.js';
import { attemptsText } from '../../core/work/rules.js';
import { InvalidInputError } from '../../errors.js';
import type { AppContext, AppEnv } from '../context.js';
import {
  type C,
  eventRows,
  filters,
  frame,
  guarded,
  isDecision,
  itemPath,
  itemRows,
  lease,
  opened,
  PAGE,
  pageLimit,
  run,
  runAs,
  STATUSES,
  scheduled,
  short,
  waitingFor,
  waitsForSignal,
  when,
} from './common.js';
import { type Html, h, href, pretty } from './html.js';
import { page } from './layout.js';
import { attemptsOf, attemptTimeline, runSection } from './timeline.js';

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

/** The bulk actions of the list: each the operation it runs (one transaction) and the statuses it applies to. */
const BULK: Record<
  string,
  {
    name: string;
    op: string;
    verb: string;
    past: string;
    statuses: readonly string[];
    ask: string;
    outcome: string;
  }
> = {
  retry: {
    name: 'retry',
    op: 'retry_many',
    verb: 'Retry',
    past: 'Retried',
    statuses: ['failed', 'cancelled'],
    ask: 'Each goes back in the queue with a fresh attempt budget (its history is kept); all of them, or none.',
    outcome: 'back in the queue with a fresh attempt budget',
  },
  cancel: {
    name: 'cancel',
    op: 'cancel_many',
    verb: 'Cancel',
    past: 'Cancelled',
    statuses: ['pending', 'in_flight', 'waiting_human'],
    ask: 'None of them will run (a worker holding one loses it); all of them, or none. A retry puts one back.',
    outcome: 'they will not run',
  },
};

/** The bulk action the list offers for items of `status`, if any. */
const bulkOf = (status: string | undefined) =>
  Object.values(BULK).find((b) => status !== undefined && b.statuses.includes(status));

/** Whether an item's title, id or error holds the search text (lower case; empty matches all). */
const matches = (q: string) => (i: WorkItem) =>
  !q || `${i.title} ${i.id} ${i.error ?? ''}`.toLowerCase().includes(q);

/** The bulk action a URL names, or INVALID_INPUT. */
function bulkNamed(name: string) {
  if (!Object.hasOwn(BULK, name))
    throw new InvalidInputError(`unknown action ${JSON.stringify(name)}: retry or cancel`, {
      field: 'action',
    });
  return BULK[name]!;
}

/** Mounts the work-item pages: the filtered list, bulk actions by selection or filter, an item and its actions. */
export function mountItems(app: Hono<AppEnv>, ctx: AppContext): void {
  app.get(
    '/items',
    guarded(async (c) => {
      const { inst, key, f } = await frame(c, ctx, 'items', 'Work items');
      const filter = filters(c, 'status', 'kind');
      const { status, kind } = filter;
      const q = (c.req.query('q') ?? '').trim().toLowerCase();
      const limit = pageLimit(c);
      const all = await run<WorkItem[]>(inst, 'list_items', { ...filter, limit: q ? 1000 : limit + 1 });
      const matched = all.filter(matches(q));
      const shown = matched.slice(0, limit);
      const more = matched.length > limit;
      // The bulk action of the status shown: retry what ended badly, cancel what has not ended.
      const bulk = shown.length > 0 ? bulkOf(status) : undefined;
      const table = itemRows(key, shown, bulk !== undefined);
      const notice = Object.values(BULK).map((b) => {
        const n = Number(c.req.query(b.past.toLowerCase()));
        return Number.isSafeInteger(n) && n > 0
          ? h`<p class="notice" role="status">${b.past} ${n} item${n === 1 ? '' : 's'}: ${b.outcome}.</p>`
          : '';
      });
      const body = h`<h1>Work items</h1>${notice}
<form class="filters" method="get" action="/items"><input type="hidden" name="instance" value="${key}">
<div><label for="f-status">Status</label><select id="f-status" name="status"><option value="">any</option>${STATUSES.map((s) => h`<option${s === status ? h` selected` : ''}>${s}</option>`)}</select></div>
<div><label for="f-kind">Kind</label><input id="f-kind" name="kind" value="${kind ?? ''}"></div>
<div><label for="f-q">Text</label><input id="f-q" name="q" type="search" value="${q}"></div><button type="submit">Filter</button></form>
<div data-live-region>${
        bulk
          ? h`<form method="get" action="/items/bulk-confirm"><input type="hidden" name="instance" value="${key}"><input type="hidden" name="action" value="${bulk.name}"><input type="hidden" name="back" value="${status ?? ''}"><input type="hidden" name="kind" value="${kind ?? ''}"><input type="hidden" name="q" value="${q}">${table}<div class="actions"><button type="submit" class="${bulk.name === 'cancel' ? 'danger' : 'primary'}">${bulk.verb} selected…</button><a href="${href('/items/bulk-confirm', { instance: key, action: bulk.name, match: status, kind, q })}">${bulk.verb} every ${status?.replace('_', ' ')} item this filter matches…</a></div></form>`
          : table
      }
${more ? h`<div class="pager"><a href="${href('/items', { instance: key, status, kind, q, limit: Math.min(limit + PAGE, 1000) })}">Show more</a></div>` : ''}</div>`;
      return c.html(page({ ...f, live: href('/api/v1/events', { instance: key }) }, body).value);
    }),
  );

  app.get(
    '/items/bulk-confirm',
    guarded(async (c) => {
      const name = c.req.query('action') ?? 'retry';
      const b = bulkNamed(name);
      const { inst, key, f } = await frame(c, ctx, 'items', `${b.verb} selected`);
      // The selected items, or every item of the status a filter matches (at most 1,000): the preview is the set
      // the confirmation changes, in one transaction, so what was counted is what changes (or nothing does).
      const match = c.req.query('match');
      let items: WorkItem[];
      if (match !== undefined) {
        if (!(b.statuses as readonly string[]).includes(match))
          throw new InvalidInputError(
            `${b.verb.toLowerCase()} applies to ${b.statuses.join(' or ')} items, not ${JSON.stringify(match)}`,
            { field: 'match' },
          );
        const kind = c.req.query('kind') || undefined;
        const q = (c.req.query('q') ?? '').trim().toLowerCase();
        items = (await run<WorkItem[]>(inst, 'list_items', { status: match, kind, limit: 1000 })).filter(
          matches(q),
        );
      } else {
        const ids = [...new Set(c.req.queries('id') ?? [])].slice(0, 1000);
        items = await Promise.all(ids.map((id) => run<WorkItem>(inst, 'get_item', { id })));
      }
      const what = match?.replace('_', ' ') ?? 'selected';
      // The list the items were picked from, to go back to.
      const from = {
        status: match ?? (c.req.query('back') || undefined),
        kind: c.req.query('kind') || undefined,
        q: c.req.query('q') || undefined,
      };
      const n = items.length;
      const body = h`<h1>${b.verb} ${n} ${what} item${n === 1 ? '' : 's'}?</h1>
${n === 0 ? h`<p class="problem" role="alert">No item matches: nothing to ${b.verb.toLowerCase()}.</p>` : h`<p>${b.ask}</p>`}
<form method="post" action="${href(`/items/bulk/${b.name}`, { instance: key })}"><input type="hidden" name="_csrf" value="${f.csrf ?? ''}"><input type="hidden" name="back" value="${from.status ?? ''}"><input type="hidden" name="back_kind" value="${from.kind ?? ''}"><input type="hidden" name="back_q" value="${from.q ?? ''}">${items.map((i) => h`<input type="hidden" name="id" value="${i.id}">`)}
<ul>${items.slice(0, 20).map((i) => h`<li>${short(i.title, 90)} <span class="badge st-${i.status}">${i.status}</span> <span class="id muted">${i.id}</span></li>`)}${n > 20 ? h`<li>and ${n - 20} more</li>` : ''}</ul>
${n > 0 && b.name === 'cancel' ? h`<label for="reason">Reason (optional)</label><input id="reason" name="reason" maxlength="2000">` : ''}
<div class="actions">${n > 0 ? h`<button type="submit" class="${b.name === 'cancel' ? 'danger' : 'primary'}">Yes, ${b.verb.toLowerCase()} ${n}</button>` : ''}<a href="${href('/items', { instance: key, ...from })}">No, go back</a></div></form>`;
      return c.html(page(f, body).value);
    }),
  );

  app.post(
    '/items/bulk/:action',
    guarded(async (c) => {
      const { inst, key } = await opened(c, ctx);
      const name = c.req.param('action') ?? '';
      const b = bulkNamed(name);
      const form = await c.req.parseBody({ all: true });
      const ids = ([] as unknown[]).concat(form.id ?? []).filter((x): x is string => typeof x === 'string');
      const reason =
        b.name === 'cancel' && typeof form.reason === 'string' && form.reason.trim() !== ''
          ? { reason: form.reason.trim() }
          : {};
      // One transaction for all of them: either every item is changed or none is.
      await runAs(c, inst, b.op, { ids, ...reason });
      const back =
        typeof form.back === 'string' && STATUSES.includes(form.back as never) ? form.back : undefined;
      // Back to the list the items were picked from (its filters are only ever query values of /items).
      const text = (v: unknown) => (typeof v === 'string' && v !== '' ? v : undefined);
      return c.redirect(
        href('/items', {
          instance: key,
          status: back,
          kind: text(form.back_kind),
          q: text(form.back_q),
          [b.past.toLowerCase()]: ids.length,
        }),
        303,
      );
    }),
  );

  app.get(
    '/items/:id',
    guarded(async (c) => {
      const { inst, key, f } = await frame(c, ctx, 'items', 'Work item');
      const id = c.req.param('id') ?? '';
      const item = await run<WorkItem>(inst, 'get_item', { id });
      const events = await run<EventRecord[]>(inst, 'read_events', { work_item_id: id, limit: 500 });
      const records = await run<RunRecord[]>(inst, 'list_steps', { id, limit: 100_000 });
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
        const p = item.payload as { ambiguity_id?: string; question?: string; options?: unknown };
        const owner = ownerOf(item);
        // A durable run's question carries its options (the run wrote them with it).
        let options: string[] = Array.isArray(p.options)
          ? p.options.filter((o): o is string => typeof o === 'string')
          : [];
        if (owner?.kind === 'task-ir') {
          const doc = await run<{ body: { ambiguities?: Array<{ id: string; options?: string[] }> } }>(
            inst,
            'get_document',
            { kind: owner.kind, id: owner.id },
          ).catch(() => null);
          options = doc?.body.ambiguities?.find((a) => a.id === p.ambiguity_id)?.options ?? [];
        }
        answer = h`<section aria-labelledby="h-answer"><h2 id="h-answer">Answer this decision</h2><p>${p.question ?? item.title}</p>
<form method="post" action="${href(`${itemPath(id)}/confirm`, { instance: key })}"><input type="hidden" name="_csrf" value="${f.csrf ?? ''}"><input type="hidden" name="action" value="answer">
${options.length > 0 ? h`<fieldset><legend>Options</legend>${options.map((o, n) => h`<div class="option"><input type="radio" name="answer" id="opt-${n}" value="${o}"><label for="opt-${n}">${o}</label></div>`)}</fieldset><label for="answer-other">or another answer</label>` : h`<label for="answer-other">Your answer</label>`}
<textarea id="answer-other" name="answer_text" rows="2" maxlength="10000"${options.length > 0 ? '' : h` required`}></textarea>
<div class="actions"><button type="submit" class="primary">Answer…</button></div></form></section>`;
      }
      const waiting = waitingFor(key, item);
      const body = h`<h1>${item.title}</h1>${notice}
<div class="actions">${actions.map(
        ([name, a]) =>
          h`<form method="get" action="${itemPath(id)}/confirm"><input type="hidden" name="instance" value="${key}"><input type="hidden" name="action" value="${name}"><button type="submit"${name === 'cancel' || name === 'reject' ? h` class="danger"` : ''}>${a.label}…</button></form>`,
      )}</div>
${answer}${
  behind.length > 0
    ? h`<section aria-labelledby="h-behind"><h2 id="h-behind">Waiting behind this item (${behind.length})</h2><p>A retry re-opens them: they become ready once this item is done.</p>${itemRows(key, behind)}</section>`
    : ''
}
<div data-live-region><dl class="kv"><dt>id</dt><dd><span class="id">${item.id}</span></dd><dt>status</dt><dd><span class="badge st-${item.status}">${item.status}</span></dd><dt>kind</dt><dd>${item.kind ?? ''}</dd><dt>priority</dt><dd>${item.priority}</dd><dt>attempts</dt><dd>${attemptsText(item)}</dd><dt>lease</dt><dd>${lease(item) || 'none'}</dd><dt>blocked by</dt><dd>${item.blocked_by.join(', ')}</dd>${scheduled(item) && !waitsForSignal(item) ? h`<dt>not before</dt><dd>${when(item.not_before)}</dd>` : ''}${waiting ? h`<dt>waiting</dt><dd>${waiting}</dd>` : ''}<dt>created</dt><dd>${when(item.created_at)}</dd><dt>updated</dt><dd>${when(item.updated_at)}</dd></dl>
${attemptTimeline(item, attemptsOf(item, events), records)}
${runSection(records)}
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
    const back = href(itemPath(id), { instance: key });
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
    ? h`<form method="post" action="${href(`${itemPath(id)}/act`, { instance: key })}"><input type="hidden" name="_csrf" value="${f.csrf ?? ''}"><input type="hidden" name="action" value="${action}"><input type="hidden" name="answer" value="${answer}">${action === 'cancel' ? h`<label for="reason">Reason (optional)</label><input id="reason" name="reason" maxlength="2000">` : ''}<div class="actions"><button type="submit" class="primary">Yes, ${action === 'answer' ? 'answer' : a!.label.toLowerCase()}</button><a href="${back}">No, go back</a></div></form>`
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
      if (action === 'answer') {
        const answer = typeof form.answer === 'string' ? form.answer : '';
        await runAs(c, inst, 'resolve', { id, status: 'done', result: { answer } });
      } else {
        const a = ACTIONS[action];
        if (!a) throw new InvalidInputError(`unknown action ${JSON.stringify(action)}`, { field: 'action' });
        const reason =
          typeof form.reason === 'string' && form.reason.trim() !== '' ? { reason: form.reason.trim() } : {};
        const input: Record<string, unknown> = { id, ...(action === 'cancel' ? reason : {}) };
        if (action === 'release') {
          const item = await run<WorkItem>(inst, 'get_item', { id });
          if (item.lease_owner) input.worker = item.lease_owner;
        }
        await runAs(c, inst, a.op, input);
      }
      return c.redirect(href(itemPath(id), { instance: key, done: action }), 303);
    }),
  );
}
