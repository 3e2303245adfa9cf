// Identity at the edges (issue 24): named principals with a role, the principal × operation matrix through
// the HTTP API and MCP, writes recorded as the principal, agents kept from human decisions, one MCP client
// kept from another's lease, revocation and sign-out that take effect at once. On both backends.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Role } from '../../src/auth/access.js';
import { PRINCIPALS_FILE, PrincipalStore } from '../../src/auth/principals.js';
import { OPERATION_ROUTES } from '../../src/http/routes.js';
import { PG_URL, postgresForThisFile } from '../helpers/postgres.js';
import { tempDir } from '../helpers/tmp.js';
import { startTestServer, type TestServer, TOKEN } from './helpers.js';

const schema = await postgresForThisFile();

describe('the principals file', () => {
  it('keeps each token only as a scrypt hash, mode 0600, in the root; revoke and duplicates', () => {
    const root = tempDir('agentstate-principals-');
    const store = new PrincipalStore(root);
    const { principal, token } = store.add({ name: 'auth0|ci+bot@x', role: 'agent' });
    expect(token).toMatch(/^ast_[0-9a-f]{16}_[A-Za-z0-9_-]{43}$/);
    const file = join(root, PRINCIPALS_FILE);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const text = readFileSync(file, 'utf8');
    expect(text).not.toContain(token.slice(21));
    expect(text).toMatch(/"hash": "scrypt\$16384\$8\$1\$/);
    expect(readdirSync(root)).toEqual([PRINCIPALS_FILE]);
    expect(store.authenticate(token)).toEqual({
      principal: { name: 'auth0|ci+bot@x', role: 'agent', read_only: false },
      id: principal.id,
    });
    // A wrong secret for a real id, an unknown id, and no principal token at all.
    expect(store.authenticate(`${token.slice(0, -1)}${token.at(-1) === 'A' ? 'B' : 'A'}`)).toBeNull();
    expect(store.authenticate(token.replace(principal.id, '0'.repeat(16)))).toBeNull();
    expect(store.authenticate(TOKEN)).toBeNull();
    expect(() => store.add({ name: 'auth0|ci+bot@x', role: 'human' })).toThrow(
      expect.objectContaining({ code: 'STATE_CONFLICT' }),
    );
    expect(() => store.add({ name: '../x', role: 'human' })).toThrow(
      expect.objectContaining({ code: 'INVALID_INPUT' }),
    );
    expect(() => store.add({ name: 'x', role: 'root' as Role })).toThrow(
      expect.objectContaining({ code: 'INVALID_INPUT' }),
    );
    // Another process's store sees the revoke at once.
    new PrincipalStore(root).revoke('auth0|ci+bot@x');
    expect(store.authenticate(token)).toBeNull();
    expect(store.list()).toEqual([
      expect.objectContaining({ name: 'auth0|ci+bot@x', revoked_at: expect.any(String) }),
    ]);
    expect(() => store.revoke('auth0|ci+bot@x')).toThrow(expect.objectContaining({ code: 'NOT_FOUND' }));
    // The name is free again once revoked.
    expect(store.add({ name: 'auth0|ci+bot@x', role: 'human' }).principal.role).toBe('human');
  });
});

const TARGETS: Array<[string, { url?: string }]> = [
  ['embedded', {}],
  ...(schema === null
    ? []
    : ([['postgres', { url: `${PG_URL}?schema=${schema}` }]] as Array<[string, { url?: string }]>)),
];

/** The matrix as docs/http.md states it, written out here rather than read from the code under test. */
const ADMIN_ONLY = new Set(['import_instance', 'prune', 'scaffold']);
function expected(
  role: Role | 'owner',
  readOnly: boolean,
  op: { name: string; writes: boolean },
): 'allowed' | 'denied' {
  if (readOnly && op.writes) return 'denied';
  if (ADMIN_ONLY.has(op.name) && role !== 'admin' && role !== 'owner') return 'denied';
  return 'allowed';
}

describe.each(TARGETS)('principals on serve (%s)', (label, target) => {
  let s: TestServer;
  const tokens: Record<string, string> = {};
  beforeAll(async () => {
    s = await startTestServer(['planner'], target);
    const store = new PrincipalStore(s.root);
    for (const [name, role, read_only] of [
      ['bot-a', 'agent', false],
      ['bot-b', 'agent', false],
      ['watcher', 'agent', true],
      ['ada', 'human', false],
      ['root-admin', 'admin', false],
    ] as Array<[string, Role, boolean]>) {
      tokens[name] = store.add({ name, role, read_only }).token;
    }
  });
  afterAll(() => s?.close());

  /** A task with one open question, escalated: the store enqueues a human decision for it. */
  async function askHuman(id: string, question: string, text: string): Promise<void> {
    await s.call('POST', '/api/v1/commit', {
      body: {
        kind: 'task-ir',
        id,
        expected_version: 0,
        body: {
          goal: 'g',
          acceptance_criteria: [],
          ambiguities: [{ id: question, question: text, status: 'open' }],
        },
      },
    });
    await s.call('POST', '/api/v1/escalate', { body: { id } });
  }

  /** POST /login with these fields (the sign-in form). */
  const signIn = (fields: Record<string, string>) =>
    fetch(`${s.url}/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: s.url },
      body: new URLSearchParams({ ...fields, next: '/' }),
      redirect: 'manual',
    });
  /** The session cookie of a sign-in that succeeded. */
  const cookieOf = (login: Response) => login.headers.get('set-cookie')!.split(';')[0]!;

  /** Every kind of caller: name, role, read-only, token. */
  const roles = (): Array<[string, Role | 'owner', boolean, string]> => [
    ['bot-a', 'agent', false, tokens['bot-a']!],
    ['watcher', 'agent', true, tokens.watcher!],
    ['ada', 'human', false, tokens.ada!],
    ['root-admin', 'admin', false, tokens['root-admin']!],
    ['owner', 'owner', false, TOKEN],
  ];

  // The matrix is the edge's (no store rule decides it): checked once, on the embedded store.
  const itEmbedded = (label === 'embedded' ? it : it.skip) as typeof it;
  itEmbedded(
    'every role × every operation of the API is allowed or PERMISSION_DENIED, as the matrix says',
    async () => {
      const seen: string[] = [];
      for (const [name, role, readOnly, token] of roles()) {
        for (const r of OPERATION_ROUTES) {
          // An input no operation accepts: an allowed call fails on it (or succeeds), a denied one never gets there.
          const res =
            r.method === 'GET'
              ? await s.call('GET', r.path, { token, query: { __nope: '1' } })
              : await s.call('POST', r.path, { token, body: { __nope: 1 } });
          const denied = res.status === 403 && ['read-only', 'admin-only'].includes(res.json?.error?.rule);
          expect(denied ? 'denied' : 'allowed', `${name} ${r.op.name}: ${JSON.stringify(res.json)}`).toBe(
            expected(role, readOnly, r.op),
          );
          if (denied) {
            expect(res.json.error).toMatchObject({
              code: 'PERMISSION_DENIED',
              operation: r.op.name,
              principal: name,
            });
            seen.push(`${name}:${r.op.name}`);
          }
        }
      }
      // The matrix is not empty: the read-only agent is refused every write, agents and humans the admin's.
      expect(seen).toContain('watcher:enqueue');
      expect(seen).toContain('bot-a:prune');
      expect(seen).toContain('ada:prune');
      expect(seen).not.toContain('root-admin:prune');
    },
  );

  itEmbedded(
    'every role × every MCP tool at /mcp is allowed or PERMISSION_DENIED, as the matrix says',
    async () => {
      const seen: string[] = [];
      let calls = 0;
      for (const [name, role, readOnly, token] of roles()) {
        const client = new Client({ name: 'matrix', version: '1' });
        await client.connect(
          new StreamableHTTPClientTransport(new URL('/mcp', s.url), {
            requestInit: { headers: { authorization: `Bearer ${token}` } },
          }),
        );
        try {
          const { tools } = await client.listTools();
          for (const tool of tools) {
            const op = OPERATION_ROUTES.find((r) => r.op.name === tool.name)?.op;
            if (!op) continue;
            calls++;
            // No arguments: an allowed call is refused for its input (or runs), a denied one never gets there.
            const res = await client.callTool({ name: tool.name, arguments: {} });
            const text = JSON.stringify(res.content);
            const denied =
              res.isError === true && /PERMISSION_DENIED/.test(text) && /read-only|admin-only/.test(text);
            expect(denied ? 'denied' : 'allowed', `${name} ${tool.name}: ${text}`).toBe(
              expected(role, readOnly, op),
            );
            if (denied) seen.push(`${name}:${tool.name}`);
          }
        } finally {
          await client.close();
        }
      }
      expect(calls).toBeGreaterThan(20);
      expect(seen).toContain('watcher:enqueue');
      expect(seen).toContain('watcher:commit');
      expect(seen).not.toContain('bot-a:enqueue');
    },
  );

  it("a principal's writes are recorded as theirs, with their role's actor kind; naming another is refused", async () => {
    const bot = (
      await s.call('POST', '/api/v1/enqueue', { token: tokens['bot-a'], body: { title: 'by bot' } })
    ).json;
    const ev = (await s.call('GET', '/api/v1/read_events', { query: { work_item_id: bot.id } })).json;
    expect(ev[0]).toMatchObject({ type: 'work_item_enqueued', actor: 'bot-a' });
    for (const body of [
      { kind: 'json', id: 'p1', expected_version: 0, body: {}, actor: 'ada' },
      { kind: 'json', id: 'p1', expected_version: 0, body: {}, actor_kind: 'human' },
    ]) {
      const r = await s.call('POST', '/api/v1/commit', { token: tokens['bot-a'], body });
      expect(r.status).toBe(403);
      expect(r.json.error.code).toBe('PERMISSION_DENIED');
    }
    expect((await s.call('GET', '/api/v1/get_document', { query: { kind: 'json', id: 'p1' } })).status).toBe(
      404,
    );
    const ok = await s.call('POST', '/api/v1/commit', {
      token: tokens.ada,
      body: { kind: 'json', id: 'p1', expected_version: 0, body: { by: 'ada' } },
    });
    expect(ok.status, JSON.stringify(ok.json)).toBe(200);
    const hist = (await s.call('GET', '/api/v1/history', { query: { kind: 'json', id: 'p1' } })).json;
    expect(hist.entries.at(-1)).toMatchObject({ actor: 'ada', actor_kind: 'human' });
    // An agent holds only its own leases: claiming as another worker is refused; its own sub-workers are its.
    const other = await s.call('POST', '/api/v1/claim', {
      token: tokens['bot-a'],
      body: { worker: 'bot-b' },
    });
    expect(other.json.error).toMatchObject({ code: 'PERMISSION_DENIED', field: 'worker' });
    const mine = await s.call('POST', '/api/v1/claim', {
      token: tokens['bot-a'],
      body: { worker: 'bot-a/2' },
    });
    expect(mine.json.lease_owner).toBe('bot-a/2');
    const steal = await s.call('POST', '/api/v1/resolve', {
      token: tokens['bot-b'],
      body: { id: mine.json.id, status: 'done', worker: 'bot-a/2' },
    });
    expect(steal.json.error).toMatchObject({ code: 'PERMISSION_DENIED', field: 'worker' });
    const asItself = await s.call('POST', '/api/v1/resolve', {
      token: tokens['bot-b'],
      body: { id: mine.json.id, status: 'done' },
    });
    expect(asItself.json.error.code).toBe('LEASE_LOST');
    expect((await s.call('GET', '/api/v1/get_item', { query: { id: mine.json.id } })).json.status).toBe(
      'in_flight',
    );
  });

  it('an agent cannot answer a human decision; a human principal can, recorded as that human', async () => {
    await askHuman('login', 'q', 'which?');
    const [q] = (await s.call('GET', '/api/v1/list_items', { query: { status: 'waiting_human' } })).json;
    const byBot = await s.call('POST', '/api/v1/resolve', {
      token: tokens['bot-a'],
      body: { id: q.id, status: 'done', result: { answer: 'oauth' } },
    });
    expect(byBot.status).toBe(403);
    expect(byBot.json.error.code).toBe('PERMISSION_DENIED');
    expect((await s.call('GET', '/api/v1/get_item', { query: { id: q.id } })).json.status).toBe(
      'waiting_human',
    );
    const byAda = await s.call('POST', '/api/v1/resolve', {
      token: tokens.ada,
      body: { id: q.id, status: 'done', result: { answer: 'oauth' } },
    });
    expect(byAda.status, JSON.stringify(byAda.json)).toBe(200);
    const hist = (await s.call('GET', '/api/v1/history', { query: { kind: 'task-ir', id: 'login' } })).json;
    expect(hist.entries.at(-1)).toMatchObject({ actor: 'ada', actor_kind: 'human' });
  });

  it('an agent cannot cancel or re-ask a human decision; a human can, and each event says who and what kind', async () => {
    await askHuman('cancel-me', 'c', 'keep?');
    const waiting = (await s.call('GET', '/api/v1/list_items', { query: { status: 'waiting_human' } }))
      .json as Array<{ id: string; payload: { ambiguity_id?: string } }>;
    const q = waiting.find((i) => i.payload.ambiguity_id === 'c')!;
    const as = (who: string, op: string, body: Record<string, unknown>) =>
      s.call('POST', `/api/v1/${op}`, { token: tokens[who], body: { id: q.id, ...body } });
    const refused = await as('bot-a', 'cancel', { reason: 'staged by a model' });
    expect(refused.status).toBe(403);
    expect(refused.json.error).toMatchObject({ code: 'PERMISSION_DENIED', rule: 'human-decision' });
    const status = async () => (await s.call('GET', '/api/v1/get_item', { query: { id: q.id } })).json.status;
    expect(await status()).toBe('waiting_human');
    expect((await as('ada', 'cancel', { reason: 'wrong question' })).status).toBe(200);
    expect(await status()).toBe('cancelled');
    // Cancelled, nobody can retry it to where a worker takes it; a human asks it again.
    expect((await as('bot-a', 'retry', {})).json.error).toMatchObject({ rule: 'human-decision' });
    // On the dashboard, signed in: the confirmation says what a retry of a decision does, and it does it.
    const cookie = cookieOf(await signIn({ token: tokens.ada! }));
    const item = `${s.url}/items/${encodeURIComponent(q.id)}`;
    const confirm = await (
      await fetch(`${item}/confirm?instance=h%2Fplanner&action=retry`, { headers: { cookie } })
    ).text();
    expect(confirm).toContain('Ask this decision again?');
    const { csrf } = (await (await fetch(`${s.url}/api/v1/session`, { headers: { cookie } })).json()) as {
      csrf: string;
    };
    const act = await fetch(`${item}/act?instance=h%2Fplanner`, {
      method: 'POST',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded', origin: s.url },
      body: new URLSearchParams({ _csrf: csrf, action: 'retry' }),
      redirect: 'manual',
    });
    expect(act.status, await act.text()).toBe(303);
    expect(await status()).toBe('waiting_human');
    const events = (await s.call('GET', '/api/v1/read_events', { query: { work_item_id: q.id } }))
      .json as Array<{
      type: string;
      actor: string;
      data: { actor_kind?: string };
    }>;
    expect(events.map((e) => [e.type, e.actor, e.data.actor_kind])).toEqual([
      ['work_item_enqueued', 'planner', 'system'],
      ['work_item_cancelled', 'ada', 'human'],
      ['work_item_retried', 'ada', 'human'],
    ]);
  });

  it("the dashboard's Release lease is recorded as the signed-in person, not the lease owner", async () => {
    const item = (
      await s.call('POST', '/api/v1/enqueue', { token: tokens['bot-b'], body: { title: 'stuck' } })
    ).json;
    const held = await s.call('POST', '/api/v1/claim', { token: tokens['bot-b'], body: { id: item.id } });
    expect(held.json.lease_owner).toBe('bot-b');
    const login = await signIn({ token: tokens.ada! });
    const cookie = cookieOf(login);
    const { csrf } = (await (await fetch(`${s.url}/api/v1/session`, { headers: { cookie } })).json()) as {
      csrf: string;
    };
    const act = await fetch(`${s.url}/items/${encodeURIComponent(item.id)}/act?instance=h%2Fplanner`, {
      method: 'POST',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded', origin: s.url },
      body: new URLSearchParams({ _csrf: csrf, action: 'release' }),
      redirect: 'manual',
    });
    expect(act.status, await act.text()).toBe(303);
    expect((await s.call('GET', '/api/v1/get_item', { query: { id: item.id } })).json).toMatchObject({
      status: 'pending',
      lease_owner: null,
    });
    const released = (
      await s.call('GET', '/api/v1/read_events', {
        query: { work_item_id: item.id, type: 'work_item_released' },
      })
    ).json;
    expect(released).toEqual([
      expect.objectContaining({ actor: 'ada', data: { worker: 'bot-b', actor_kind: 'human' } }),
    ]);
  });

  it('through /mcp each principal is its own worker: B cannot resolve A’s item; a read-only agent cannot write', async () => {
    const connect = async (name: string) => {
      const client = new Client({ name: 'same-client-name', version: '1' });
      await client.connect(
        new StreamableHTTPClientTransport(new URL('/mcp', s.url), {
          requestInit: { headers: { authorization: `Bearer ${tokens[name]}` } },
        }),
      );
      return client;
    };
    const a = await connect('bot-a');
    const b = await connect('bot-b');
    const w = await connect('watcher');
    try {
      await s.call('POST', '/api/v1/enqueue', { body: { title: 'for mcp', kind: 'mcp-race' } });
      const claimed = await a.callTool({ name: 'claim', arguments: { kind: 'mcp-race' } });
      const item = (claimed.structuredContent as { item: { id: string; lease_owner: string } }).item;
      expect(item.lease_owner).toMatch(/^bot-a(\/|$)/);
      const theirs = await b.callTool({
        name: 'resolve',
        arguments: { id: item.id, status: 'done', worker: item.lease_owner },
      });
      expect(theirs.isError).toBe(true);
      expect(JSON.stringify(theirs.content)).toContain('PERMISSION_DENIED');
      const own = await b.callTool({ name: 'resolve', arguments: { id: item.id, status: 'done' } });
      expect(own.isError).toBe(true);
      expect(JSON.stringify(own.content)).toContain('LEASE_LOST');
      const hb = await b.callTool({ name: 'heartbeat', arguments: { id: item.id } });
      expect(JSON.stringify(hb.content)).toContain('LEASE_LOST');
      const done = await a.callTool({ name: 'resolve', arguments: { id: item.id, status: 'done' } });
      expect(done.isError, JSON.stringify(done.content)).toBeFalsy();
      const events = (await s.call('GET', '/api/v1/read_events', { query: { work_item_id: item.id } })).json;
      expect(events.at(-1)).toMatchObject({ type: 'work_item_resolved', actor: item.lease_owner });

      const ro = await w.callTool({ name: 'enqueue', arguments: { title: 'nope' } });
      expect(ro.isError).toBe(true);
      expect(JSON.stringify(ro.content)).toContain('PERMISSION_DENIED');
      const read = await w.callTool({ name: 'read_events', arguments: { limit: 1 } });
      expect(read.isError).toBeFalsy();
      // A model's commit through MCP carries the principal in its provenance.
      const c = await a.callTool({
        name: 'commit',
        arguments: {
          kind: 'json',
          id: 'via-mcp',
          expected_version: 0,
          body: { x: 1 },
          provenance: { model_id: 'm-1', prompt_ref: 'prompt-1' },
        },
      });
      expect(c.isError, JSON.stringify(c.content)).toBeFalsy();
      const hist = (await s.call('GET', '/api/v1/history', { query: { kind: 'json', id: 'via-mcp' } })).json;
      expect(hist.entries.at(-1)).toMatchObject({
        actor: expect.stringMatching(/^bot-a(\/|$)/),
        actor_kind: 'model',
        provenance: expect.objectContaining({ principal: 'bot-a', via: 'mcp' }),
      });
    } finally {
      await Promise.all([a.close(), b.close(), w.close()]);
    }
  });

  it('a revoked principal is refused at its next request, and its dashboard session ends', async () => {
    const store = new PrincipalStore(s.root);
    const { token } = store.add({ name: 'temp-human', role: 'human' });
    expect((await s.call('GET', '/api/v1/count_items', { token })).status).toBe(200);
    const login = await signIn({ token });
    expect(login.status).toBe(303);
    const cookie = cookieOf(login);
    const session = await fetch(`${s.url}/api/v1/session`, { headers: { cookie } });
    expect(await session.json()).toMatchObject({ via: 'session', actor: 'temp-human', role: 'human' });
    store.revoke('temp-human');
    expect((await s.call('GET', '/api/v1/count_items', { token })).status).toBe(401);
    expect((await fetch(`${s.url}/api/v1/session`, { headers: { cookie } })).status).toBe(401);
  });

  it('an agent token does not sign in to the dashboard; sign-out ends the session on the server', async () => {
    const agent = await signIn({ token: tokens['bot-a']! });
    expect(agent.status).toBe(403);
    expect(agent.headers.get('set-cookie')).toBeNull();
    const login = await signIn({ name: 'Grace', token: TOKEN });
    const cookie = cookieOf(login);
    const { csrf } = (await (await fetch(`${s.url}/api/v1/session`, { headers: { cookie } })).json()) as {
      csrf: string;
    };
    const write = (c: string) =>
      fetch(`${s.url}/api/v1/enqueue`, {
        method: 'POST',
        headers: { cookie: c, 'content-type': 'application/json', 'x-csrf-token': csrf, origin: s.url },
        body: JSON.stringify({ title: 'by Grace' }),
      });
    expect((await write(cookie)).status).toBe(200);
    const out = await fetch(`${s.url}/logout`, {
      method: 'POST',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded', origin: s.url },
      body: new URLSearchParams({ _csrf: csrf }),
      redirect: 'manual',
    });
    expect(out.status).toBe(303);
    // The old cookie and its CSRF token write nothing more.
    expect((await write(cookie)).status).toBe(401);
  });

  it('a model-staged look-alike of a decision is an ordinary item: never offered as a decision to answer', async () => {
    // What a model can do through MCP: an item parked for a human whose payload names a real task's question.
    const fake = (
      await s.call('POST', '/api/v1/enqueue', {
        token: tokens['bot-a'],
        body: {
          title: 'Decide: which?',
          waiting_human: true,
          payload: { doc_id: 'login', ambiguity_id: 'q', question: 'which?' },
        },
      })
    ).json;
    expect(fake.status, JSON.stringify(fake)).toBe('waiting_human');
    const login = await signIn({ token: tokens.ada! });
    const cookie = cookieOf(login);
    const page = async (id: string) =>
      (await fetch(`${s.url}/items/${encodeURIComponent(id)}`, { headers: { cookie } })).text();
    const fakePage = await page(fake.id);
    expect(fakePage).toContain('Decide: which?');
    expect(fakePage).not.toContain('Answer this decision');
    // A real decision (enqueued by the store for its document) is offered.
    await askHuman('real', 'r', 'real?');
    const waiting = (await s.call('GET', '/api/v1/list_items', { query: { status: 'waiting_human' } }))
      .json as Array<{
      id: string;
      payload: { ambiguity_id?: string };
    }>;
    const real = waiting.find((i) => i.payload.ambiguity_id === 'r')!;
    expect(await page(real.id)).toContain('Answer this decision');
  });
});
