// The line filter in front of the SDK's stdio transport (issue 23): JSON-RPC lines pass whatever the chunking,
// every other line is answered with the JSON-RPC error its kind calls for, by the request's id when it has one.
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { jsonRpcLines } from '../../src/mcp/stdio-lines.js';

/** Feeds `chunks` through the filter (limit `max` bytes); what passed and what was answered. */
async function run(chunks: Array<string | Buffer>, max?: number) {
  const input = new PassThrough();
  const replies: unknown[] = [];
  const lines = jsonRpcLines(input, (m) => replies.push(m), max);
  let passed = '';
  lines.on('data', (d) => {
    passed += d;
  });
  const ended = new Promise((r) => lines.on('end', r));
  for (const c of chunks) input.write(c);
  input.end();
  await ended;
  return { passed: passed.split('\n').filter(Boolean), replies };
}

const ping = (id: number | string) => JSON.stringify({ jsonrpc: '2.0', id, method: 'ping' });

describe('jsonRpcLines', () => {
  it('passes JSON-RPC messages split across chunks, several in one chunk, CRLF, and a last one without newline', async () => {
    const a = ping(1);
    const r = await run([
      a.slice(0, 5),
      `${a.slice(5)}\r\n${ping(2)}\n\n  \n${ping(3).slice(0, 9)}`,
      ping(3).slice(9),
    ]);
    expect(r.replies).toEqual([]);
    expect(r.passed.map((l) => JSON.parse(l).id)).toEqual([1, 2, 3]);
  });

  it('answers not-JSON with -32700 (id null), other JSON with -32600 (its id if any), and goes on', async () => {
    const r = await run([
      `not json\n[1,2]\n{"id":"x","method":7}\n{"jsonrpc":"2.0","id":{},"method":"a"}\n${ping(4)}\n`,
    ]);
    expect(r.replies).toEqual([
      { jsonrpc: '2.0', id: null, error: { code: -32700, message: expect.stringMatching(/^Parse error/) } },
      {
        jsonrpc: '2.0',
        id: null,
        error: { code: -32600, message: expect.stringMatching(/^Invalid Request/) },
      },
      { jsonrpc: '2.0', id: 'x', error: { code: -32600, message: expect.any(String) } },
      { jsonrpc: '2.0', id: null, error: { code: -32600, message: expect.any(String) } },
    ]);
    expect(r.passed).toEqual([ping(4)]);
  });

  it('refuses a line over the limit unread, by the id at its start or its end, in any chunking', async () => {
    const big = (idFirst: boolean, id: number | string) => {
      const params = { name: 'enqueue', arguments: { title: 'x'.repeat(3000) } };
      return JSON.stringify(
        idFirst
          ? { jsonrpc: '2.0', id, method: 'tools/call', params }
          : { method: 'tools/call', params, jsonrpc: '2.0', id }, // the order the 1.x client sends
      );
    };
    const tail = big(false, 'req-"7"');
    const chunks = [big(true, 5), '\n', ...tail.match(/.{1,700}/gs)!, '\n', `${ping(6)}\n`, 'y'.repeat(5000)];
    const r = await run(chunks, 2048);
    expect(r.replies).toEqual([
      {
        jsonrpc: '2.0',
        id: 5,
        error: { code: -32000, message: expect.stringMatching(/^Payload Too Large.*2048/) },
      },
      { jsonrpc: '2.0', id: 'req-"7"', error: { code: -32000, message: expect.any(String) } },
      { jsonrpc: '2.0', id: null, error: { code: -32000, message: expect.any(String) } },
    ]);
    expect(r.passed).toEqual([ping(6)]);
  });
});
