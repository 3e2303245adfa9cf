// /mcp on `agentstate serve`: the same Streamable HTTP handler as `agentstate mcp --http`, behind the
// server's bearer token, on the instance `?instance=` names.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer, TOKEN } from './helpers.js';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer(['planner', 'coder']);
});
afterAll(() => s.close());

describe('/mcp', () => {
  it('serves an MCP client with the bearer token, on the instance the URL names', async () => {
    const client = new Client({ name: 'serve-agent', version: '1.0' });
    const transport = new StreamableHTTPClientTransport(new URL(`${s.url}/mcp?instance=h/coder`), {
      requestInit: { headers: { authorization: `Bearer ${TOKEN}` } },
    });
    try {
      await client.connect(transport);
      expect((await client.listTools()).tools).toHaveLength(10);
      const r = await client.callTool({ name: 'enqueue', arguments: { title: 'via mcp' } });
      expect(r.isError).not.toBe(true);
      const items = (await s.call('GET', '/api/v1/list_items', { query: { instance: 'h/coder' } })).json;
      expect(items.map((i: { title: string }) => i.title)).toContain('via mcp');
      const planner = (await s.call('GET', '/api/v1/list_items', { query: { instance: 'h/planner' } })).json;
      expect(planner).toEqual([]);
    } finally {
      await client.close();
    }
  });

  it('refuses a foreign Origin', async () => {
    const r = await s.call('POST', '/mcp', {
      body: { jsonrpc: '2.0', id: 1, method: 'ping' },
      headers: { origin: 'https://evil.example', accept: 'application/json, text/event-stream' },
    });
    expect(r.status).toBe(403);
  });

  it('keeps every tool result within the budget serve was given (--mcp-max-result-chars)', async () => {
    const small = await startTestServer(['planner'], {}, { mcpMaxResultChars: 3000 });
    const inst = await small.instance('planner');
    for (let k = 0; k < 20; k++)
      await inst.events.append({ type: 'note', data: { text: 'x'.repeat(500), k } });
    await inst.close();
    const client = new Client({ name: 'serve-agent', version: '1.0' });
    const transport = new StreamableHTTPClientTransport(new URL(`${small.url}/mcp?instance=h/planner`), {
      requestInit: { headers: { authorization: `Bearer ${TOKEN}` } },
    });
    try {
      await client.connect(transport);
      const r = await client.callTool({ name: 'read_events', arguments: { after: 0 } });
      expect(
        JSON.stringify({ content: r.content, structuredContent: r.structuredContent }).length,
      ).toBeLessThanOrEqual(3000);
      const s = r.structuredContent as { events: unknown[]; next: { after: number } };
      expect(s.events.length).toBeGreaterThan(0);
      expect(s.events.length).toBeLessThan(20);
      expect(s.next).toEqual({ after: s.events.length });
    } finally {
      await client.close();
      await small.close();
    }
  });
});
