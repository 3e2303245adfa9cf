// `agentstate serve` on Node's HTTP server (@hono/node-server): bind (127.0.0.1 by default; any other
// address only with a token the operator chose), serve, and shut down gracefully (open event streams end,
// requests in flight finish, instances close).
import type { Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { createAdaptorServer } from '@hono/node-server';
import { PrincipalStore } from '../auth/principals.js';
import { InvalidInputError } from '../errors.js';
import {
  CONNECTION_LIMITS,
  type ConnectionLimits,
  isLoopback,
  limitConnections,
  listen,
  serverOptions,
} from '../net/guards.js';
import { createServeApp } from './app.js';
import { keepToken, type ServeToken, serveToken } from './auth.js';
import { InstanceRegistry, type ServeTarget } from './instances.js';

/** The TCP port `serve` listens on when given none. */
export const SERVE_PORT = 8780;

/** What `startServer` serves and how it listens (`agentstate serve`'s flags). */
export interface ServeOptions {
  /** What to serve: one `dir`, the instances under `root`, or every instance of a PostgreSQL `url`. */
  target: ServeTarget;
  /** TCP port; 0 picks a free one. @default SERVE_PORT (8780) */
  port?: number;
  /** Address to bind. Anything but loopback needs a token that was given (not generated). @default '127.0.0.1' */
  host?: string;
  /**
   * The bearer token. @default AGENTSTATE_TOKEN, else the token file in the root (created at first start):
   * `agentstate-serve.token`, or for one `dir` `agentstate-serve.<folder>-<hash>.token`; never in the folder
   */
  token?: string;
  /** Poll interval of event streams when caught up, ms. @default 100 */
  pollMs?: number;
  /** The most characters of one MCP tool result at /mcp. @default 100,000 (DEFAULT_MAX_RESULT_CHARS) */
  mcpMaxResultChars?: number;
  /** Serve HTTPS with this certificate and key (PEM). The session cookie is then `Secure`. */
  tls?: { cert: string | Buffer; key: string | Buffer };
  /**
   * Serve plain HTTP beyond loopback (tokens and cookies in clear on the network): only behind a TLS proxy,
   * or on a network you trust. @default false (refused)
   */
  insecureHttp?: boolean;
  /**
   * Behind a reverse proxy: honour `X-Forwarded-Proto: https` (the session cookie is then `Secure`).
   * @default false (the header is ignored)
   */
  trustProxy?: boolean;
  /** Connection deadlines and cap. @default CONNECTION_LIMITS (docs/http.md, "Limits") */
  limits?: Partial<ConnectionLimits>;
  /**
   * Also answer `GET /metrics` on 127.0.0.1 at this port, without a credential (only this machine reaches it),
   * for a local Prometheus; 0 picks a free port. The main port's /metrics stays behind the credential.
   */
  metricsPort?: number;
  /**
   * Verify every served instance at start and then this many ms after each round ends (`serve
   * --verify-every`), so `/metrics` reports a recent `agentstate_verify_ok`. @default never
   */
  verifyEveryMs?: number;
}

/** A running server. */
export interface RunningServer {
  url: string;
  port: number;
  /** The token and where it came from (`generated` means: print it once). */
  token: ServeToken;
  registry: InstanceRegistry;
  /** The `--metrics-port` listener's URL (`http://127.0.0.1:<port>/metrics`), when one was asked for. */
  metricsUrl?: string;
  /** Ends event streams, stops accepting, waits for requests in flight (at most `graceMs`), closes instances. */
  close(graceMs?: number): Promise<void>;
}

/**
 * Starts `agentstate serve`.
 * @example const s = await startServer({ target: { root: '/srv/agents' } }); console.error(s.url); await s.close();
 */
export async function startServer(opts: ServeOptions): Promise<RunningServer> {
  const host = opts.host ?? '127.0.0.1';
  const every = opts.verifyEveryMs;
  if (every !== undefined && (!Number.isSafeInteger(every) || every < 1)) {
    throw new InvalidInputError(`serve: verifyEveryMs must be a whole number of ms ≥ 1, got ${every}`, {
      field: 'verify_every',
    });
  }
  const given = opts.token ?? process.env.AGENTSTATE_TOKEN;
  if (!isLoopback(host) && (given === undefined || given === '')) {
    throw new InvalidInputError(
      `serve: binding ${host} exposes the store beyond this machine: set AGENTSTATE_TOKEN (or --token) first`,
      { field: 'host' },
    );
  }
  if (!isLoopback(host) && opts.tls === undefined && opts.insecureHttp !== true) {
    throw new InvalidInputError(
      `serve: binding ${host} without TLS sends tokens and session cookies in clear: give --tls-cert and --tls-key, or --insecure-http behind a TLS proxy (with --trust-proxy) or on a network you trust`,
      { field: 'host' },
    );
  }
  const registry = new InstanceRegistry(opts.target);
  // A generated token is written to its file only once every port listens: a start that fails leaves none.
  const token = serveToken(given, registry.root, registry.tokenFile);
  const { app, close: closeApp } = createServeApp({
    registry,
    token: token.token,
    principals: new PrincipalStore(registry.root),
    bind: host,
    secureCookies: opts.tls !== undefined ? 'always' : opts.trustProxy === true ? 'forwarded' : 'never',
    ...(opts.pollMs === undefined ? {} : { pollMs: opts.pollMs }),
    ...(opts.mcpMaxResultChars === undefined ? {} : { mcpMaxResultChars: opts.mcpMaxResultChars }),
  });
  const limits = { ...CONNECTION_LIMITS, ...opts.limits };
  const server = (
    opts.tls === undefined
      ? createAdaptorServer({ fetch: app.fetch, hostname: host, serverOptions: serverOptions(limits) })
      : createAdaptorServer({
          fetch: app.fetch,
          hostname: host,
          createServer: createHttpsServer,
          serverOptions: { ...serverOptions(limits), cert: opts.tls.cert, key: opts.tls.key },
        })
  ) as Server;
  limitConnections(server, limits);
  try {
    await listen(server, 'serve', host, opts.port ?? SERVE_PORT);
  } catch (err) {
    await closeApp();
    await registry.close();
    throw err;
  }
  let metrics: { url: string; close(): Promise<void> } | undefined;
  try {
    if (opts.metricsPort !== undefined) {
      const { listenMetrics } = await import('./metrics.js');
      metrics = await listenMetrics(registry, opts.metricsPort);
    }
    keepToken(token);
  } catch (err) {
    await metrics?.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await closeApp();
    await registry.close();
    throw err;
  }
  const verifying =
    opts.verifyEveryMs === undefined
      ? undefined
      : (await import('./metrics.js')).verifyEvery(registry, opts.verifyEveryMs);
  const addr = server.address() as AddressInfo;
  const shown = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  let closing: Promise<void> | null = null;
  return {
    url: `${opts.tls === undefined ? 'http' : 'https'}://${shown}:${addr.port}`,
    port: addr.port,
    token,
    registry,
    ...(metrics ? { metricsUrl: metrics.url } : {}),
    close(graceMs = 5000) {
      closing ??= (async () => {
        await verifying?.stop();
        await metrics?.close();
        await closeApp();
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        // Ended event streams leave keep-alive connections idle a moment later: close those as they go idle,
        // and whatever is still busy after the grace period.
        server.closeIdleConnections();
        const idle = setInterval(() => server.closeIdleConnections(), 50);
        const timer = setTimeout(() => server.closeAllConnections(), graceMs);
        await closed;
        clearInterval(idle);
        clearTimeout(timer);
        await registry.close();
      })();
      return closing;
    },
  };
}
