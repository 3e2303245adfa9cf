// What every part of `agentstate serve` shares: who is calling, the served instances, the error response of
// the one error table, and how a signed-in human's writes are attributed.
import type { Context } from 'hono';
import type { Principal } from '../auth/access.js';
import { principalWriter } from '../auth/attribution.js';
import type { PrincipalStore } from '../auth/principals.js';
import { ERROR_TABLE, errorBody, toAgentStateError } from '../errors.js';
import type { Instance } from '../instance/instance.js';
import type { EdgeCall } from '../service/edge.js';
import type { SessionInfo, Sessions } from './auth.js';
import type { InstanceRegistry } from './instances.js';
import { INSTANCE_PARAM } from './routes.js';

/**
 * Who a request is: a bearer token's principal (the owner's token, or a named principal's), or a human
 * signed in to the dashboard (the session's principal is named as they signed in, role human or admin).
 */
export type Caller =
  | { via: 'bearer'; principal: Principal }
  | { via: 'session'; principal: Principal; session: SessionInfo };

export type AppEnv = { Variables: { caller: Caller } };

/** What the dashboard needs of the app (kept apart so the API runs without it). */
export interface AppContext {
  registry: InstanceRegistry;
  /** The owner's token (admin and human at once). */
  token: string;
  /** The named principals that may call, besides the owner; null when the server takes only the owner's token. */
  principals: PrincipalStore | null;
  /** The dashboard's sessions. */
  sessions: Sessions;
  /** The address the server is bound to (Host checks follow it). */
  bind: string;
  /**
   * When the session cookie is `Secure`: `always` (HTTPS), `forwarded` (behind a proxy that says
   * `X-Forwarded-Proto: https`), `never` (plain HTTP).
   */
  secureCookies: 'always' | 'forwarded' | 'never';
  /** Aborted when the server shuts down: ends open event streams. */
  signal: AbortSignal;
  /** Poll interval of the event stream when caught up, ms. */
  pollMs: number;
  /** The most characters of one MCP tool result at /mcp (undefined: the MCP server's default). */
  mcpMaxResultChars: number | undefined;
}

/** What `createServeApp` serves: the instances, the owner's token, and the parts of the app to mount. */
export interface ServeAppOptions
  extends Omit<
    AppContext,
    'signal' | 'pollMs' | 'sessions' | 'principals' | 'secureCookies' | 'mcpMaxResultChars'
  > {
  /** The most characters of one MCP tool result at /mcp. @default 100,000 */
  mcpMaxResultChars?: number;
  /** When the session cookie is `Secure` (see AppContext.secureCookies). @default 'never' */
  secureCookies?: AppContext['secureCookies'];
  /** The named principals that may call besides the owner. @default null (the owner's token only) */
  principals?: PrincipalStore | null;
  /** The dashboard's sign-in sessions. @default new sessions */
  sessions?: Sessions;
  /** Aborting it ends the open event streams. */
  signal?: AbortSignal;
  /** Poll interval of the event stream when caught up, ms. @default 100 */
  pollMs?: number;
  /** Serve /mcp (the same handler as `agentstate mcp --http`). @default true */
  mcp?: boolean;
  /** Serve the dashboard at /. @default true */
  dashboard?: boolean;
}

/** The error response of the one error table: `{error:{code,message,…}}` with its HTTP status. */
export function errorResponse(c: Context, err: unknown): Response {
  const e = toAgentStateError(err);
  const headers: Record<string, string> = {};
  if (e.code === 'UNAUTHENTICATED') headers['www-authenticate'] = 'Bearer realm="agentstate"';
  return c.json(errorBody(e), ERROR_TABLE[e.code].http as 400, headers);
}

/** The instance a request names (`?instance=host/name`), or the server's default. */
export function instanceOf(c: Context, registry: InstanceRegistry): Promise<Instance> {
  const key = c.req.query(INSTANCE_PARAM);
  return registry.open(key === undefined || key === '' ? undefined : key);
}

/**
 * The edge call of a request's caller: its principal, checked against the principal × operation matrix, and
 * its writer — a principal's and a signed-in human's writes are recorded as theirs (actor, the actor kind of
 * their role) and naming anyone else is PERMISSION_DENIED; the owner's token stands as given, as the CLI's
 * does (the operations default to `system`). `traceparent` is the request's W3C trace context.
 */
export function edgeCallOf(caller: Caller, traceparent?: string): EdgeCall {
  return { principal: caller.principal, writer: principalWriter(caller.principal), traceparent };
}
