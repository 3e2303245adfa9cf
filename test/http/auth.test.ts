// Who may call `agentstate serve`: the bearer token, a signed-in human's cookie (writes recorded as theirs,
// actor_kind human), CSRF on every cookie write, the token file (0600, created once), and no non-loopback
// bind without a token.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dirTokenFile, TOKEN_FILE } from '../../src/http/auth.js';
import { startServer } from '../../src/http/serve.js';
import { openInstance } from '../../src/instance/instance.js';
import { tempDir } from '../helpers/tmp.js';
import { startTestServer, type TestServer, TOKEN } from './helpers.js';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer(['planner']);
});
afterAll(() => s.close());

async function signIn(name: string, token = TOKEN): Promise<{ status: number; cookie: string | null }> {
  const res = await fetch(`${s.url}/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: s.url },
    body: new URLSearchParams({ name, token, next: '/' }),
    redirect: 'manual',
  });
  const set = res.headers.get('set-cookie');
  return { status: res.status, cookie: set ? set.split(';')[0]! : null };
}

async function browserCall(
  cookie: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
) {
  const res = await fetch(`${s.url}${path}`, {
    method,
    headers: { cookie, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    redirect: 'manual',
  });
  return { status: res.status, json: (await res.json().catch(() => null)) as any };
}

describe('the dashboard session', () => {
  it('signing in sets an HttpOnly SameSite=Strict cookie; a wrong token is refused', async () => {
    const bad = await signIn('ada', 'not-the-token-at-all');
    expect(bad.status).toBe(401);
    expect(bad.cookie).toBeNull();
    const res = await fetch(`${s.url}/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ name: 'ada', token: TOKEN }),
      redirect: 'manual',
    });
    expect(res.status).toBe(303);
    const set = res.headers.get('set-cookie')!;
    expect(set).toMatch(/HttpOnly/i);
    expect(set).toMatch(/SameSite=Strict/i);
    expect(set).toMatch(/Path=\//);
  });

  it('a cross-site sign-in (foreign Origin) is refused', async () => {
    const res = await fetch(`${s.url}/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'https://evil.example' },
      body: new URLSearchParams({ name: 'ada', token: TOKEN }),
      redirect: 'manual',
    });
    expect(res.status).toBe(403);
  });

  it('cookie writes need the CSRF token and a same-origin Origin; with them they are the human’s', async () => {
    const { cookie } = await signIn('Ada Lovelace');
    const session = await browserCall(cookie!, 'GET', '/api/v1/session');
    expect(session.json).toMatchObject({ via: 'session', actor: 'Ada Lovelace' });
    const csrf = session.json.csrf as string;
    const item = (await s.call('POST', '/api/v1/enqueue', { body: { title: 'x' } })).json;
    const noCsrf = await browserCall(cookie!, 'POST', '/api/v1/cancel', { id: item.id });
    expect(noCsrf.status).toBe(403);
    expect(noCsrf.json.error.code).toBe('PERMISSION_DENIED');
    const wrong = await browserCall(
      cookie!,
      'POST',
      '/api/v1/cancel',
      { id: item.id },
      { 'x-csrf-token': 'forged' },
    );
    expect(wrong.status).toBe(403);
    const foreign = await browserCall(
      cookie!,
      'POST',
      '/api/v1/cancel',
      { id: item.id },
      {
        'x-csrf-token': csrf,
        origin: 'https://evil.example',
      },
    );
    expect(foreign.status).toBe(403);
    expect((await s.call('GET', '/api/v1/get_item', { query: { id: item.id } })).json.status).toBe('pending');
    // A write that names another actor is refused, writing nothing; without one it is the signed-in human's.
    const other = await browserCall(
      cookie!,
      'POST',
      '/api/v1/cancel',
      { id: item.id, actor: 'someone-else' },
      { 'x-csrf-token': csrf, origin: s.url },
    );
    expect(other.status).toBe(403);
    expect(other.json.error).toMatchObject({ code: 'PERMISSION_DENIED', field: 'actor' });
    expect((await s.call('GET', '/api/v1/get_item', { query: { id: item.id } })).json.status).toBe('pending');
    const done = await browserCall(
      cookie!,
      'POST',
      '/api/v1/cancel',
      { id: item.id },
      { 'x-csrf-token': csrf, origin: s.url },
    );
    expect(done.status).toBe(200);
    const events = (await s.call('GET', '/api/v1/read_events', { query: { work_item_id: item.id } })).json;
    expect(events.at(-1)).toMatchObject({ type: 'work_item_cancelled', actor: 'Ada Lovelace' });
  });

  it('a human decision answered through the session is recorded as actor_kind human', async () => {
    const { cookie } = await signIn('grace');
    const csrf = (await browserCall(cookie!, 'GET', '/api/v1/session')).json.csrf;
    const task = {
      goal: 'g',
      acceptance_criteria: [{ id: 'a', text: 't' }],
      ambiguities: [{ id: 'q', question: 'which?', status: 'open' }],
    };
    await s.call('POST', '/api/v1/commit', {
      body: { kind: 'task-ir', id: 'dec', expected_version: 0, body: task },
    });
    await s.call('POST', '/api/v1/escalate', { body: { id: 'dec' } });
    const [q] = (await s.call('GET', '/api/v1/list_items', { query: { status: 'waiting_human' } })).json;
    // A person's session cannot write as a model either.
    const asModel = await browserCall(
      cookie!,
      'POST',
      '/api/v1/resolve',
      { id: q.id, status: 'done', result: { answer: 'utc' }, actor_kind: 'model' },
      { 'x-csrf-token': csrf },
    );
    expect(asModel.json.error).toMatchObject({ code: 'PERMISSION_DENIED', field: 'actor_kind' });
    const r = await browserCall(
      cookie!,
      'POST',
      '/api/v1/resolve',
      { id: q.id, status: 'done', result: { answer: 'utc' } },
      { 'x-csrf-token': csrf },
    );
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    const hist = (await s.call('GET', '/api/v1/history', { query: { kind: 'task-ir', id: 'dec' } })).json;
    expect(hist.entries.at(-1)).toMatchObject({ actor: 'grace', actor_kind: 'human' });
  });

  it('a forged or tampered cookie is 401', async () => {
    const { cookie } = await signIn('ada');
    expect((await browserCall(cookie!, 'GET', '/api/v1/count_items')).status).toBe(200);
    // The cookie is a random session id the server keeps: any other value names no session.
    const last = cookie!.at(-1) === 'A' ? 'B' : 'A';
    const tampered = `${cookie!.slice(0, -1)}${last}`;
    expect((await browserCall(tampered, 'GET', '/api/v1/count_items')).status).toBe(401);
    expect((await browserCall('agentstate_session=x.y.z', 'GET', '/api/v1/count_items')).status).toBe(401);
  });

  it('/mcp takes the bearer token only (a cookie is not enough)', async () => {
    const { cookie } = await signIn('ada');
    const r = await browserCall(cookie!, 'POST', '/mcp', {});
    expect(r.status).toBe(401);
  });
});

describe('the token', () => {
  it('is generated at first start into the root with mode 0600, then read back', async () => {
    const root = tempDir('agentstate-token-');
    await (await openInstance({ root, host: 'h', name: 'a' })).close();
    const saved = process.env.AGENTSTATE_TOKEN;
    delete process.env.AGENTSTATE_TOKEN;
    try {
      const first = await startServer({ target: { root }, port: 0 });
      await first.close();
      expect(first.token.source).toBe('generated');
      const file = join(root, TOKEN_FILE);
      expect(statSync(file).mode & 0o777).toBe(0o600);
      const second = await startServer({ target: { root }, port: 0 });
      await second.close();
      expect(second.token).toMatchObject({ source: 'file', token: first.token.token });
    } finally {
      if (saved !== undefined) process.env.AGENTSTATE_TOKEN = saved;
    }
  });

  it('serving one folder keeps its token in the root, one per folder, never inside the folder (issue 23)', async () => {
    const root = tempDir('agentstate-token-dir-');
    const dir = join(root, 'data', 'planner');
    const other = join(root, 'data', 'other');
    for (const d of [dir, other]) await (await openInstance({ dir: d })).close();
    const saved = process.env.AGENTSTATE_TOKEN;
    delete process.env.AGENTSTATE_TOKEN;
    try {
      const first = await startServer({ target: { dir, root }, port: 0 });
      await first.close();
      expect(first.token).toMatchObject({ source: 'generated', file: join(root, dirTokenFile(dir)) });
      expect(statSync(first.token.file!).mode & 0o777).toBe(0o600);
      // Nothing secret travels with a copy of the data folder.
      expect(readdirSync(dir).filter((f) => f.includes('token'))).toEqual([]);
      const again = await startServer({ target: { dir, root }, port: 0 });
      await again.close();
      expect(again.token).toMatchObject({ source: 'file', token: first.token.token });
      const second = await startServer({ target: { dir: other, root }, port: 0 });
      await second.close();
      expect(second.token.file).not.toBe(first.token.file);
      expect(second.token.token).not.toBe(first.token.token);
    } finally {
      if (saved !== undefined) process.env.AGENTSTATE_TOKEN = saved;
    }
  });

  it('binding a non-loopback address without a token is refused', async () => {
    const saved = process.env.AGENTSTATE_TOKEN;
    delete process.env.AGENTSTATE_TOKEN;
    try {
      await expect(startServer({ target: { root: s.root }, port: 0, host: '0.0.0.0' })).rejects.toMatchObject(
        {
          code: 'INVALID_INPUT',
        },
      );
    } finally {
      if (saved !== undefined) process.env.AGENTSTATE_TOKEN = saved;
    }
  });
});
