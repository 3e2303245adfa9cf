// Checks every network edge of agentstate shares (the HTTP API and dashboard, MCP over Streamable HTTP):
// loopback binding, listening with typed refusals, constant-time token comparison, and Host/Origin checks
// against DNS rebinding.
import { timingSafeEqual } from 'node:crypto';
import type { Server as HttpServer, ServerOptions } from 'node:http';
import type { Server } from 'node:net';
import {
  type AgentStateError,
  InvalidInputError,
  PermissionDeniedError,
  StorageUnavailableError,
  toAgentStateError,
} from '../errors.js';

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1', '[::1]']);

/** Whether `host` is a loopback address (127.0.0.0/8, ::1, localhost). */
export function isLoopback(host: string): boolean {
  return LOOPBACK.has(host) || /^127(\.\d{1,3}){3}$/.test(host);
}

/**
 * What a failed listen means to the person who started the server, as a typed error naming the port and
 * what to do: a port outside 0–65535 or an address this machine does not have is INVALID_INPUT (exit 2); a
 * port another process holds is STORAGE_UNAVAILABLE (exit 5: the resource the command needs is taken, and
 * the same command may succeed once it is free, which is what that code's `retry` says); a port only root
 * may bind is PERMISSION_DENIED (exit 4). Anything else stays what it was.
 * @example throw listenError(err, 'serve', '127.0.0.1', 8780)
 */
export function listenError(err: unknown, what: string, host: string, port: number): AgentStateError {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  const details = { field: 'port', host, port };
  const at = `${host}:${port}`;
  switch (code) {
    case 'ERR_SOCKET_BAD_PORT':
      return new InvalidInputError(
        `${what}: port ${port} is not a TCP port: use 0 to 65535 (0 picks a free one)`,
        details,
      );
    case 'EADDRINUSE':
      return new StorageUnavailableError(
        `${what}: port ${port} on ${host} is already in use by another program (another agentstate server?): stop it, or choose another port (0 picks a free one)`,
        { ...details, reason: 'address_in_use' },
      );
    case 'EACCES':
      return new PermissionDeniedError(
        `${what}: this user may not listen on ${at} (ports below 1024 need privileges): choose a port from 1024 to 65535`,
        details,
      );
    case 'EADDRNOTAVAIL':
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new InvalidInputError(
        `${what}: cannot listen on ${at}: ${host} is not an address of this machine: bind 127.0.0.1 (the default) or one of its own addresses`,
        { ...details, field: 'host' },
      );
    default:
      return toAgentStateError(err);
  }
}

/** Starts `server` listening on `host`:`port`; a refusal is a typed error (see listenError). */
export async function listen(server: Server, what: string, host: string, port: number): Promise<void> {
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (err) {
    throw listenError(err, what, host, port);
  }
}

/** Compares a secret the caller gave with the expected one in constant time. */
export function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The host name of a Host header (`name:port`, `[::1]:port`), lower-cased; null when it is malformed. */
export function hostName(header: string | undefined | null): string | null {
  if (!header) return null;
  const m = /^(\[[0-9a-f:.]+\]|[a-z0-9.-]+)(?::\d{1,5})?$/i.exec(header.trim());
  return m ? m[1]!.toLowerCase() : null;
}

/**
 * Whether a request's Host header may reach a server bound to `bind`: on loopback only this machine's names
 * (a page that rebinds its own name to 127.0.0.1 is refused); on a named address that name; on a wildcard
 * bind any (the token is the guard there).
 */
export function hostAllowed(header: string | undefined | null, bind: string): boolean {
  const name = hostName(header);
  if (name === null) return false;
  if (isLoopback(bind)) return isLoopback(name);
  if (bind === '0.0.0.0' || bind === '::') return true;
  return name === bind.toLowerCase() || `[${bind.toLowerCase()}]` === name;
}

/**
 * Whether a browser's Origin header names the server itself (same scheme-less host and port as Host). An
 * absent Origin passes: only browsers send it, and cross-site browser writes always carry it.
 */
export function originAllowed(origin: string | undefined | null, host: string | undefined | null): boolean {
  if (origin === undefined || origin === null || origin === '') return true;
  if (origin === 'null') return false;
  try {
    return new URL(origin).host.toLowerCase() === (host ?? '').toLowerCase();
  } catch {
    return false;
  }
}

/** Largest MCP message over HTTP, bytes (the SDK's own limit): serve's /mcp and mcp --http. */
export const MAX_MCP_BYTES = 4 * 1024 * 1024;

/** The limits every server of ours runs with (serve, mcp --http); docs/http.md, "Limits". */
export interface ConnectionLimits {
  /** How long an idle keep-alive connection stays open, ms. */
  idleMs: number;
  /**
   * How long a client may take to send a request's headers, ms: from its connection (a client that
   * connects and sends nothing is closed then) or from its previous request.
   */
  headersMs: number;
  /** How long a client may take to send a whole request, ms (responses, such as event streams, may last). */
  requestMs: number;
  /** Open connections a server takes at once; more are closed at once until some close. */
  maxConnections: number;
}

export const CONNECTION_LIMITS: Readonly<ConnectionLimits> = {
  idleMs: 5_000,
  headersMs: 15_000,
  requestMs: 60_000,
  maxConnections: 512,
};

/**
 * The options of `http.createServer` / `https.createServer` that enforce `limits`' deadlines: Node checks
 * the header and request deadlines of open connections every second (every 30 s by default, which would
 * let a silent connection stay 45 s).
 */
export function serverOptions(limits: Readonly<ConnectionLimits> = CONNECTION_LIMITS): ServerOptions {
  return {
    keepAliveTimeout: limits.idleMs,
    headersTimeout: limits.headersMs,
    requestTimeout: limits.requestMs,
    connectionsCheckingInterval: Math.min(1_000, limits.headersMs),
  };
}

/** The connection cap of `limits` (a server takes its deadlines at creation: `serverOptions`). */
export function limitConnections(
  server: HttpServer,
  limits: Readonly<ConnectionLimits> = CONNECTION_LIMITS,
): void {
  server.maxConnections = limits.maxConnections;
}

/** The bearer token of an Authorization header, or undefined. */
export function bearerOf(header: string | undefined): string | undefined {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  return m ? m[1] : undefined;
}
