// The Workflow SDK World's runs (docs/workflow-world.md): the list (by status and workflow, in keyset pages,
// newest first) and a run's page (its header, the timeline of its events, its steps, live hooks, waits and
// streams, and where its queue messages are). Read-only, through the workflow_runs, workflow_run and
// read_events operations, as every edge sees them: no payload and no hook token is shown.
import type { Hono } from 'hono';
import { WORKFLOW_RUN_STATUSES, workflowRunStream } from '../../core/codecs/workflow-events/codec.js';
import type { EventRecord, InstanceSummary } from '../../core/types.js';
import { isAgentStateError } from '../../errors.js';
import type {
  WorldErrorView,
  WorldRunDetail,
  WorldRunSummary,
  WorldStepView,
} from '../../workflow-world/inspect.js';
import type { AppContext, AppEnv } from '../context.js';
import {
  breakable,
  type C,
  duration,
  exactTime,
  filters,
  frame,
  guarded,
  PAGE,
  pageLimit,
  run,
  short,
  when,
} from './common.js';
import { type Html, h, href } from './html.js';
import { page } from './layout.js';

/** The path of a run's page. */
export const runPath = (id: string) => `/runs/${encodeURIComponent(id)}`;

/** The work item kinds of the World's queue messages (not namespaced: a namespaced World's are said in words). */
const MESSAGE_KINDS = [
  { kind: 'wf:__wkf_workflow_', what: 'flow messages' },
  { kind: 'wf:__wkf_step_', what: 'step messages' },
] as const;

/** A run's or a step's status as item statuses are shown: a badge, coloured by its class. */
const status = (s: string) => h`<span class="badge st-${s}">${s}</span>`;

/** An error as the store can read it: its message (or that it is serialized) and its code. */
function errorText(e: WorldErrorView | null): string {
  if (e === null) return '';
  const message = e.message ?? 'an error the app serialized (not readable here)';
  return e.code ? `${message} [${e.code}]` : message;
}

/**
 * How long from `from` to `to`; while `running`, to now (said "so far"). Empty without a start, and for what
 * neither ended nor runs (a step waiting to be retried).
 */
function took(from: string | null, to: string | null, running: boolean, now: number): string {
  if (!from) return '';
  if (to) return duration(Date.parse(to) - Date.parse(from));
  return running ? `${duration(now - Date.parse(from))} so far` : '';
}

/** The setting that points the Workflow SDK at this instance, as the empty list says it. */
function howToPoint(me: InstanceSummary | undefined): Html {
  const dir = me?.dir;
  return h`<section aria-labelledby="h-none"><h2 id="h-none">No workflow runs yet</h2>
<p>Runs show here once a <a href="https://useworkflow.dev">Workflow SDK</a> app keeps them in this instance. Start the app with the agentstate World pointed at it:</p>
<pre class="setup">WORKFLOW_TARGET_WORLD=@agentstate/store/workflow-world
${dir ? `AGENTSTATE_WORKFLOW_DIR=${dir}` : 'AGENTSTATE_WORKFLOW_URL=postgres://…   # this store’s URL\nAGENTSTATE_WORKFLOW_SCHEMA=…         # and schema'}</pre>
<p class="muted">Then start a workflow: its run, steps, hooks, waits and streams appear here. The settings, the queue and what the World keeps: docs/workflow-world.md.</p></section>`;
}

function runRows(key: string, runs: WorldRunSummary[], now: number): Html {
  return h`<div class="wrap"><table class="stack"><thead><tr><th>Run</th><th>Status</th><th>Workflow</th><th>Created</th><th>Took</th><th>Error</th></tr></thead><tbody>${runs.map(
    (r) =>
      h`<tr><td><a class="id" href="${href(runPath(r.run_id), { instance: key })}">${r.run_id}</a></td><td>${status(r.status)}</td><td class="nb"><a href="${href('/runs', { instance: key, workflow: r.workflow_name })}" title="Only the runs of this workflow">${breakable(r.workflow_name)}</a></td><td>${when(r.created_at, now)}</td><td class="num" data-label="took">${took(r.started_at, r.completed_at, r.status === 'running', now)}</td><td>${r.error ? h`<span class="problem">${short(errorText(r.error), 160)}</span>` : ''}</td></tr>`,
  )}</tbody></table></div>`;
}

