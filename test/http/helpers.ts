// A real `agentstate serve` (in this process, on a free port) over temp instances, and a small client.
import { join } from 'node:path';
import type { ServeTarget } from '../../src/http/instances.js';
import { type RunningServer, type ServeOptions, startServer } from '../../src/http/serve.js';
import { type Instance, openInstance } from '../../src/instance/instance.js';
import { tempDir } from '../helpers/tmp.js';

export const TOKEN = 'test-token-0123456789abcdef';

export interface TestServer {
  server: RunningServer;
  url: string;
  root: string;
  /** Opens (creating) instance `name` on host `h` under the root. */
  instance(name: string): Promise<Instance>;
  /** A bearer-token call: GET with `query` or POST with `body`. */
  call(
    method: 'GET' | 'POST',
    path: string,
    opts?: CallOptions,
  ): Promise<{ status: number; json: any; headers: Headers }>;
  close(): Promise<void>;
}

export interface CallOptions {
  query?: Record<string, string | string[]>;
  body?: unknown;
  /** Raw body text (wins over body). */
  text?: string;
  /** Raw body bytes (wins over text). */
  raw?: Uint8Array;
  headers?: Record<string, string>;
  /** null sends no Authorization header. */
  token?: string | null;
}

export async function startTestServer(
  names: string[] = ['planner'],
  target: Partial<ServeTarget> = {},
  options: Pick<ServeOptions, 'mcpMaxResultChars'> = {},
): Promise<TestServer> {
  const root = tempDir('agentstate-http-');
  const opened: Instance[] = [];
  const instance = async (name: string) => {
    const i = await openInstance({ root, host: 'h', name, ...(target.url ? { url: target.url } : {}) });
    opened.push(i);
    return i;
  };
  for (const n of names) await (await instance(n)).close();
  const server = await startServer({
    target: { root, ...target },
    port: 0,
    token: TOKEN,
    pollMs: 20,
    ...options,
  });
  const url = server.url;
  return {
    server,
    url,
    root,
    instance,
    async call(method, path, opts = {}) {
      const u = new URL(path, url);
      for (const [k, v] of Object.entries(opts.query ?? {})) {
        for (const x of Array.isArray(v) ? v : [v]) u.searchParams.append(k, x);
      }
      const headers: Record<string, string> = { ...opts.headers };
      const token = opts.token === undefined ? TOKEN : opts.token;
      if (token !== null) headers.authorization = `Bearer ${token}`;
      let body: string | Uint8Array | undefined;
      if (opts.raw !== undefined) body = opts.raw;
      else if (opts.text !== undefined) body = opts.text;
      else if (opts.body !== undefined) body = JSON.stringify(opts.body);
      if (body !== undefined && headers['content-type'] === undefined)
        headers['content-type'] = 'application/json';
      const res = await fetch(u, {
        method,
        headers,
        ...(body === undefined ? {} : { body }),
        redirect: 'manual',
      });
      const text = await res.text();
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        json = text;
      }
      return { status: res.status, json, headers: res.headers };
    },
    async close() {
      await server.close();
      for (const i of opened) await i.close().catch(() => {});
    },
  };
}

export const dirOf = (root: string, name: string) => join(root, 'h', 'agents', name);

/** One message of an event stream. */
export interface SseMessage {
  id?: string;
  event?: string;
  data: string;
}

/**
 * Reads an event stream until `until` says stop (or the stream ends), then aborts it. `headers` carry the
 * token and, for a resume, Last-Event-ID.
 */
export async function readSse(
  url: string,
  headers: Record<string, string>,
  until: (m: SseMessage, all: SseMessage[]) => boolean,
  timeoutMs = 60_000,
): Promise<SseMessage[]> {
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(), timeoutMs);
  const out: SseMessage[] = [];
  try {
    const res = await fetch(url, { headers: { accept: 'text/event-stream', ...headers }, signal: ac.signal });
    if (res.status !== 200) throw new Error(`event stream: HTTP ${res.status} ${await res.text()}`);
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    let buf = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += value;
      let cut = buf.indexOf('\n\n');
      while (cut >= 0) {
        const block = buf.slice(0, cut);
        buf = buf.slice(cut + 2);
        cut = buf.indexOf('\n\n');
        const m: SseMessage = { data: '' };
        const data: string[] = [];
        for (const line of block.split('\n')) {
          if (line.startsWith(':')) continue;
          const i = line.indexOf(':');
          const field = i < 0 ? line : line.slice(0, i);
          const v = i < 0 ? '' : line.slice(i + 1).replace(/^ /, '');
          if (field === 'data') data.push(v);
          else if (field === 'id') m.id = v;
          else if (field === 'event') m.event = v;
        }
        if (data.length === 0 && m.id === undefined && m.event === undefined) continue;
        m.data = data.join('\n');
        out.push(m);
        if (until(m, out)) {
          ac.abort();
          return out;
        }
      }
    }
    return out;
  } catch (err) {
    if (ac.signal.aborted && out.length > 0) return out;
    throw err;
  } finally {
    clearTimeout(timer);
  }
}
