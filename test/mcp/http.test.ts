// `agentstate mcp --http` (issue 14): Streamable HTTP bound to 127.0.0.1 by default, Host and Origin checked
// against DNS rebinding, a bearer token required to bind anywhere else and enforced when given.
import { request } from 'node:http';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Instance, openInstance } from '../../src/instance/instance.js';
import { createAgentStateMcp, serveMcpHttp } from '../../src/mcp/index.js';
import { tempDir } from '../helpers/tmp.js';

const dir = tempDir();
let inst: Instance;
beforeAll(async () => {
  inst = await openInstance({ dir });
});
afterAll(async () => {
  await inst.close();
});

const INIT = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
});
const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

describe('Streamable HTTP', () => {
  it('binds 127.0.0.1 by default and serves a client: tools, claim, resume', async () => {
    const served = await serveMcpHttp(createAgentStateMcp({ instance: inst }), { port: 0 });
    const client = new Client({ name: 'http-agent', version: '2.0' });
    try {
      expect(served.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
      await client.connect(new StreamableHTTPClientTransport(new URL(served.url)));
      expect((await client.listTools()).tools).toHaveLength(10);
      await inst.work.enqueue({ title: 'over http' });
      const r = await client.callTool({ name: 'claim', arguments: { worker: 'http-agent-1' } });
      expect((r.structuredContent as { item: { lease_owner: string } }).item.lease_owner).toBe(
        'http-agent-1',
      );
      const resume = await client.callTool({ name: 'resume', arguments: { worker: 'http-agent-1' } });
      expect((resume.structuredContent as { held: unknown[] }).held).toHaveLength(1);
      const other = await fetch(served.url.replace('/mcp', '/other'), {
        method: 'POST',
        headers: HEADERS,
        body: INIT,
      });
      expect(other.status).toBe(404);
    } finally {
      await client.close();
      await served.close();
    }
  });

  it('refuses a Host or Origin that is not this machine (DNS rebinding)', async () => {
    const served = await serveMcpHttp(createAgentStateMcp({ instance: inst }), { port: 0 });
    try {
      const port = new URL(served.url).port;
      // node:http, not fetch: fetch would not send a Host header of our choosing.
      const post = (headers: Record<string, string>) =>
        new Promise<number>((resolve, reject) => {
          const req = request(served.url, { method: 'POST', headers: { ...HEADERS, ...headers } }, (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          });
          req.on('error', reject);
          req.end(INIT);
        });
      expect(await post({ host: `evil.example:${port}` })).toBe(403);
      expect(await post({ origin: 'http://evil.example' })).toBe(403);
      expect(await post({ host: `localhost:${port}`, origin: `http://localhost:${port}` })).toBe(200);
    } finally {
      await served.close();
    }
  });

  it('refuses to bind beyond loopback without a token, and enforces a token it is given', async () => {
    await expect(
      serveMcpHttp(createAgentStateMcp({ instance: inst }), { host: '0.0.0.0' }),
    ).rejects.toMatchObject({
      code: 'INVALID_INPUT',
      details: { field: 'token' },
    });
    // As serve's: a token under 16 characters is refused before anything is served.
    await expect(
      serveMcpHttp(createAgentStateMcp({ instance: inst }), { port: 0, token: 'x' }),
    ).rejects.toMatchObject({ code: 'INVALID_INPUT', details: { field: 'token' } });
    const served = await serveMcpHttp(createAgentStateMcp({ instance: inst }), {
      port: 0,
      token: 's3cret-token-0123456789',
    });
    try {
      const none = await fetch(served.url, { method: 'POST', headers: HEADERS, body: INIT });
      expect(none.status).toBe(401);
      expect(none.headers.get('www-authenticate')).toMatch(/^Bearer/);
      const wrong = await fetch(served.url, {
        method: 'POST',
        headers: { ...HEADERS, authorization: 'Bearer s3cret-token-012345678X' },
        body: INIT,
      });
      expect(wrong.status).toBe(401);
      const client = new Client({ name: 'with-token', version: '1' });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(served.url), {
          requestInit: { headers: { authorization: 'Bearer s3cret-token-0123456789' } },
        }),
      );
      expect((await client.listTools()).tools.length).toBe(10);
      await client.close();
    } finally {
      await served.close();
    }
  });

  it('a top-level "__proto__" tool argument is refused as documented (INVALID_INPUT), whatever its value', async () => {
    const served = await serveMcpHttp(createAgentStateMcp({ instance: inst }), { port: 0 });
    try {
      const before = await inst.work.counts();
      for (const value of ['{"waiting_human":true}', '1', 'null']) {
        const res = await fetch(served.url, {
          method: 'POST',
          headers: HEADERS,
          body: `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"enqueue","arguments":{"title":"p","__proto__":${value}}}}`,
        });
        const body = (await res.json()) as {
          id: number;
          result: { isError: boolean; content: Array<{ text: string }> };
        };
        expect(body).toMatchObject({ id: 7, result: { isError: true } });
        expect(body.result.content[0]!.text).toMatch(/^INVALID_INPUT: enqueue: .*"__proto__"/);
      }
      expect(await inst.work.counts()).toEqual(before);
      const notJson = await fetch(served.url, { method: 'POST', headers: HEADERS, body: '{nope' });
      expect(((await notJson.json()) as { error: { code: number } }).error.code).toBe(-32700);
    } finally {
      await served.close();
    }
  });
});
