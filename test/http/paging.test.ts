// Paged routes of the HTTP API (issue 40): every route whose operation pages (`page`) caps its page size
// (a larger limit is 400 INVALID_INPUT naming the cap) and links the next page when one is full
// (`Link: <url>; rel="next"`, RFC 8288); following the links from the first page reaches the end with every
// record once, in order, on both backends (a Workflow SDK World's runs, and a run's steps, among them). The
// OpenAPI document says both. A read_events page after the head of the log says so (400 naming the head)
// instead of reading as "nothing new".
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_TABLE } from '../../src/errors.js';
import { MAX_PAGE_SIZE, OPERATION_ROUTES } from '../../src/http/routes.js';
import { createWorldStorage } from '../../src/workflow-world/storage.js';
import { PG_URL, postgresForThisFile } from '../helpers/postgres.js';
import { startTestServer, type TestServer } from './helpers.js';

const schema = await postgresForThisFile();

/** An answer of the API, as JSON. */
// biome-ignore lint/suspicious/noExplicitAny: JSON answers, read by the tests' expectations
type Rec = any;

const PAGED = OPERATION_ROUTES.filter((r) => r.op.page !== undefined);

/** The target of `rel="next"` in a Link header, or null. */
function nextOf(link: string | null): string | null {
  if (link === null) return null;
  const m = /<([^>]*)>\s*;\s*rel="next"/.exec(link);
  expect(m, link).not.toBeNull();
  return m![1]!;
}

const backends: Array<[string, string | undefined]> = [
  ['sqlite', undefined],
  ['postgres', schema === null ? 'skip' : `${PG_URL}?schema=${schema}`],
];

