// Hostile input over HTTP (the hardening issue's cases, test/security/hostile-json.test.ts, at this edge):
// each is a typed error with the error table's status, never a stack trace, and writes nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_BODY_BYTES } from '../../src/http/app.js';
import { startTestServer, type TestServer } from './helpers.js';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer(['planner']);
  await s.call('POST', '/api/v1/commit', {
    body: { kind: 'json', id: 'doc', expected_version: 0, body: { a: 1 } },
  });
});
afterAll(() => s.close());

async function state() {
  const counts = (await s.call('GET', '/api/v1/count_items')).json;
  const events = (await s.call('GET', '/api/v1/read_events', { query: { reverse: 'true', limit: '1' } }))
    .json;
  const doc = (await s.call('GET', '/api/v1/get_document', { query: { kind: 'json', id: 'doc' } })).json;
  return { counts, head: events[0]?.position ?? 0, doc: doc.version };
}

const cases: Array<[string, Parameters<TestServer['call']>[2] & { path: string; method?: 'GET' | 'POST' }]> =
  [
    ['malformed JSON', { path: '/api/v1/enqueue', text: '{"title": ' }],
    ['a JSON array body', { path: '/api/v1/enqueue', text: '[{"title":"x"}]' }],
    ['a JSON string body', { path: '/api/v1/enqueue', text: '"x"' }],
    ['null body', { path: '/api/v1/enqueue', text: 'null' }],
    [
      'text/plain content type',
      { path: '/api/v1/enqueue', text: '{"title":"x"}', headers: { 'content-type': 'text/plain' } },
    ],
    [
      'a form body',
      {
        path: '/api/v1/enqueue',
        text: 'title=x',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      },
    ],
    [
      'an own __proto__ key',
      { path: '/api/v1/enqueue', text: '{"title":"x","__proto__":{"status":"done"}}' },
    ],
    [
      'a merge patch with __proto__',
      {
        path: '/api/v1/commit',
        text: '{"kind":"json","id":"doc","expected_version":1,"merge_patch":{"__proto__":{"a":2}}}',
      },
    ],
    [
      'constructor.prototype in a patch',
      {
        path: '/api/v1/commit',
        body: {
          kind: 'json',
          id: 'doc',
          expected_version: 1,
          json_patch: [{ op: 'add', path: '/constructor/prototype/x', value: 1 }],
        },
      },
    ],
    ['a lone surrogate', { path: '/api/v1/enqueue', text: '{"title":"\\ud800"}' }],
    ['a NUL in a name', { path: '/api/v1/enqueue', body: { title: 'x', kind: 'a\u0000b' } }],
    [
      'a number beyond double range',
      { path: '/api/v1/commit', text: '{"kind":"json","id":"doc","expected_version":1e400,"body":{}}' },
    ],
    ['an unsafe integer', { path: '/api/v1/enqueue', text: '{"title":"x","priority":9007199254740993}' }],
    [
      'deep nesting',
      { path: '/api/v1/enqueue', text: `{"title":"x","payload":${'['.repeat(5000)}${']'.repeat(5000)}}` },
    ],
    ['an oversize title', { path: '/api/v1/enqueue', body: { title: 'x'.repeat(100_000) } }],
    ['an unknown field', { path: '/api/v1/enqueue', body: { title: 'x', status: 'done' } }],
    [
      'invalid UTF-8',
      { path: '/api/v1/enqueue', raw: Uint8Array.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d]) },
    ],
    [
      '__proto__ in the query',
      { method: 'GET', path: '/api/v1/list_items', query: Object.fromEntries([['__proto__', ['a', 'b']]]) },
    ],
    [
      'bad JSON in the query',
      { method: 'GET', path: '/api/v1/validate_document', query: { kind: 'json', id: 'doc', body: '{' } },
    ],
    // render_file (issue 25): a path-like id, a wrong type, an unknown field, a kind without a file.
    [
      'render_file with a traversal id',
      {
        method: 'GET',
        path: '/api/v1/render_file',
        query: { kind: 'workflow-sessions', id: '../../etc/passwd' },
      },
    ],
    [
      'render_file with a text version',
      { method: 'GET', path: '/api/v1/render_file', query: { kind: 'json', id: 'doc', version: 'two' } },
    ],
    [
      'render_file with an unknown field',
      { method: 'GET', path: '/api/v1/render_file', query: { kind: 'json', id: 'doc', __proto__x: '1' } },
    ],
    [
      'render_file of a kind without a file',
      { method: 'GET', path: '/api/v1/render_file', query: { kind: 'json', id: 'doc' } },
    ],
    // The event stream is a view of watch_events: bad filters are refused before anything streams.
    [
      'an event stream with a control character in the type',
      { method: 'GET', path: '/api/v1/events', query: { type: 'a\u0001b' } },
    ],
    [
      'an event stream with an overlong stream name',
      { method: 'GET', path: '/api/v1/events', query: { stream: 'x'.repeat(5000) } },
    ],
    [
      'an event stream from a negative position',
      { method: 'GET', path: '/api/v1/events', query: { after: '-1' } },
    ],
    [
      'an event stream with a bad since',
      { method: 'GET', path: '/api/v1/events', query: { since: '2026-02-30' } },
    ],
    [
      'a step reset naming __proto__',
      { path: '/api/v1/reset_step', body: { id: 'wi_x', name: '__proto__' } },
    ],
    [
      'a step reset with a 10k-character name',
      { path: '/api/v1/reset_step', body: { id: 'wi_x', name: 'x'.repeat(10_000) } },
    ],
    [
      'a step reset with a NUL in its name',
      { path: '/api/v1/reset_step', body: { id: 'wi_x', name: 'a\u0000b' } },
    ],
    [
      'a step reset of an unknown item',
      { path: '/api/v1/reset_step', body: { id: 'wi_unknown', name: 'draft' } },
    ],
    [
      'a step reset with an occurrence of 0 and an unknown field',
      { path: '/api/v1/reset_step', body: { id: 'wi_x', name: 'a', occurrence: 0, seq: 1 } },
    ],
    [
      'the steps of an unknown item',
      { method: 'GET', path: '/api/v1/list_steps', query: { id: 'wi_unknown' } },
    ],
    ['the steps of no item', { method: 'GET', path: '/api/v1/list_steps', query: {} }],
    [
      'a traversal in the instance',
      { path: '/api/v1/enqueue', body: { title: 'x' }, query: { instance: '../../../tmp/x' } },
    ],
  ];

describe('hostile input over HTTP', () => {
  for (const [name, c] of cases) {
    it(`${name}: a typed 4xx, no stack trace, nothing written`, async () => {
      const before = await state();
      const r = await s.call(c.method ?? 'POST', c.path, c);
      expect(r.status, JSON.stringify(r.json).slice(0, 300)).toBeGreaterThanOrEqual(400);
      expect(r.status).toBeLessThan(500);
      expect(typeof r.json?.error?.code).toBe('string');
      expect(JSON.stringify(r.json)).not.toMatch(/\bat .*\.(ts|js):\d+/);
      expect(await state()).toEqual(before);
    });
  }

  it('a body over the limit is refused before it is read whole: 413', async () => {
    const before = await state();
    const r = await s.call('POST', '/api/v1/enqueue', { text: `{"title":"${'x'.repeat(MAX_BODY_BYTES)}"}` });
    expect(r.status).toBe(413);
    expect(r.json.error).toMatchObject({ code: 'INVALID_INPUT', field: 'body' });
    expect(await state()).toEqual(before);
  });
});
