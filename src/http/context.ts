// What every part of `agentstate serve` shares: who is calling, the served instances, the error response of
// the one error table, and how a signed-in human's writes are attributed.
import type { Context } from 'hono';
import { ERROR_TABLE, errorBody, toAgentStateError } from '../errors.js';
import type { Instance } from '../instance/instance.js';
import type { InstanceRegistry } from './instances.js';
import { INSTANCE_PARAM } from './routes.js';

/** Who a request is: a bearer-token caller (a program) or a signed-in human (the dashboard's cookie). */
export type Caller = { via: 'bearer' } | { via: 'session'; actor: string; session: string };

export type AppEnv = { Variables: { caller: Caller } };

/** What the dashboard needs of the app (kept apart so the API runs without it). */
export interface AppContext {
  registry: InstanceRegistry;
  token: string;
  /** The address the server is bound to (Host checks follow it). */
  bind: string;
  /** Aborted when the server shuts down: ends open event streams. */
  signal: AbortSignal;
  /** Poll interval of the event stream when caught up, ms. */
  pollMs: number;
}

export interface ServeAppOptions extends Omit<AppContext, 'signal' | 'pollMs'> {
  signal?: AbortSignal;
  /** @default 100 */
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
 * The operation input a caller's fields become: a signed-in human's writes are recorded as theirs
 * (actor = their name, actor_kind `human`) whatever the form says; a bearer caller's stand as given, as the
 * CLI's do (the operations default to `system`).
 */
export function attributed(
  properties: Record<string, unknown>,
  input: Record<string, unknown>,
  caller: Caller,
): Record<string, unknown> {
  if (caller.via !== 'session') return input;
  const out = { ...input };
  if ('actor' in properties) out.actor = caller.actor;
  if ('actor_kind' in properties) out.actor_kind = 'human';
  return out;
}
