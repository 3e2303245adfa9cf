// The event log page: the hash chain's head and an on-demand verify, then the events, newest first.
import type { Hono } from 'hono';
import type { EventRecord } from '../../core/types.js';
import type { AppContext, AppEnv } from '../context.js';
import { eventRows, filters, frame, guarded, PAGE, run } from './common.js';
import { h, href, pretty } from './html.js';
import { page } from './layout.js';
/** Mounts the event log page: the hash chain and its verify, filters, pages of older events. */
export function mountEvents(app: Hono<AppEnv>, ctx: AppContext): void {
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
      const head = await run<{ position: number; hash: string } | null>(inst, 'event_head');
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
}
