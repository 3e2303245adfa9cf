// The transports of `agentstate mcp`: stdio for the session a host spawns, and Streamable HTTP on localhost
// (or elsewhere behind a bearer token) for several sessions on one endpoint.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import {
  hostHeaderValidation,
  localhostHostValidation,
  localhostOriginValidation,
  toNodeHandler,
} from '@modelcontextprotocol/node';
import { type AuthInfo, createMcpHandler } from '@modelcontextprotocol/server';
import { StdioServerTransport, serveStdio } from '@modelcontextprotocol/server/stdio';
import { OWNER } from '../auth/access.js';
import type { PrincipalStore } from '../auth/principals.js';
import { InvalidInputError } from '../errors.js';
import {
  bearerOf,
  isLoopback,
  limitConnections,
  MAX_MCP_BYTES,
  sameSecret,
  serverOptions,
} from '../net/guards.js';
import { reservedArgumentReply } from './reserved-arguments.js';
import { type AgentStateMcp, authInfoOf } from './server.js';
import { jsonRpcLines } from './stdio-lines.js';

/**
 * Serves `mcp` over this process's stdin/stdout until the host closes it; resolves with its handle. A line
 * that is no JSON-RPC message (or is over 4 MiB) is answered with a JSON-RPC error and the session goes on.
 */
export function serveMcpStdio(mcp: AgentStateMcp): { close(): Promise<void> } {
  const wire: StdioServerTransport = new StdioServerTransport(
    jsonRpcLines(process.stdin, (message) => {
      wire.send(message).catch(() => {});
    }),
    process.stdout,
  );
  const handle = serveStdio(mcp.factory, { transport: wire });
  return {
    async close() {
      await handle.close();
      await mcp.close();
    },
  };
}

/** Where and how `serveMcpHttp` listens: address, path, authentication, TLS. */
export interface HttpOptions {
  /** TCP port; 0 picks a free one. @default 0 */
  port?: number;
  /** Address to bind. Anything but loopback needs `token`. @default '127.0.0.1' */
  host?: string;
  /**
   * Bearer token every request must carry (`Authorization: Bearer <token>`), at least 16 characters; with it
   * the tokens of `principals` are taken too. @default none (loopback only, no authentication)
   */
  token?: string;
  /** Named principals whose tokens are taken besides `token` (the root's principals file). */
  principals?: PrincipalStore | null;
  /** The endpoint path. @default '/mcp' */
  path?: string;
  /** Serve HTTPS with this certificate and key (PEM). */
  tls?: { cert: string | Buffer; key: string | Buffer };
  /** Serve plain HTTP beyond loopback (a token in clear on the network). @default false (refused) */
  insecureHttp?: boolean;
}

export { isLoopback };

function refuse(res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}) {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }));
}

/** The Streamable HTTP handler of `mcp`, as a web-standard `fetch`; what `agentstate serve` mounts at /mcp. */
export interface McpEndpoint {
  /**
   * Serves one HTTP request (auth and Host/Origin checks are the caller's, which passes the principal it
   * authenticated as `authInfo`: see authInfoOf).
   */
  fetch(request: Request, options?: { authInfo?: AuthInfo }): Promise<Response>;
  /** The SDK handler itself (for Node's adapter). */
  readonly handler: ReturnType<typeof createMcpHandler>;
  /** Stops the document watcher and the handler's open exchanges; the instance stays open. */
  close(): Promise<void>;
}

/**
 * The one Streamable HTTP handler of an MCP server definition, with document changes reaching subscribed
 * clients through the handler's bus: `agentstate mcp --http` serves it alone, `agentstate serve` at /mcp.
 */
export function mcpEndpoint(mcp: AgentStateMcp): McpEndpoint {
  const handler = createMcpHandler(mcp.factory);
  const stopWatching = mcp.watchDocuments((uri) => handler.notify.resourceUpdated(uri));
  return {
    handler,
    fetch: (request, options) => handler.fetch(request, options),
    async close() {
      stopWatching();
      await handler.close();
    },
  };
}

/**
 * Serves `mcp` over Streamable HTTP at `http://<host>:<port>/mcp`. Bound to 127.0.0.1 by default, with the
 * SDK's Host and Origin checks against DNS rebinding; any other address is refused without a token.
 * @example const s = await serveMcpHttp(mcp, { port: 8765 }); console.error(s.url); await s.close();
 */
