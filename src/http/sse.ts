// The live event stream (Server-Sent Events): every event of an instance's log after a position, in order,
// each exactly once; `id` is the event's position, so a client that reconnects with Last-Event-ID resumes
// right after the last event it got. Positions are gapless and commit in order on both backends, so a tail
// by position can neither skip nor repeat one.
import type { Context } from 'hono';
import { streamSSE } from 'hono/streaming';
import { InvalidInputError, isAgentStateError } from '../errors.js';
import { callOperation } from '../service/edge.js';
import type { EventWatch } from '../service/operations/events.js';
import { getOperation } from '../service/table.js';
import { type AppContext, type AppEnv, edgeCallOf, instanceOf } from './context.js';
import { inputFromQuery } from './routes.js';

/** Comment lines keep idle connections (and proxies) open. */
export const KEEPALIVE_MS = 15_000;

function position(raw: string | undefined, field: string): number | undefined {
  if (raw === undefined || raw === '') return undefined;
  if (!/^\d{1,15}$/.test(raw.trim())) {
    throw new InvalidInputError(`${field} must be an event position (a whole number)`, { field });
  }
  return Number(raw.trim());
}

/**
 * GET /api/v1/events: `after` (or the Last-Event-ID header, which wins: it is the browser's own resume)
 * defaults to the head, so a new client sees what happens from now on; `after=0` replays the whole log.
 * `type` (repeatable), `stream` and `work_item_id` keep only those events.
 */
export async function eventStream(c: Context<AppEnv>, ctx: AppContext): Promise<Response> {
  const inst = await instanceOf(c, ctx.registry);
  const resume = position(c.req.header('last-event-id'), 'Last-Event-ID');
  // The query is watch_events' input, checked by the operation (unknown parameters refused); the browser's
  // own resume, Last-Event-ID, wins over `after`.
  // An empty parameter (`?type=`, a cleared filter) means no filter, as it always has here.
  const params = new URLSearchParams([...new URL(c.req.url).searchParams].filter(([, v]) => v !== ''));
  const input = inputFromQuery(getOperation('watch_events'), params);
  if (resume !== undefined) input.after = resume;
  const ac = new AbortController();
  let watch: EventWatch;
  try {
    watch = (await callOperation(inst, 'watch_events', input, edgeCallOf(c.get('caller')), {
      signal: ac.signal,
      pollMs: ctx.pollMs,
    })) as EventWatch;
  } catch (err) {
    // The browser's own resume names the header, not a query parameter.
    if (resume !== undefined && isAgentStateError(err) && err.details.field === 'after') {
      throw new InvalidInputError(err.message.replace(/^after/, 'Last-Event-ID'), {
        ...err.details,
        field: 'Last-Event-ID',
      });
    }
    throw err;
  }
  return streamSSE(c, async (stream) => {
    const stop = () => ac.abort();
    ctx.signal.addEventListener('abort', stop, { once: true });
    stream.onAbort(stop);
    const keepalive = setInterval(() => void stream.write(': keepalive\n\n').catch(stop), KEEPALIVE_MS);
    try {
      await stream.writeSSE({ event: 'ready', data: JSON.stringify({ after: watch.after }), retry: 1000 });
      for await (const e of watch.events) {
        if (stream.aborted || stream.closed) break;
        await stream.writeSSE({ id: String(e.position), event: 'event', data: JSON.stringify(e) });
      }
    } finally {
      clearInterval(keepalive);
      ctx.signal.removeEventListener('abort', stop);
    }
  });
}