function stepRows(steps: WorldStepView[], now: number): Html {
  return h`<div class="wrap"><table class="stack"><thead><tr><th>Step</th><th>Status</th><th>Attempt</th><th>Started (UTC)</th><th>Took</th><th>Error</th></tr></thead><tbody>${steps.map(
    (s) =>
      h`<tr><td class="nb"><strong>${s.step_name ? breakable(s.step_name) : ''}</strong><div class="muted id">${s.step_id}</div></td><td>${status(s.status)}${s.retry_after && s.status === 'pending' ? h` <span class="muted">retry ${exactTime(s.retry_after, now)}</span>` : ''}</td><td class="num" data-label="attempt">${s.attempt}</td><td data-label="started">${s.started_at ? exactTime(s.started_at, now) : h`<span class="muted">not yet</span>`}</td><td class="num" data-label="took">${took(s.started_at, s.completed_at, s.status === 'running', now)}</td><td>${s.error ? h`<div class="problem">${short(errorText(s.error), 400)}</div>` : ''}</td></tr>`,
  )}</tbody></table></div>`;
}

/** How an event's type is coloured: an ending that failed as a problem, one that completed as done. */
const eventClass = (type: string) =>
  /_failed$/.test(type)
    ? 'problem'
    : /_retrying$/.test(type)
      ? 'o-retry'
      : /_(completed|disposed|received)$/.test(type)
        ? 'st-done'
        : '';

/** What the run's events say, in order: its place in the run, the SDK's type, the step, hook or wait, when. */
function timelineRows(events: EventRecord[], runStart: number, now: number): Html {
  return h`<div class="wrap"><table class="stack"><thead><tr><th>#</th><th>Event</th><th>Step, hook or wait</th><th>Time (UTC)</th><th>After start</th></tr></thead><tbody>${events.map(
    (e) => {
      const d = (typeof e.data === 'object' && e.data !== null ? e.data : {}) as Record<string, unknown>;
      const type = typeof d.event_type === 'string' ? d.event_type : e.type;
      const corr = typeof d.correlation_id === 'string' ? d.correlation_id : (e.correlation_id ?? '');
      return h`<tr><td class="num">${e.stream_seq}</td><td class="nb"><span class="${eventClass(type)}">${type}</span></td><td><span class="id">${corr}</span></td><td>${exactTime(e.created_at, now)}</td><td class="num" data-label="after start">+${duration(Date.parse(e.created_at) - runStart)}</td></tr>`;
    },
  )}</tbody></table></div>`;
}

/** The page of one run's events: `after` a position (from `events_after`), PAGE at a time. */
function eventsAfter(c: C): number | undefined {
  const v = c.req.query('events_after');
  if (v === undefined || !/^[0-9]{1,15}$/.test(v)) return undefined;
  return Number(v);
}

