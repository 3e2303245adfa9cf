// The HTTP API of `agentstate serve`: every generated route answers (success and its refusals with the error
// table's statuses), the OpenAPI document matches the routes, and bad input writes nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_TABLE } from '../../src/errors.js';
import { OPERATION_ROUTES } from '../../src/http/routes.js';
import { OPERATIONS } from '../../src/service/table.js';
import { createWorldStorage } from '../../src/workflow-world/storage.js';
import { startTestServer, type TestServer } from './helpers.js';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer(['planner', 'coder']);
});
afterAll(() => s.close());

const post = (name: string, body: unknown, query: Record<string, string> = {}) =>
  s.call('POST', `/api/v1/${name}`, { body, query });
const get = (name: string, query: Record<string, string | string[]> = {}) =>
  s.call('GET', `/api/v1/${name}`, { query });

async function ok(p: Promise<{ status: number; json: any }>): Promise<any> {
  const r = await p;
  expect(r.status, JSON.stringify(r.json)).toBe(200);
  return r.json;
}

async function refused(p: Promise<{ status: number; json: any }>, code: keyof typeof ERROR_TABLE) {
  const r = await p;
  expect(r.json?.error?.code, JSON.stringify(r.json)).toBe(code);
  expect(r.status).toBe(ERROR_TABLE[code].http);
  expect(JSON.stringify(r.json)).not.toMatch(/\n\s+at /);
  return r.json.error;
}

