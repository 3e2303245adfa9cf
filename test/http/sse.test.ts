// The live event stream: 10,000 events appended by 3 processes while a client streams; it reconnects with
// Last-Event-ID halfway and still gets every event exactly once, in order (both backends).
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { PG_URL, postgresForThisFile } from '../helpers/postgres.js';
import { type Racer, race } from '../helpers/racers.js';
import { readSse, startTestServer, type TestServer, TOKEN } from './helpers.js';

const WORKER = fileURLToPath(new URL('./fixtures/append-worker.mjs', import.meta.url));
const TOTAL = 10_000;
const WRITERS = 3;

const schema = await postgresForThisFile();
const targets: Array<{ name: string; url?: string }> = [{ name: 'sqlite' }];
if (schema !== null) targets.push({ name: 'postgres', url: `${PG_URL}?schema=${schema}` });

/** An appending process: `count` events as `writer`, started with the others behind the gate. */
function appender(root: string, writer: string, count: number, url?: string): Racer {
  return {
    script: WORKER,
    args: [root, 'h', 'planner', writer, String(count), ...(url ? [url] : [])],
    label: `appender ${writer}`,
  };
}

const servers: TestServer[] = [];
afterAll(async () => {
  for (const s of servers) await s.close();
});

for (const t of targets) {
  describe(`event stream on ${t.name}`, () => {
    it(`${TOTAL} events from ${WRITERS} processes, resumed with Last-Event-ID halfway: each once, in order`, async () => {
      const s = await startTestServer(['planner'], t.url ? { url: t.url } : {});
      servers.push(s);
      const head = (await s.call('GET', '/api/v1/read_events', { query: { reverse: 'true', limit: '1' } }))
        .json[0]?.position as number | undefined;
      const h0 = head ?? 0;
      const stream = `${s.url}/api/v1/events?instance=h/planner&after=${h0}&type=sse_probe`;
      const auth = { authorization: `Bearer ${TOKEN}` };
      const counts = [3334, 3333, 3333];
      const writers = race(counts.map((c, i) => appender(s.root, `w${i}`, c, t.url)));
      // Awaited below; a failing writer must not be an unhandled rejection while the stream is read.
      writers.catch(() => {});
      const isEvent = (m: { event?: string }) => m.event === 'event';
      const first = await readSse(
        stream,
        auth,
        (_m, all) => all.filter(isEvent).length >= TOTAL / 2,
        120_000,
      );
      const firstEvents = first.filter(isEvent);
      expect(firstEvents.length).toBe(TOTAL / 2);
      const lastId = firstEvents.at(-1)!.id!;
      const rest = await readSse(
        stream,
        { ...auth, 'last-event-id': lastId },
        (_m, all) => all.filter(isEvent).length >= TOTAL / 2,
        120_000,
      );
      await writers;
      const events = [...firstEvents, ...rest.filter(isEvent)].map((m) => ({
        id: Number(m.id),
        e: JSON.parse(m.data) as { position: number; data: { writer: string; n: number } },
      }));
      expect(events.length).toBe(TOTAL);
      // Positions are the ids, gapless from the head, each once.
      events.forEach((x, i) => {
        expect(x.id).toBe(h0 + 1 + i);
        expect(x.e.position).toBe(x.id);
      });
      // Every writer's events arrive in the order it wrote them, none missing.
      for (const [i, c] of counts.entries()) {
        const ns = events.filter((x) => x.e.data.writer === `w${i}`).map((x) => x.e.data.n);
        expect(ns).toEqual(Array.from({ length: c }, (_, k) => k));
      }
    }, 240_000);
  });
}

describe('event stream filters and refusals', () => {
  it('type, stream and work_item_id keep only those events; a bad Last-Event-ID is INVALID_INPUT', async () => {
    const s = await startTestServer(['planner']);
    servers.push(s);
    const post = (body: unknown) => s.call('POST', '/api/v1/append_event', { body });
    await post({ type: 'a_seen', stream: 's1', data: {} });
    await post({ type: 'b_seen', stream: 's2', data: {} });
    const item = (await s.call('POST', '/api/v1/enqueue', { body: { title: 'x' } })).json;
    await post({ type: 'a_seen', stream: 's2', data: {}, work_item_id: item.id });
    const auth = { authorization: `Bearer ${TOKEN}` };
    const read = async (q: string, n: number) =>
      (
        await readSse(
          `${s.url}/api/v1/events?after=0&${q}`,
          auth,
          (_m, all) => all.filter((m) => m.event === 'event').length >= n,
          10_000,
        )
      )
        .filter((m) => m.event === 'event')
        .map((m) => JSON.parse(m.data) as { type: string; stream: string });
    expect((await read('type=a_seen', 2)).map((e) => e.stream)).toEqual(['s1', 's2']);
    expect((await read('stream=s2', 2)).map((e) => e.type)).toEqual(['b_seen', 'a_seen']);
    expect((await read(`work_item_id=${item.id}`, 2)).map((e) => e.type)).toEqual([
      'work_item_enqueued',
      'a_seen',
    ]);
    const bad = await fetch(`${s.url}/api/v1/events`, { headers: { ...auth, 'last-event-id': 'abc' } });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { code: string } }).error.code).toBe('INVALID_INPUT');
  });
});
