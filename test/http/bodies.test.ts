// Bounded bodies (issue 24, part 4): 200 MB hostile bodies to `/login` (no authentication needed), the API
// (with a length and chunked), a dashboard form and `/mcp` are refused as soon as they pass their limit
// (413), the server's peak memory stays under 200 MB, and it goes on answering. Sign-in is rate-limited per
// address. A real `agentstate serve` process, whose peak RSS is read from /proc.
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOGIN_ATTEMPTS_PER_MINUTE, MAX_BODY_BYTES } from '../../src/http/app.js';
import { CLI, cleanEnv, runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';

const TOKEN = 'bodies-token-0123456789abcdef';
const MB = 1024 * 1024;
const HOSTILE = 200 * MB;

let child: ChildProcess;
let url: string;
beforeAll(async () => {
  const root = tempDir('agentstate-bodies-');
  expect(runCli(['--root', root, '--host', 'h', '--name', 'planner', 'init']).code).toBe(0);
  child = spawn(process.execPath, [CLI, '--root', root, 'serve', '--port', '0'], {
    env: cleanEnv({ AGENTSTATE_TOKEN: TOKEN }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  url = await new Promise<string>((resolve, reject) => {
    child.stderr!.on('data', (d) => {
      err += d;
      const u = /serve: (http:\/\/127\.0\.0\.1:\d+)/.exec(err)?.[1];
      if (u) resolve(u);
    });
    child.on('exit', (code) => reject(new Error(`serve exited ${code}: ${err}`)));
  });
});
afterAll(() => {
  child?.kill('SIGTERM');
});

/** The server's peak resident memory so far, bytes (VmHWM). */
function peakRss(): number {
  const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
  return Number(/VmHWM:\s+(\d+) kB/.exec(status)![1]) * 1024;
}

/**
 * Sends `total` bytes to `path` in 1 MiB chunks (with a content-length, or chunked), stopping when the server
 * answers or closes; resolves with the status (0 when the connection was cut before any answer) and how many
 * bytes went out.
 */
function send(
  path: string,
  total: number,
  opts: { chunked: boolean; headers?: Record<string, string> },
): Promise<{ status: number; sent: number; body: string }> {
  return new Promise((resolve) => {
    const chunk = Buffer.alloc(MB, 0x61);
    let sent = 0;
    let status = 0;
    let body = '';
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      resolve({ status, sent, body });
    };
    const req = request(`${url}${path}`, {
      method: 'POST',
      headers: {
        ...(opts.chunked ? {} : { 'content-length': String(total) }),
        origin: url,
        ...opts.headers,
      },
    });
    req.on('response', (res) => {
      status = res.statusCode ?? 0;
      res.setEncoding('utf8');
      res.on('data', (d) => (body += d));
      res.on('end', () => {
        req.destroy();
        finish();
      });
    });
    req.on('error', finish);
    req.on('close', finish);
    const pump = () => {
      while (!done && sent < total) {
        sent += chunk.length;
        if (!req.write(chunk)) return void req.once('drain', pump);
      }
      if (!done) req.end();
    };
    pump();
  });
}

const json = { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` };
const form = { 'content-type': 'application/x-www-form-urlencoded' };

describe('hostile bodies to a running server', () => {
  it.each([
    ['/login, with a length', '/login', false, form],
    ['/login, chunked', '/login', true, form],
    ['the API, with a length', '/api/v1/enqueue', false, json],
    ['the API, chunked', '/api/v1/enqueue', true, json],
    ['a dashboard form, with a length', '/items/bulk/retry', false, form],
    ['a dashboard form, chunked', '/items/bulk/retry', true, form],
    ['/mcp, with a length', '/mcp', false, { ...json, accept: 'application/json, text/event-stream' }],
    ['/mcp, chunked', '/mcp', true, { ...json, accept: 'application/json, text/event-stream' }],
  ])(
    '%s: 200 MB is refused early, memory stays under 200 MB, the server answers',
    async (_n, path, chunked, headers) => {
      const r = await send(path, HOSTILE, { chunked, headers });
      // Refused long before the whole body went out (or the connection was cut once it passed the limit).
      expect(r.sent).toBeLessThan(HOSTILE);
      if (r.status !== 0) {
        expect([401, 413]).toContain(r.status);
        if (r.status === 413)
          expect(JSON.parse(r.body).error).toMatchObject({ code: 'INVALID_INPUT', field: 'body' });
      }
      expect(peakRss()).toBeLessThan(200 * MB);
      const ok = await fetch(`${url}/api/v1/count_items`, { headers: { authorization: `Bearer ${TOKEN}` } });
      expect(ok.status).toBe(200);
    },
  );

  it('an API body declared over the limit is 413 (not 400) naming the limit, unread; one under it is served', async () => {
    // Declares more than the limit and sends a little: the answer comes without the rest being read.
    const over = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(`${url}/api/v1/enqueue`, {
        method: 'POST',
        headers: { ...json, 'content-length': String(MAX_BODY_BYTES + 1) },
      });
      req.on('response', (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d) => (body += d));
        res.on('end', () => {
          req.destroy();
          resolve({ status: res.statusCode ?? 0, body });
        });
      });
      req.on('error', reject);
      req.write('{"title":"');
    });
    expect(over.status).toBe(413);
    expect(JSON.parse(over.body).error).toMatchObject({ code: 'INVALID_INPUT', limit: MAX_BODY_BYTES });
    const small = await fetch(`${url}/api/v1/enqueue`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ title: 'fits' }),
    });
    expect(small.status).toBe(200);
  });

  it(`sign-in is limited to ${LOGIN_ATTEMPTS_PER_MINUTE} attempts a minute per address (429 with Retry-After)`, async () => {
    const attempt = () =>
      fetch(`${url}/login`, {
        method: 'POST',
        headers: { ...form, origin: url },
        body: new URLSearchParams({ name: 'x', token: 'wrong-token-0123456789' }),
        redirect: 'manual',
      });
    const statuses: number[] = [];
    // The earlier tests' sign-in posts count too: keep going until refused, never more than the limit + 1.
    for (let i = 0; i <= LOGIN_ATTEMPTS_PER_MINUTE; i++) {
      const r = await attempt();
      statuses.push(r.status);
      if (r.status === 429) {
        expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
        break;
      }
    }
    expect(statuses.at(-1)).toBe(429);
    expect(statuses.filter((s) => s === 401).length).toBeLessThanOrEqual(LOGIN_ATTEMPTS_PER_MINUTE);
    // The API is not held up by it.
    expect(
      (await fetch(`${url}/api/v1/count_items`, { headers: { authorization: `Bearer ${TOKEN}` } })).status,
    ).toBe(200);
  });
});