describe('routes', () => {
  it('one route per operation a network edge may offer, none for local ones; reads GET, writes POST', () => {
    const served = new Set(OPERATION_ROUTES.map((r) => r.op.name));
    for (const op of OPERATIONS) {
      // A stream (watch_events) is served as Server-Sent Events at GET /api/v1/events, not as a route.
      expect(served.has(op.name), op.name).toBe(op.local !== true && op.streams !== true);
    }
    expect(OPERATIONS.filter((op) => op.streams).map((op) => op.name)).toEqual(['watch_events']);
    for (const r of OPERATION_ROUTES) expect(r.method).toBe(r.op.writes ? 'POST' : 'GET');
  });

  it('the OpenAPI document lists every route with its schemas and the error statuses', async () => {
    const doc = await ok(s.call('GET', '/api/v1/openapi.json'));
    expect(doc.openapi).toBe('3.1.0');
    for (const r of OPERATION_ROUTES) {
      const entry = doc.paths[r.path]?.[r.method.toLowerCase()];
      expect(entry, r.path).toBeDefined();
      expect(entry.responses['200'].content['application/json'].schema).toEqual(r.op.output);
      if (r.method === 'POST')
        expect(entry.requestBody.content['application/json'].schema).toEqual(r.op.input);
      for (const st of new Set(Object.values(ERROR_TABLE).map((e) => String(e.http)))) {
        expect(entry.responses[st], `${r.path} ${st}`).toBeDefined();
      }
    }
    expect(doc.paths['/api/v1/export_instance']).toBeUndefined();
  });

  it('every route succeeds with the operation’s result', async () => {
    const seen = new Set<string>();
    const run = async (name: string, input: Record<string, unknown> = {}) => {
      seen.add(name);
      const route = OPERATION_ROUTES.find((r) => r.op.name === name)!;
      if (route.method === 'POST') return ok(post(name, input));
      const q: Record<string, string | string[]> = {};
      for (const [k, v] of Object.entries(input)) {
        q[k] = typeof v === 'string' ? v : Array.isArray(v) ? v.map(String) : JSON.stringify(v);
      }
      return ok(get(name, q));
    };
    const a = await run('enqueue', { title: 'first', kind: 'triage' });
    expect(a).toMatchObject({ title: 'first', status: 'pending' });
    expect((await run('claim', { worker: 'w' })).id).toBe(a.id);
    await run('heartbeat', { id: a.id, worker: 'w' });
    await run('annotate', { id: a.id, notes: { seen: true }, worker: 'w' });
    await run('release', { id: a.id, worker: 'w' });
    expect((await run('claim_many', { worker: 'w', limit: 1 })).map((i: any) => i.id)).toEqual([a.id]);
    expect(await run('resolve', { id: a.id, status: 'failed', error: 'boom', worker: 'w' })).toMatchObject({
      status: 'failed',
    });
    const b = await run('enqueue', { title: 'second' });
    await run('park', { id: b.id });
    await run('unpark', { id: b.id });
    expect((await run('cancel', { id: b.id, reason: 'no' })).status).toBe('cancelled');
    expect((await run('get_item', { id: a.id })).error).toBe('boom');
    expect((await run('list_items', { status: ['failed', 'cancelled'] })).length).toBe(2);
    expect((await run('list_items', { status: 'failed', limit: 5 })).map((i: any) => i.id)).toEqual([a.id]);
    expect(await run('count_items')).toMatchObject({ failed: 1, cancelled: 1 });
    expect(await run('queue_stats')).toMatchObject({
      leases_expired: 0,
      blocked_on_failure: 0,
      groups: expect.arrayContaining([expect.objectContaining({ status: 'failed', count: 1 })]),
    });
    const history = await run('queue_history', { window_ms: 3_600_000, buckets: 4 });
    expect(history.buckets).toHaveLength(4);
    expect(history.buckets.at(-1)).toMatchObject({ created: 2, failed: 1, cancelled: 1, open: 0 });
    expect((await run('retry', { id: a.id, reason: 'flaky' })).status).toBe('pending');
    expect((await run('retry_many', { ids: [b.id] })).map((i: any) => i.status)).toEqual(['pending']);
    expect(
      (await run('cancel_many', { ids: [b.id], reason: 'again' })).map((i: { error: string }) => i.error),
    ).toEqual(['again']);
    const limit = { key: 'openai:org-1', max_in_flight: 2, rate: { count: 60, period_ms: 60_000 } };
    expect(await run('set_limit', limit)).toMatchObject(limit);
    expect((await run('list_limits')).map((l: { key: string }) => l.key)).toEqual(['openai:org-1']);
    expect((await run('remove_limit', { key: 'openai:org-1' })).key).toBe('openai:org-1');
    const daily = { name: 'daily', cron: '0 6 * * *', title: 'digest', timezone: 'Europe/Berlin' };
    expect(await run('schedule_add', daily)).toMatchObject({ name: 'daily', enabled: true });
    expect((await run('schedule_list')).map((s: { name: string }) => s.name)).toEqual(['daily']);
    expect(await run('schedule_tick')).toEqual([]);
    expect((await run('schedule_remove', { name: 'daily' })).enabled).toBe(false);
    await run('replay');
    await run('resume', { worker: 'w' });
    const ev = await run('append_event', { type: 'note_added', data: { n: 1 } });
    expect((await run('read_events', { after: ev.position - 1 })).map((e: any) => e.type)).toEqual([
      'note_added',
    ]);
    expect((await run('verify')).ok).toBe(true);
    const head = await run('event_head');
    expect(head).toMatchObject({ position: ev.position });
    expect(head.hash).toMatch(/^[0-9a-f]{64}$/);
    await run('commit', { kind: 'json', id: 'cfg', expected_version: 0, body: { a: 1 } });
    await run('commit', { kind: 'json', id: 'cfg', expected_version: 1, merge_patch: { b: 2 } });
    expect((await run('get_document', { kind: 'json', id: 'cfg' })).body).toEqual({ a: 1, b: 2 });
    expect(await run('get_document', { kind: 'json', id: 'cfg', paths: ['b'] })).toBeDefined();
    expect((await run('history', { kind: 'json', id: 'cfg' })).entries.length).toBe(2);
    await run('diff', { kind: 'json', id: 'cfg', from: 1, to: 2 });
    await run('fork', { kind: 'json', id: 'cfg', new_id: 'cfg2' });
    expect((await run('list_documents', { kind: 'json' })).length).toBe(2);
    const metrics = await run('instance_metrics');
    expect(metrics.documents).toContainEqual({ kind: 'json', documents: 2, versions: 3 });
    expect(metrics.last_verify).toMatchObject({ ok: true });
    expect(metrics.head).toBeGreaterThan(ev.position);
    await run('prune', { kind: 'json', id: 'cfg', keep: 1 });
    const task = {
      goal: 'g',
      acceptance_criteria: [{ id: 'ac1', text: 't' }],
      ambiguities: [{ id: 'q1', question: 'which?', status: 'open' }],
    };
    await run('commit', { kind: 'task-ir', id: 't1', expected_version: 0, body: task });
    await run('validate_document', { kind: 'task-ir', id: 't1', body: task });
    await run('escalate', { id: 't1' });
    await run('apply', { kind: 'task-ir', id: 't1', operation: 'escalate' });
    await run('apply', {
      kind: 'workflow-sessions',
      id: 'deploy',
      operation: 'start-session',
      args: { label: 'first', workflow: 'deploy' },
    });
    expect((await run('render_file', { kind: 'workflow-sessions', id: 'deploy' })).valid).toBe(true);
    await run('scaffold');
    await run('dashboard');
    await run('retro');
    // A durable run's records: a handler of the library records a step; the API lists and resets it.
    const d = await run('enqueue', { title: 'durable' });
    const held = await run('claim', { worker: 'w', id: d.id });
    // The API's instance when a call names none: the first by name.
    const lib = await s.instance('coder');
    try {
      const r = await lib.work.run({ id: d.id, worker: 'w', attempt: held.attempts });
      await r.step('draft', () => ({ text: 'v1' }));
    } finally {
      await lib.close();
    }
    expect(await run('list_steps', { id: d.id })).toEqual([
      expect.objectContaining({ type: 'step', status: 'completed', name: 'draft', result: { text: 'v1' } }),
    ]);
    expect(await run('signal', { id: d.id, name: 'approved', payload: { ok: true } })).toMatchObject({
      type: 'signal',
      name: 'approved',
      payload: { ok: true },
    });
    await run('resolve', { id: d.id, status: 'done', worker: 'w' });
    expect(await run('reset_step', { id: d.id, name: 'draft', reason: 'again' })).toMatchObject({
      type: 'reset',
      from_seq: 1,
      name: 'draft',
      reason: 'again',
    });
    // A Workflow SDK World's run, written by its storage on the same instance; the API lists and shows it.
    const world = await s.instance('coder');
    let runId: string;
    try {
      const storage = createWorldStorage(world);
      const created = await storage.events.create(null, {
        eventType: 'run_created',
        eventData: { deploymentId: 'd', workflowName: 'wf|ü+1', input: new Uint8Array([0]) },
      });
      runId = created.run!.runId;
      await storage.events.create(runId, {
        eventType: 'step_created',
        correlationId: 'step|ü+1',
        eventData: { stepName: 'draft', input: new Uint8Array([0]) },
      });
    } finally {
      await world.close();
    }
    expect(
      (await run('workflow_runs', { workflow: 'wf|ü+1' })).map((r: { run_id: string }) => r.run_id),
    ).toEqual([runId]);
    expect(await run('workflow_run', { run_id: runId })).toMatchObject({
      run: { run_id: runId, status: 'pending' },
      steps: [expect.objectContaining({ step_id: 'step|ü+1', status: 'pending' })],
    });
    expect([...seen].sort()).toEqual(OPERATION_ROUTES.map((r) => r.op.name).sort());
  });

  it('queue_stats refuses hostile input with INVALID_INPUT and writes nothing', async () => {
    const before = await ok(get('count_items'));
    const head = (await ok(get('read_events', { reverse: 'true', limit: '1' })))[0]?.position ?? 0;
    // A read: its input comes in the query string.
    for (const query of [
      { expiring_within_ms: '-1' },
      { expiring_within_ms: 'soon' },
      { expiring_within_ms: '1e30' },
      { expiring_within_ms: ['1', '2'] },
      { unknown: '1' },
      JSON.parse('{"__proto__":"polluted"}') as Record<string, string>,
    ]) {
      await refused(get('queue_stats', query), 'INVALID_INPUT');
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(await ok(get('count_items'))).toEqual(before);
    expect((await ok(get('read_events', { reverse: 'true', limit: '1' })))[0]?.position ?? 0).toBe(head);
  });

  it('cancel_many refuses hostile input with INVALID_INPUT and cancels nothing', async () => {
    const item = await ok(post('enqueue', { title: 'keep me' }));
    const before = await ok(get('count_items'));
    const head = (await ok(get('read_events', { reverse: 'true', limit: '1' })))[0]?.position ?? 0;
    for (const body of [
      {},
      { ids: item.id },
      { ids: [item.id, item.id] },
      { ids: [item.id, 7] },
      { ids: [item.id, 'bad\nid'] },
      { ids: Array.from({ length: 1001 }, (_, k) => `wi_${k}`) },
      { ids: [item.id], reason: { long: true } },
      { ids: [item.id], status: 'done' },
      JSON.parse(`{"ids":["${item.id}"],"__proto__":{"polluted":1}}`),
      [item.id],
      'ids',
    ]) {
      await refused(post('cancel_many', body), 'INVALID_INPUT');
    }
    await refused(post('cancel_many', { ids: [item.id, 'wi_nope'] }), 'NOT_FOUND');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(await ok(get('count_items'))).toEqual(before);
    expect((await ok(get('read_events', { reverse: 'true', limit: '1' })))[0]?.position ?? 0).toBe(head);
    expect((await ok(get('get_item', { id: item.id }))).status).toBe('pending');
  });

  it('a signed-in caller’s instance is picked by ?instance=, and a missing one is NOT_FOUND', async () => {
    const list = await ok(s.call('GET', '/api/v1/instances'));
    expect(list.map((i: any) => i.instance)).toEqual(['h/coder', 'h/planner']);
    const item = await ok(post('enqueue', { title: 'for the coder' }, { instance: 'h/coder' }));
    expect((await ok(get('get_item', { id: item.id, instance: 'h/coder' }))).title).toBe('for the coder');
    await refused(get('get_item', { id: item.id, instance: 'h/planner' }), 'NOT_FOUND');
    await refused(get('count_items', { instance: 'h/nobody' }), 'NOT_FOUND');
    await refused(get('count_items', { instance: '../../etc' }), 'NOT_FOUND');
  });
});

describe('refusals carry the error table’s status', () => {
  it('NOT_FOUND 404, INVALID_INPUT 400, STATE_CONFLICT / LEASE_LOST / INVALID_TRANSITION 409, VALIDATION_FAILED 422, PERMISSION_DENIED 403', async () => {
    await refused(get('get_item', { id: 'wi_missing' }), 'NOT_FOUND');
    await refused(s.call('GET', '/api/v1/nope'), 'NOT_FOUND');
    await refused(get('list_items', { limit: 'many' }), 'INVALID_INPUT');
    await refused(get('list_items', { nonsense: '1' }), 'INVALID_INPUT');
    await refused(get('list_items', { limit: ['1', '2'] }), 'INVALID_INPUT');
    await refused(post('enqueue', {}), 'INVALID_INPUT');
    await refused(
      post('commit', { kind: 'json', id: 'x', expected_version: 0, body: { a: 1 } }).then(async () =>
        post('commit', { kind: 'json', id: 'x', expected_version: 0, body: { a: 2 } }),
      ),
      'STATE_CONFLICT',
    );
    const it = await ok(post('enqueue', { title: 'leased' }));
    await ok(post('claim', { worker: 'w1', id: it.id }));
    await refused(post('resolve', { id: it.id, status: 'done', worker: 'w2' }), 'LEASE_LOST');
    await ok(post('resolve', { id: it.id, status: 'done', worker: 'w1' }));
    await refused(post('cancel', { id: it.id }), 'INVALID_TRANSITION');
    await refused(
      post('commit', { kind: 'task-ir', id: 'bad', expected_version: 0, body: { goal: 1 } }),
      'VALIDATION_FAILED',
    );
    const task = {
      goal: 'g',
      acceptance_criteria: [{ id: 'a', text: 't' }],
      ambiguities: [{ id: 'q', question: '?', status: 'open' }],
    };
    await ok(post('commit', { kind: 'task-ir', id: 'perm', expected_version: 0, body: task }));
    await ok(post('escalate', { id: 'perm' }));
    const [q] = (await ok(get('list_items', { status: 'waiting_human' }))).filter(
      (i: any) => i.title.includes('?') || true,
    );
    const denied = await refused(
      post('resolve', {
        id: q.id,
        status: 'done',
        result: { answer: 'x' },
        actor: 'bot',
        actor_kind: 'model',
      }),
      'PERMISSION_DENIED',
    );
    expect(denied.rule).toBe('human-decision');
  });

  it('a wrong method is 405 naming the right one', async () => {
    const r = await s.call('GET', '/api/v1/enqueue');
    expect(r.status).toBe(405);
    expect(r.headers.get('allow')).toBe('POST');
    expect(r.json.error.code).toBe('INVALID_INPUT');
  });
});

describe('auth', () => {
  it('no token and a wrong token are 401 with WWW-Authenticate; nothing runs', async () => {
    const before = await ok(get('count_items'));
    for (const token of [null, 'wrong-token-0123456789', '']) {
      const r = await s.call('POST', '/api/v1/enqueue', { body: { title: 'x' }, token });
      expect(r.status).toBe(401);
      expect(r.json.error.code).toBe('UNAUTHENTICATED');
      expect(r.headers.get('www-authenticate')).toMatch(/^Bearer/);
      expect((await s.call('GET', '/api/v1/count_items', { token })).status).toBe(401);
      expect((await s.call('GET', '/api/v1/openapi.json', { token })).status).toBe(401);
      expect((await s.call('GET', '/api/v1/events', { token })).status).toBe(401);
      expect((await s.call('POST', '/mcp', { body: {}, token })).status).toBe(401);
    }
    expect(await ok(get('count_items'))).toEqual(before);
  });

  it('a page without a session redirects to the sign-in form', async () => {
    const r = await s.call('GET', '/', { token: null });
    expect(r.status).toBe(303);
    expect(r.headers.get('location')).toMatch(/^\/login/);
  });

  it('a foreign Host header is refused (DNS rebinding)', async () => {
    const { request } = await import('node:http');
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(
        `${s.url}/api/v1/count_items`,
        { headers: { host: 'evil.example:80', authorization: 'Bearer x' } },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      req.end();
    });
    expect(status).toBe(403);
  });
});