describe.each(backends)('paged routes on %s', (backend, url) => {
  const skip = url === 'skip';
  let s: TestServer;
  let item = '';
  let runId = '';
  beforeAll(async () => {
    if (skip) return;
    s = await startTestServer(['pager'], url ? { url } : {});
    const inst = await s.instance('pager');
    try {
      // 150 items (more than list_items' default page of 100), of two kinds and three priorities.
      await inst.work.enqueueMany(
        Array.from({ length: 150 }, (_, i) => ({
          title: `item ${i}`,
          kind: i % 2 === 0 ? 'even' : 'odd',
          priority: i % 3,
        })),
      );
      // Documents whose ids a URL must carry: | + / % space, non-ASCII; one with a long history.
      for (const id of ['a', 'a|b', 'a+b', 'a/b', 'a%2Fb', 'x y', 'ünï', '日本', 'z&q=1', 'last#'])
        await inst.docs.commit({ kind: 'json', id, expected_version: 0, body: { id } });
      for (let v = 1; v <= 7; v++)
        await inst.docs.commit({ kind: 'json', id: 'a/b', expected_version: v, body: { v } });
      await inst.events.appendMany(Array.from({ length: 11 }, (_, n) => ({ type: 'note', data: { n } })));
      // A durable run's records.
      const run = await inst.work.enqueue({ title: 'durable', priority: -1 });
      item = run.id;
      const held = await inst.work.claim({ worker: 'w', id: item });
      const r = await inst.work.run({ id: item, worker: 'w', attempt: held!.attempts });
      for (let n = 0; n < 8; n++) await r.step(`s${n % 3}`, () => n);
      // A Workflow SDK World's runs (7), the last with 8 steps whose ids a URL must carry.
      const world = createWorldStorage(inst);
      for (let n = 0; n < 7; n++) {
        const created = await world.events.create(null, {
          eventType: 'run_created',
          eventData: { deploymentId: 'd', workflowName: `wf|${n % 2}+ü`, input: new Uint8Array([n]) },
        });
        runId = created.run!.runId;
      }
      for (const id of ['a|b', 'a+b', 'x y', 'ünï', '日本', 'z&q=1', 'last#', '%2F'])
        await world.events.create(runId, {
          eventType: 'step_created',
          correlationId: id,
          eventData: { stepName: 's', input: new Uint8Array([0]) },
        });
    } finally {
      await inst.close();
    }
  });
  afterAll(() => s?.close());

  /** GET of `path` (absolute or relative to the server) with the token: the JSON and the Link header. */
  async function read(path: string): Promise<{ status: number; json: Rec; link: string | null }> {
    const res = await fetch(new URL(path, s.url), {
      headers: { authorization: `Bearer test-token-0123456789abcdef` },
    });
    return { status: res.status, json: await res.json(), link: res.headers.get('link') };
  }

  /** Follows `rel="next"` from `first` to the end: the records of every page, and how many pages. */
  async function follow(first: string, list?: string): Promise<{ records: Rec[]; pages: number }> {
    const records: Rec[] = [];
    let at: string | null = first;
    let pages = 0;
    while (at !== null) {
      const r = await read(at);
      expect(r.status, JSON.stringify(r.json)).toBe(200);
      const page = (list ? r.json[list] : r.json) as Rec[];
      records.push(...page);
      pages++;
      expect(pages).toBeLessThan(500);
      at = nextOf(r.link);
      // A link is relative to the request: the same route, never another host.
      if (at !== null) expect(at.startsWith(new URL(first, s.url).pathname)).toBe(true);
    }
    return { records, pages };
  }

  const q = (route: string, params: Record<string, string | number | boolean>) =>
    `/api/v1/${route}?${new URLSearchParams(Object.entries(params).map(([k, v]): [string, string] => [k, String(v)]))}`;

  /** Each paged route, with the query of a first page, its whole list read at once, and a record's key. */
  const cases = () =>
    [
      ['list_items', { status: 'pending', kind: 'odd' }, (i: Rec) => i.id, undefined],
      ['list_items', { ready: true }, (i: Rec) => i.id, undefined],
      ['list_documents', {}, (d: Rec) => `${d.kind}/${d.id}`, undefined],
      ['list_documents', { kind: 'json' }, (d: Rec) => `${d.kind}/${d.id}`, undefined],
      ['list_steps', { id: item }, (r: Rec) => r.position, undefined],
      ['read_events', { type: 'note' }, (e: Rec) => e.position, undefined],
      ['read_events', { reverse: true }, (e: Rec) => e.position, undefined],
      ['history', { kind: 'json', id: 'a/b' }, (h: Rec) => h.seq, 'entries'],
      ['history', { kind: 'json', id: 'a/b', reverse: true }, (h: Rec) => h.seq, 'entries'],
      ['workflow_runs', {}, (r: Rec) => r.run_id, undefined],
      ['workflow_runs', { workflow: 'wf|0+ü' }, (r: Rec) => r.run_id, undefined],
      ['workflow_run', { run_id: runId }, (x: Rec) => x.step_id, 'steps'],
    ] as const;

  it.skipIf(skip)(
    'following Link from the first page reaches the end, every record once and in order, on every paged route',
    async () => {
      const covered = new Set<string>();
      for (const [route, params, key, list] of cases()) {
        covered.add(route);
        const whole = await read(q(route, { ...params, limit: MAX_PAGE_SIZE }));
        expect(whole.status, JSON.stringify(whole.json)).toBe(200);
        const all = ((list ? whole.json[list] : whole.json) as Rec[]).map(key);
        expect(all.length, route).toBeGreaterThan(3);
        expect(whole.link).toBeNull();
        for (const limit of [1, 3]) {
          const { records, pages } = await follow(q(route, { ...params, limit }), list);
          expect(records.map(key), `${route} ${JSON.stringify(params)} by ${limit}`).toEqual(all);
          // Every page full but the last; one more (empty) when the last full page ended the list.
          expect(pages).toBe(Math.floor(all.length / limit) + 1);
        }
      }
      expect([...covered].sort()).toEqual(PAGED.map((r) => r.op.name).sort());
    },
  );

  it.skipIf(skip)('a page of the default size links the next; a short page links none', async () => {
    const first = await read('/api/v1/list_items');
    expect(first.json).toHaveLength(100);
    const next = nextOf(first.link)!;
    const u = new URL(next, s.url);
    expect(u.searchParams.get('after')).toBe(first.json[99].id);
    expect(u.searchParams.has('limit')).toBe(false);
    const second = await read(next);
    expect(second.json).toHaveLength(51);
    expect(second.link).toBeNull();
    const ids = [...first.json, ...second.json].map((i: Rec) => i.id);
    expect(new Set(ids).size).toBe(151);
    // The filters and the instance stay in the link.
    const kept = await read(q('list_items', { instance: 'h/pager', kind: 'even', limit: 10 }));
    const k = new URL(nextOf(kept.link)!, s.url).searchParams;
    expect([k.get('instance'), k.get('kind'), k.get('limit')]).toEqual(['h/pager', 'even', '10']);
  });

  it.skipIf(skip)(
    'a page size over the cap is 400 INVALID_INPUT naming it, on every paged route; nothing runs',
    async () => {
      expect(PAGED.length).toBeGreaterThanOrEqual(5);
      for (const r of PAGED) {
        const field = r.op.page!.limit;
        const params: Record<string, string> =
          r.op.name === 'list_steps'
            ? { id: item }
            : r.op.name === 'history'
              ? { kind: 'json', id: 'a' }
              : r.op.name === 'workflow_run'
                ? { run_id: runId }
                : {};
        const over = await read(q(r.op.name, { ...params, [field]: MAX_PAGE_SIZE + 1 }));
        expect(over.status, r.op.name).toBe(ERROR_TABLE.INVALID_INPUT.http);
        expect(over.json.error).toMatchObject({ code: 'INVALID_INPUT', field, max: MAX_PAGE_SIZE });
        expect(over.json.error.message).toContain(String(MAX_PAGE_SIZE));
        const at = await read(q(r.op.name, { ...params, [field]: MAX_PAGE_SIZE }));
        expect(at.status, JSON.stringify(at.json)).toBe(200);
        // Every default fits under the cap.
        expect(r.op.page!.defaultLimit).toBeLessThanOrEqual(MAX_PAGE_SIZE);
      }
    },
  );

  it.skipIf(skip)(
    'cursors naming nothing are 400 INVALID_INPUT on after; a read after the head names the head',
    async () => {
      for (const path of [
        q('list_items', { after: 'wi_nope' }),
        q('list_documents', { after: 'json/nope' }),
        q('list_documents', { after: 'json' }),
        q('list_steps', { id: item, after: 1 }),
        q('workflow_runs', { after: 'wrun_nope' }),
        q('workflow_run', { run_id: runId, after: 'never' }),
      ]) {
        const r = await read(path);
        expect(r.status, path).toBe(400);
        expect(r.json.error).toMatchObject({ code: 'INVALID_INPUT', field: 'after' });
      }
      const head = (await read(q('read_events', { reverse: true, limit: 1 }))).json[0].position;
      expect((await read(q('read_events', { after: head }))).json).toEqual([]);
      const past = await read(q('read_events', { after: head + 5 }));
      expect(past.status).toBe(400);
      expect(past.json.error).toMatchObject({ code: 'INVALID_INPUT', field: 'after', head });
      expect(past.json.error.message).toContain(`(${head})`);
      // A filtered read that finds nothing before the head is an empty page, as before.
      expect((await read(q('read_events', { after: 0, type: 'never_written' }))).json).toEqual([]);
    },
  );

  it.skipIf(skip || backend !== 'sqlite')(
    'the OpenAPI document gives paged routes the cap and the Link header',
    async () => {
      const doc = (await read('/api/v1/openapi.json')).json;
      for (const r of OPERATION_ROUTES) {
        const entry = doc.paths[r.path][r.method.toLowerCase()];
        const link = entry.responses['200'].headers?.Link;
        if (r.op.page === undefined) {
          expect(link, r.path).toBeUndefined();
          continue;
        }
        expect(link.schema).toEqual({ type: 'string' });
        expect(link.description).toContain('rel="next"');
        const limit = entry.parameters.find((p: { name: string }) => p.name === r.op.page!.limit);
        expect(limit.schema.maximum, r.path).toBe(MAX_PAGE_SIZE);
      }
    },
  );
});