export async function serveMcpHttp(
  mcp: AgentStateMcp,
  opts: HttpOptions = {},
): Promise<{ url: string; close(): Promise<void> }> {
  const host = opts.host ?? '127.0.0.1';
  const path = opts.path ?? '/mcp';
  const token = opts.token === '' ? undefined : opts.token;
  const loopback = isLoopback(host);
  if (!loopback && token === undefined) {
    throw new InvalidInputError(
      `mcp --http: binding ${host} exposes the instance beyond this machine: give --token (or AGENTSTATE_MCP_TOKEN)`,
      { field: 'token' },
    );
  }
  if (!loopback && opts.tls === undefined && opts.insecureHttp !== true) {
    throw new InvalidInputError(
      `mcp --http: binding ${host} without TLS sends the token in clear: give --tls-cert and --tls-key, or --insecure-http behind a TLS proxy or on a network you trust`,
      { field: 'host' },
    );
  }
  if (token !== undefined && token.length < 16) {
    throw new InvalidInputError('mcp --http: the token must be at least 16 characters (as serve’s)', {
      field: 'token',
    });
  }
  const endpoint = mcpEndpoint(mcp);
  const serve = toNodeHandler(endpoint.handler);
  // On loopback only the names of this machine: a page that rebinds its own name to 127.0.0.1 is refused.
  const checkHost = loopback
    ? localhostHostValidation()
    : host === '0.0.0.0' || host === '::'
      ? null
      : hostHeaderValidation([host]);
  const checkOrigin = loopback ? localhostOriginValidation() : null;

  const handle = (req: IncomingMessage, res: ServerResponse) => {
    if (checkHost && !checkHost(req, res)) return;
    if (checkOrigin && !checkOrigin(req, res)) return;
    const url = req.url ?? '/';
    if (url.split('?')[0] !== path) return refuse(res, 404, `not found: the MCP endpoint is ${path}`);
    if (token !== undefined) {
      const given = bearerOf(req.headers.authorization);
      const principal =
        given === undefined
          ? undefined
          : sameSecret(given, token)
            ? OWNER
            : opts.principals?.authenticate(given)?.principal;
      if (principal === undefined) {
        return refuse(res, 401, 'a bearer token is required', {
          'www-authenticate': 'Bearer realm="agentstate"',
        });
      }
      (req as IncomingMessage & { auth?: AuthInfo }).auth = authInfoOf(principal);
    }
    if ((req.method ?? 'GET').toUpperCase() !== 'POST') return void serve(req, res);
    // Read here (bounded as the SDK bounds it) to answer a call with a reserved argument key before the SDK
    // drops it; the SDK gets the parsed body.
    const declared = Number(req.headers['content-length'] ?? '0');
    if (declared > MAX_MCP_BYTES) return refuse(res, 413, `the body is larger than ${MAX_MCP_BYTES} bytes`);
    const chunks: Buffer[] = [];
    let size = 0;
    let over = false;
    req.on('data', (chunk: Buffer) => {
      if (over) return;
      size += chunk.length;
      if (size > MAX_MCP_BYTES) {
        over = true;
        refuse(res, 413, `the body is larger than ${MAX_MCP_BYTES} bytes`, { connection: 'close' });
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (over) return;
      const text = Buffer.concat(chunks).toString('utf8');
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        res.writeHead(400, { 'content-type': 'application/json' });
        return void res.end(
          JSON.stringify({
            jsonrpc: '2.0',
            id: null,
            error: { code: -32700, message: 'Parse error: the body is not JSON' },
          }),
        );
      }
      const refused = reservedArgumentReply(parsed);
      if (refused !== null) {
        res.writeHead(200, { 'content-type': 'application/json' });
        return void res.end(JSON.stringify(refused));
      }
      void serve(req, res, parsed);
    });
  };
  const server =
    opts.tls === undefined
      ? createServer(serverOptions(), handle)
      : createHttpsServer({ ...serverOptions(), cert: opts.tls.cert, key: opts.tls.key }, handle);
  limitConnections(server);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, host, () => resolve());
  });
  const addr = server.address() as AddressInfo;
  const shown = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  return {
    url: `${opts.tls === undefined ? 'http' : 'https'}://${shown}:${addr.port}${path}`,
    async close() {
      await endpoint.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await mcp.close();
    },
  };
}
