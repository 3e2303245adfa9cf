// Off loopback (issue 24, part 5): serving beyond loopback without TLS is refused unless --insecure-http says
// so; --tls-cert/--tls-key serve HTTPS with a Secure session cookie; behind a proxy X-Forwarded-Proto is
// honoured only with --trust-proxy. The certificate is a self-signed one made by openssl for the test.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { request } from 'node:https';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startServer } from '../../src/http/serve.js';
import { openInstance } from '../../src/instance/instance.js';
import { createAgentStateMcp, serveMcpHttp } from '../../src/mcp/index.js';
import { tempDir } from '../helpers/tmp.js';

const TOKEN = 'tls-token-0123456789abcdef';

async function rootWithInstance(): Promise<string> {
  const root = tempDir('agentstate-tls-');
  await (await openInstance({ root, host: 'h', name: 'planner' })).close();
  return root;
}

function selfSigned(): { cert: Buffer; key: Buffer } {
  const dir = tempDir('agentstate-cert-');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=localhost',
      '-addext',
      'subjectAltName=IP:127.0.0.1,DNS:localhost',
      '-keyout',
      join(dir, 'key.pem'),
      '-out',
      join(dir, 'cert.pem'),
    ],
    { stdio: 'ignore' },
  );
  return { cert: readFileSync(join(dir, 'cert.pem')), key: readFileSync(join(dir, 'key.pem')) };
}

/** A sign-in over HTTPS trusting only `ca`; resolves with the status and the Set-Cookie header. */
function signIn(url: string, ca: Buffer): Promise<{ status: number; cookie: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${url}/login`,
      { method: 'POST', ca, headers: { 'content-type': 'application/x-www-form-urlencoded', origin: url } },
      (res) => {
        res.resume();
        resolve({ status: res.statusCode ?? 0, cookie: String(res.headers['set-cookie'] ?? '') });
      },
    );
    req.on('error', reject);
    req.end(new URLSearchParams({ name: 'ada', token: TOKEN, next: '/' }).toString());
  });
}

async function cookieOverHttp(url: string, headers: Record<string, string> = {}): Promise<string> {
  const res = await fetch(`${url}/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: url, ...headers },
    body: new URLSearchParams({ name: 'ada', token: TOKEN, next: '/' }),
    redirect: 'manual',
  });
  expect(res.status).toBe(303);
  return res.headers.get('set-cookie') ?? '';
}

describe('serving beyond loopback', () => {
  it('plain HTTP beyond loopback is refused (naming the flags), and served with --insecure-http', async () => {
    const root = await rootWithInstance();
    await expect(
      startServer({ target: { root }, port: 0, host: '0.0.0.0', token: TOKEN }),
    ).rejects.toMatchObject({
      code: 'INVALID_INPUT',
      message: expect.stringMatching(/--tls-cert.*--insecure-http/),
    });
    const s = await startServer({
      target: { root },
      port: 0,
      host: '0.0.0.0',
      token: TOKEN,
      insecureHttp: true,
    });
    await s.close();
    const mcpInst = await openInstance({ root, host: 'h', name: 'planner' });
    try {
      await expect(
        serveMcpHttp(createAgentStateMcp({ instance: mcpInst }), { host: '0.0.0.0', token: TOKEN }),
      ).rejects.toMatchObject({ code: 'INVALID_INPUT', message: expect.stringMatching(/--insecure-http/) });
    } finally {
      await mcpInst.close();
    }
  });

  it('--tls-cert/--tls-key serve HTTPS, and the session cookie is Secure there', async () => {
    const root = await rootWithInstance();
    const tls = selfSigned();
    const s = await startServer({ target: { root }, port: 0, token: TOKEN, tls });
    try {
      expect(s.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
      const { status, cookie } = await signIn(s.url, tls.cert);
      expect(status).toBe(303);
      expect(cookie).toMatch(/agentstate_session=[^;]+;.*Secure/i);
    } finally {
      await s.close();
    }
  });

  it('X-Forwarded-Proto makes the cookie Secure only with --trust-proxy', async () => {
    const root = await rootWithInstance();
    const plain = await startServer({ target: { root }, port: 0, token: TOKEN });
    try {
      expect(await cookieOverHttp(plain.url, { 'x-forwarded-proto': 'https' })).not.toMatch(/Secure/i);
    } finally {
      await plain.close();
    }
    const proxied = await startServer({ target: { root }, port: 0, token: TOKEN, trustProxy: true });
    try {
      expect(await cookieOverHttp(proxied.url, { 'x-forwarded-proto': 'https' })).toMatch(/Secure/i);
      expect(await cookieOverHttp(proxied.url)).not.toMatch(/Secure/i);
    } finally {
      await proxied.close();
    }
  });
});
