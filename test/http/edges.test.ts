// Small holes of the same attack on serve (issue 24, part 6): the sign-in page carries the CSP, error pages
// link back without `javascript:` (which that CSP blocks), an event stream asked to start past the head is
// refused rather than left waiting, and a token file that is a folder gets a message that says what to do.
import { mkdirSync, readdirSync } from 'node:fs';
import { connect, createServer as createNetServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadOrCreateToken, TOKEN_FILE } from '../../src/http/auth.js';
import { startServer } from '../../src/http/serve.js';
import { CONNECTION_LIMITS, type ConnectionLimits } from '../../src/net/guards.js';
import { tempDir } from '../helpers/tmp.js';
import { startTestServer, type TestServer, TOKEN } from './helpers.js';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer(['planner']);
});
afterAll(() => s.close());

describe('serve, small edges', () => {
  it('the sign-in page and error pages carry the CSP, and no javascript: link', async () => {
    const login = await fetch(`${s.url}/login`);
    expect(login.headers.get('content-security-policy')).toContain("default-src 'self'");
    const cookie = (
      await fetch(`${s.url}/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', origin: s.url },
        body: new URLSearchParams({ name: 'ada', token: TOKEN }),
        redirect: 'manual',
      })
    ).headers
      .get('set-cookie')!
      .split(';')[0]!;
    const missing = await fetch(`${s.url}/items/wi_nope`, { headers: { cookie, referer: `${s.url}/items` } });
    expect(missing.status).toBe(404);
    expect(missing.headers.get('content-security-policy')).toContain("script-src 'self'");
    const html = await missing.text();
    expect(html).not.toContain('javascript:');
    expect(html).toContain('<a href="/items">Back</a>');
  });

  it('an event stream asked to start past the head is refused, naming the head', async () => {
    await s.call('POST', '/api/v1/append_event', { body: { type: 'note', data: {} } });
    const r = await s.call('GET', '/api/v1/events', { query: { after: '999999' } });
    expect(r.status).toBe(400);
    expect(r.json.error).toMatchObject({ code: 'INVALID_INPUT', field: 'after', head: expect.any(Number) });
    const resumed = await fetch(`${s.url}/api/v1/events`, {
      headers: { authorization: `Bearer ${TOKEN}`, 'last-event-id': '999999' },
    });
    expect(resumed.status).toBe(400);
    expect(((await resumed.json()) as { error: { field: string } }).error.field).toBe('Last-Event-ID');
  });

  it('a token file that is a folder is refused with what to do, not a raw EISDIR', () => {
    const root = tempDir('agentstate-token-dir-');
    mkdirSync(join(root, TOKEN_FILE));
    expect(() => loadOrCreateToken(undefined, root)).toThrow(
      expect.objectContaining({
        code: 'INVALID_INPUT',
        message: expect.stringMatching(/is not a file: remove it/),
      }),
    );
  });

  it('an idle keep-alive connection is closed by the server (IDLE_TIMEOUT_MS)', async () => {
    const { port } = new URL(s.url);
    const socket = connect(Number(port), '127.0.0.1');
    let got = '';
    socket.setEncoding('utf8');
    socket.on('data', (d) => (got += d));
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    socket.write(`GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: keep-alive\r\n\r\n`);
    // The server answers, keeps the connection for the next request, then closes it once idle: no client
    // can hold connections open by doing nothing.
    await closed;
    expect(got).toMatch(/^HTTP\/1\.1 200/);
    expect(got).toMatch(/keep-alive/i);
  }, 30_000);
});

/** A raw connection to `port`: what the server sent, once it closed (an error is a close too). */
function open(port: number, request?: string): { socket: Socket; closed: Promise<string> } {
  const socket = connect(port, '127.0.0.1');
  let got = '';
  socket.setEncoding('utf8');
  socket.on('data', (d) => (got += d));
  socket.on('error', () => {});
  const closed = new Promise<string>((resolve) => socket.once('close', () => resolve(got)));
  if (request !== undefined) socket.write(request);
  return { socket, closed };
}

const GET = (close: boolean) =>
  `GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: ${close ? 'close' : 'keep-alive'}\r\n\r\n`;

describe('serve, connection limits (docs/http.md, "Limits")', () => {
  async function withServer(limits: Partial<ConnectionLimits>, fn: (port: number) => Promise<void>) {
    const server = await startServer({
      target: { root: tempDir('agentstate-limits-') },
      port: 0,
      token: TOKEN,
      limits,
    });
    try {
      await fn(server.port);
    } finally {
      await server.close(100);
    }
  }

  it('the documented limits are what serve and mcp --http run with', () => {
    expect(CONNECTION_LIMITS).toEqual({
      idleMs: 5_000,
      headersMs: 15_000,
      requestMs: 60_000,
      maxConnections: 512,
    });
  });

  it('a connection that never sends a request is closed once its header deadline passes', async () => {
    await withServer({ headersMs: 300 }, async (port) => {
      // Nothing is written: the server, not the client, ends it (Node's default would keep it 60 s and more).
      const silent = open(port);
      await silent.closed;
      expect(silent.socket.destroyed).toBe(true);
      // The server goes on serving.
      expect(await open(port, GET(true)).closed).toMatch(/^HTTP\/1\.1 200/);
    });
  }, 30_000);

  it('past the connection cap a new connection is closed unanswered; one is served again once another closes', async () => {
    await withServer({ maxConnections: 2, idleMs: 60_000 }, async (port) => {
      // Two keep-alive clients, each answered (so the server counts both), holding their connections.
      const held: Array<ReturnType<typeof open>> = [];
      for (let k = 0; k < 2; k++) {
        const c = open(port, GET(false));
        await new Promise<void>((resolve) => c.socket.once('data', () => resolve()));
        held.push(c);
      }
      expect(await open(port, GET(true)).closed).toBe('');
      held[0]!.socket.destroy();
      await held[0]!.closed;
      // The server learns of the close a moment later: ask until it answers (a condition, not a delay).
      let answer = '';
      while (answer === '') answer = await open(port, GET(true)).closed;
      expect(answer).toMatch(/^HTTP\/1\.1 200/);
      held[1]!.socket.destroy();
    });
  }, 30_000);
});

describe('serve --metrics-port (docs/observability.md)', () => {
  /** GET `url` with this Host header: the status. */
  const statusWithHost = async (url: string, host: string): Promise<number> => {
    const { request } = await import('node:http');
    return new Promise<number>((resolve, reject) => {
      const req = request(url, { headers: { host } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.end();
    });
  };

  it('refuses a foreign Host as the main port does (DNS rebinding), and answers this machine’s names', async () => {
    const server = await startServer({
      target: { root: tempDir('agentstate-metrics-host-') },
      port: 0,
      token: TOKEN,
      metricsPort: 0,
    });
    try {
      const metrics = server.metricsUrl!;
      const { port } = new URL(metrics);
      expect(await statusWithHost(`${server.url}/healthz`, 'evil.com')).toBe(403);
      expect(await statusWithHost(metrics, 'evil.com')).toBe(403);
      expect(await statusWithHost(metrics, `evil.com:${port}`)).toBe(403);
      expect(await statusWithHost(metrics, `127.0.0.1:${port}`)).toBe(200);
      expect(await statusWithHost(metrics, `localhost:${port}`)).toBe(200);
    } finally {
      await server.close(100);
    }
  });

  it('a metrics port another program holds stops the start as the main port does (STORAGE_UNAVAILABLE, what to do), and no token file is left in the root', async () => {
    const root = tempDir('agentstate-metrics-busy-');
    const busy = createNetServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    try {
      const metricsPort = (busy.address() as { port: number }).port;
      await expect(startServer({ target: { root }, port: 0, metricsPort })).rejects.toMatchObject({
        code: 'STORAGE_UNAVAILABLE',
        message: expect.stringMatching(
          new RegExp(`port ${metricsPort} on 127\\.0\\.0\\.1 is already in use.*choose another port`),
        ),
      });
      expect(readdirSync(root)).toEqual([]);
    } finally {
      await new Promise<void>((resolve) => busy.close(() => resolve()));
    }
  });
});