/** Mounts the runs list and a run's page. */
export function mountRuns(app: Hono<AppEnv>, ctx: AppContext): void {
  app.get(
    '/runs',
    guarded(async (c) => {
      const { inst, key, f } = await frame(c, ctx, 'runs', 'Workflow runs');
      const filter = filters(c, 'status', 'workflow');
      const after = c.req.query('after') || undefined;
      // One more than shown tells whether there is a next page (the operation's most is 1,000).
      const limit = Math.min(pageLimit(c), 999);
      const now = Date.now();
      const rows = await run<WorldRunSummary[]>(inst, 'workflow_runs', {
        ...filter,
        ...(after ? { after } : {}),
        limit: limit + 1,
      });
      const shown = rows.slice(0, limit);
      const more = rows.length > limit;
      const filtered = filter.status !== undefined || filter.workflow !== undefined;
      // No run at all: what to do about it, without filters that could only find nothing.
      const none = shown.length === 0 && !filtered && !after;
      let list: Html;
      if (shown.length > 0) list = runRows(key, shown, now);
      else if (filtered || after)
        list = h`<p class="muted">No run ${after ? 'after that one ' : ''}matches${filtered ? ' these filters' : ''}. <a href="${href('/runs', { instance: key })}">All runs</a></p>`;
      else list = howToPoint(f.instances.find((i) => i.instance === key));
      const body = h`<h1>Workflow runs</h1>
<p class="muted">The runs a <a href="https://useworkflow.dev">Workflow SDK</a> app keeps in this instance through the agentstate World, newest first. Their queue messages are <a href="${href('/items', { instance: key, kind: 'wf:__wkf_step_' })}">work items</a> of kinds <code>wf:__wkf_workflow_</code> and <code>wf:__wkf_step_</code>.</p>
${
  none
    ? ''
    : h`<form class="filters" method="get" action="/runs"><input type="hidden" name="instance" value="${key}">
<div><label for="f-status">Status</label><select id="f-status" name="status"><option value="">any</option>${WORKFLOW_RUN_STATUSES.map((s) => h`<option${s === filter.status ? h` selected` : ''}>${s}</option>`)}</select></div>
<div><label for="f-workflow">Workflow (its full name)</label><input id="f-workflow" name="workflow" value="${filter.workflow ?? ''}" placeholder="workflow//./src/…//name" size="34"></div><button type="submit">Filter</button></form>`
}
<div data-live-region>${list}
<div class="pager">${after ? h`<a href="${href('/runs', { instance: key, ...filter, limit: c.req.query('limit') })}">Newest runs</a>` : ''}${more ? h`<a href="${href('/runs', { instance: key, ...filter, after: shown.at(-1)!.run_id, limit: c.req.query('limit') })}">Older runs</a>` : ''}</div></div>`;
      const live = after ? undefined : href('/api/v1/events', { instance: key, type: 'workflow_event' });
      return c.html(page({ ...f, ...(live ? { live } : {}) }, body).value, 200);
    }),
  );

  app.get(
    '/runs/:id',
    guarded(async (c) => {
      const { inst, key, f } = await frame(c, ctx, 'runs', 'Workflow run');
      const id = c.req.param('id') ?? '';
      const stepsAfter = c.req.query('steps_after') || undefined;
      const now = Date.now();
      let d: WorldRunDetail;
      try {
        d = await run<WorldRunDetail>(inst, 'workflow_run', {
          run_id: id,
          ...(stepsAfter ? { after: stepsAfter } : {}),
          limit: PAGE + 1,
        });
      } catch (err) {
        if (!isAgentStateError(err, 'NOT_FOUND')) throw err;
        // No such run here: said in the dashboard's frame, with the way back to the list.
        const body = h`<h1>No such run</h1><p class="problem" role="alert">This instance (${key}) keeps no workflow run <span class="id">${short(id, 120)}</span>.</p>
<p>The run may be kept by another instance (pick it above), or its id was cut or mistyped: a run id is <code>wrun_</code> and 26 letters and digits.</p>
<p><a href="${href('/runs', { instance: key })}">All runs</a></p>`;
        return c.html(page({ ...f, title: 'No such run' }, body).value, 404);
      }
      const r = d.run;
      const after = eventsAfter(c);
      const events = await run<EventRecord[]>(inst, 'read_events', {
        stream: workflowRunStream(r.run_id),
        ...(after !== undefined ? { after } : {}),
        limit: PAGE + 1,
      });
      const shownEvents = events.slice(0, PAGE);
      const moreEvents = events.length > PAGE;
      const steps = d.steps.slice(0, PAGE);
      const moreSteps = d.steps.length > PAGE;
      const ended = r.status === 'completed' || r.status === 'failed' || r.status === 'cancelled';
      const runStart = Date.parse(r.created_at);
      const here = (more: Record<string, string | number | undefined>) =>
        href(runPath(r.run_id), { instance: key, steps_after: stepsAfter, events_after: after, ...more });
      const capped = d.not_included.filter((n) => n.part !== 'work_items');
      const attributes = Object.entries(r.attributes);
      const header = h`<dl class="kv"><dt>run</dt><dd><span class="id">${r.run_id}</span></dd>
<dt>workflow</dt><dd><a href="${href('/runs', { instance: key, workflow: r.workflow_name })}" title="Only the runs of this workflow">${breakable(r.workflow_name)}</a></dd>
<dt>status</dt><dd>${status(r.status)}</dd>
${r.error ? h`<dt>error</dt><dd><pre class="problem">${errorText(r.error)}</pre></dd>` : ''}
<dt>created</dt><dd>${exactTime(r.created_at, now)} UTC</dd>
<dt>started</dt><dd>${r.started_at ? h`${exactTime(r.started_at, now)} UTC` : h`<span class="muted">not yet</span>`}</dd>
${r.completed_at ? h`<dt>ended</dt><dd>${exactTime(r.completed_at, now)} UTC, after ${took(r.created_at, r.completed_at, false, now)}</dd>` : r.status === 'running' && r.started_at ? h`<dt>running for</dt><dd>${duration(now - Date.parse(r.started_at))}</dd>` : ''}
${r.expired_at ? h`<dt>expired</dt><dd>${exactTime(r.expired_at, now)} UTC</dd>` : ''}
<dt>deployment</dt><dd>${r.deployment_id ?? ''}</dd>
${attributes.length > 0 ? h`<dt>attributes</dt><dd>${attributes.map(([k, v], n) => h`${n > 0 ? ', ' : ''}<code>${k}</code>=${short(v, 200)}`)}</dd>` : ''}</dl>`;
      const timeline = h`<section aria-labelledby="h-timeline"><h2 id="h-timeline">Timeline</h2>
<p class="muted">The run’s events in the order they were recorded (the event stream <code>${workflowRunStream(r.run_id)}</code>); their data (payloads, hook tokens) is not shown.</p>
${shownEvents.length > 0 ? timelineRows(shownEvents, runStart, now) : h`<p class="muted">${after !== undefined ? 'No more events.' : 'No events.'}</p>`}
<div class="pager">${after !== undefined ? h`<a href="${here({ events_after: undefined })}#h-timeline">First events</a>` : ''}${moreEvents ? h`<a href="${here({ events_after: shownEvents.at(-1)!.position })}#h-timeline">Later events</a>` : ''}</div></section>`;
      const stepsSection = h`<section aria-labelledby="h-steps"><h2 id="h-steps">Steps</h2>
${steps.length > 0 ? stepRows(steps, now) : h`<p class="muted">${stepsAfter ? 'No more steps.' : 'No steps yet.'}</p>`}
<div class="pager">${stepsAfter ? h`<a href="${here({ steps_after: undefined })}#h-steps">First steps</a>` : ''}${moreSteps ? h`<a href="${here({ steps_after: steps.at(-1)!.step_id })}#h-steps">More steps</a>` : ''}</div></section>`;
      const hooks = h`<section aria-labelledby="h-hooks"><h2 id="h-hooks">Live hooks</h2>
${
  d.hooks.length > 0
    ? h`<div class="wrap"><table class="stack"><thead><tr><th>Hook</th><th>Created (UTC)</th><th>Webhook</th></tr></thead><tbody>${d.hooks.map((k) => h`<tr><td><span class="id">${k.hook_id}</span></td><td>${exactTime(k.created_at, now)}</td><td data-label="webhook">${k.is_webhook ? 'yes' : 'no'}</td></tr>`)}</tbody></table></div><p class="muted">Their tokens are not shown: a token resumes its hook.</p>`
    : h`<p class="muted">${ended ? 'None: a run’s hooks end with it.' : 'None.'}</p>`
}</section>`;
      const waits = h`<section aria-labelledby="h-waits"><h2 id="h-waits">Waits</h2>
${
  d.waits.length > 0
    ? h`<div class="wrap"><table class="stack"><thead><tr><th>Wait</th><th>Status</th><th>Created (UTC)</th><th>Resumes (UTC)</th></tr></thead><tbody>${d.waits.map((w) => h`<tr><td><span class="id">${w.wait_id}</span></td><td>${status(w.status)}</td><td>${exactTime(w.created_at, now)}</td><td data-label="resumes">${w.completed_at ? h`done ${exactTime(w.completed_at, now)}` : w.resume_at ? exactTime(w.resume_at, now) : ''}</td></tr>`)}</tbody></table></div>`
    : h`<p class="muted">${ended ? 'None: a run’s waits end with it.' : 'None.'}</p>`
}</section>`;
      const streams = h`<section aria-labelledby="h-streams"><h2 id="h-streams">Streams</h2>
${
  d.streams.length > 0
    ? h`<div class="wrap"><table class="stack"><thead><tr><th>Stream</th><th>Chunks</th><th>Closed</th></tr></thead><tbody>${d.streams.map((s) => h`<tr><td><span class="id">${s.name}</span></td><td class="num" data-label="chunks">${s.chunks}</td><td data-label="closed">${s.done ? 'yes' : 'no'}</td></tr>`)}</tbody></table></div>`
    : h`<p class="muted">None.</p>`
}</section>`;
      const messages = h`<section aria-labelledby="h-messages"><h2 id="h-messages">Queue messages</h2>
<p>Its queue messages are work items titled <code>flow ${r.run_id} &lt;workflow&gt;</code> and <code>step ${r.run_id} &lt;step&gt;</code>. No index finds them by run, so they are not listed here; the work items list finds them by the run id in their titles: ${MESSAGE_KINDS.map(
        (m, n) =>
          h`${n > 0 ? ', ' : ''}<a href="${href('/items', { instance: key, kind: m.kind, q: r.run_id })}">its ${m.what}</a>`,
      )}.</p>
<p class="muted">That list’s text filter looks through the first 1,000 items of a kind. A namespaced World’s kinds are <code>wf:__&lt;namespace&gt;_wkf_workflow_</code> and <code>…_step_</code>; messages queued before titles named their run are titled <code>queue &lt;queue name&gt;</code>.</p></section>`;
      const body = h`<h1>Run of ${breakable(r.workflow_name.split('//').at(-1) || r.workflow_name)}</h1>
<div data-live-region>${header}
${capped.length > 0 ? h`<ul class="problems">${capped.map((n) => h`<li><b>${n.part}:</b> ${n.reason}</li>`)}</ul>` : ''}
${timeline}
${stepsSection}
${hooks}
${waits}
${streams}</div>
${messages}
<p><a href="${href('/runs', { instance: key })}">All runs</a></p>`;
      return c.html(
        page(
          {
            ...f,
            title: `Run ${r.run_id}`,
            live: href('/api/v1/events', { instance: key, stream: workflowRunStream(r.run_id) }),
          },
          body,
        ).value,
      );
    }),
  );
}
