// Small holes of the same attack on serve (issue 24, part 6): the sign-in page carries the CSP, error pages
// link back without `javascript:` (which that CSP blocks), an event stream asked to start past the head is
// refused rather than left waiting, and a token file that is a folder gets a message that says what to do.
import { mkdirSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadOrCreateToken, TOKEN_FILE } from '../../src/http/auth.js';
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
