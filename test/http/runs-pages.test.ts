// The dashboard's Runs pages over HTTP (issue 42): an unknown run is a 404 page in the dashboard's frame;
// hostile ids in the path (a traversal, __proto__, NUL, a newline, 10,000 characters, markup, broken percent
// escapes) and hostile paging parameters are a 400 or 404 page with the navigation, never a stack trace,
// never reflected as markup, and write nothing.
import type { Storage } from '@workflow/world';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Instance, openInstance } from '../../src/instance/instance.js';
import { createWorldStorage } from '../../src/workflow-world/storage.js';
import { startTestServer, type TestServer } from './helpers.js';

let s: TestServer;
let inst: Instance;
let runId: string;

beforeAll(async () => {
  s = await startTestServer(['ops']);
  inst = await openInstance({ root: s.root, host: 'h', name: 'ops' });
  const st: Storage = createWorldStorage(inst);
  const created = await st.events.create(null, {
    eventType: 'run_created',
    eventData: { deploymentId: 'd', workflowName: 'workflow//./src/a//a', input: new Uint8Array([0]) },
  });
  runId = created.run!.runId;
  await st.events.create(runId, {
    eventType: 'step_created',
    correlationId: 'step|ü+1',
    eventData: { stepName: 'step//./src/a//s', input: new Uint8Array([0]) },
  });
});
afterAll(async () => {
  await inst?.close();
  await s?.close();
});

/** A dashboard page as the bearer token's holder gets it: status and HTML. */
async function get(path: string): Promise<{ status: number; html: string }> {
  const r = await s.call('GET', path);
  return { status: r.status, html: typeof r.json === 'string' ? r.json : JSON.stringify(r.json) };
}

const head = async () => (await inst.events.head())?.position ?? 0;

/** A page that says what went wrong in the dashboard's frame: navigation, no stack trace, no raw markup. */
function isErrorPage(html: string, where: string): void {
  expect(html, where).toMatch(/^<!doctype html>/);
  expect(html, where).toContain('<nav aria-label="Sections">');
  expect(html, where).toContain('href="/runs');
  expect(html, where).not.toMatch(/\bat .*\.(ts|js):\d+/);
  expect(html, where).not.toContain('<script>alert');
  expect(html, where).not.toContain('<img');
}

describe('the Runs pages over HTTP', () => {
  it('a run and the list answer 200; an unknown run is a 404 in the dashboard’s frame, naming the run', async () => {
    const list = await get('/runs?instance=h/ops');
    expect(list.status).toBe(200);
    expect(list.html).toContain(runId);
    const shown = await get(`/runs/${runId}?instance=h/ops`);
    expect(shown.status).toBe(200);
    expect(shown.html).toContain('step|ü+1');
    const unknown = await get('/runs/wrun_01ARZ3NDEKTSV4RRFFQ69G5FAV?instance=h/ops');
    expect(unknown.status).toBe(404);
    isErrorPage(unknown.html, 'unknown run');
    expect(unknown.html).toContain('<h1>No such run</h1>');
    expect(unknown.html).toContain('wrun_01ARZ3NDEKTSV4RRFFQ69G5FAV');
    // The instance picker and the current section stay.
    expect(unknown.html).toContain('id="instance-picker"');
    expect(unknown.html).toMatch(/<a href="\/runs\?instance=h%2Fops" aria-current="page">Runs<\/a>/);
    // An instance that does not exist: the error page, 404.
    const noInstance = await get(`/runs/${runId}?instance=h/nope`);
    expect(noInstance.status).toBe(404);
    isErrorPage(noInstance.html, 'unknown instance');
  });

  const hostile: Array<[string, string, number]> = [
    ['a traversal', '..%2F..%2Fetc%2Fpasswd', 400],
    ['a traversal with backslashes', '..%5C..%5Cwindows', 400],
    ['a leading dot', '.hidden', 400],
    ['__proto__', '__proto__', 400],
    ['constructor', 'constructor', 400],
    ['a NUL', 'wrun_%00x', 400],
    ['a newline', 'wrun_%0Ax', 400],
    ['10,000 characters', 'x'.repeat(10_000), 400],
    ['markup', '%3Cscript%3Ealert(1)%3C%2Fscript%3E', 400],
    ['markup without a slash', '%3Cimg%20src%3Dx%20onerror%3Dalert(1)%3E', 404],
    ['a broken percent escape', 'wrun_%E0%A4%A', 404],
    ['a lone surrogate', 'wrun_%ED%A0%80', 404],
    ['a valid id with | + and non-ASCII', 'wrun_%7C%2B%C3%BC', 404],
  ];
  for (const [name, id, status] of hostile) {
    it(`a run id with ${name}: ${status}, a page with the navigation, no stack trace, nothing written`, async () => {
      const before = await head();
      const r = await get(`/runs/${id}?instance=h/ops`);
      expect(r.status, r.html.slice(0, 300)).toBe(status);
      isErrorPage(r.html, name);
      expect(await head()).toBe(before);
    });
  }

  it('hostile paging and filters: refused with a 400 page or ignored, never a stack trace', async () => {
    const before = await head();
    const refused = [
      `/runs/${runId}?instance=h/ops&steps_after=__proto__`,
      `/runs/${runId}?instance=h/ops&steps_after=step_none`,
      `/runs/${runId}?instance=h/ops&steps_after=${'x'.repeat(10_000)}`,
      '/runs?instance=h/ops&after=..%2Fx',
      '/runs?instance=h/ops&after=wrun_01ARZ3NDEKTSV4RRFFQ69G5FAV',
      '/runs?instance=h/ops&status=done',
      '/runs?instance=h/ops&status=__proto__',
      '/runs?instance=h/ops&workflow=a%00b',
      `/runs?instance=h/ops&workflow=${'x'.repeat(10_000)}`,
    ];
    for (const path of refused) {
      const r = await get(path);
      expect(r.status, path.slice(0, 120)).toBe(400);
      isErrorPage(r.html, path.slice(0, 120));
    }
    // Not numbers, or out of range: the first page (the parameter is only ever a position or a page size).
    for (const q of ['events_after=-1', 'events_after=abc', 'events_after=1e400', 'limit=abc', 'limit=-5']) {
      const r = await get(`/runs/${runId}?instance=h/ops&${q}`);
      expect(r.status, q).toBe(200);
      expect(r.html, q).toContain('step_created');
    }
    expect((await get('/runs?instance=h/ops&limit=100000')).status).toBe(200);
    expect(await head()).toBe(before);
  });
});
