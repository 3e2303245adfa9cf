// Who a write through MCP is recorded as: the session's actor with actor_kind `model` and a provenance record
// built from what the server knows (client, session, request, the host's model id) plus what the call passed.
import { ownsWorker } from '../auth/access.js';
import type { ActorKind, Json } from '../core/types.js';
import { InvalidInputError, PermissionDeniedError } from '../errors.js';
import type { ToolDefinition } from './tools.js';

/** What the server knows about one tool call. */
export interface CallOrigin {
  /** Lease owner and actor of the session's writes. */
  actor: string;
  /** A named principal's session holds only its own leases: a `worker` argument must be `actor` or `<actor>/…`. */
  ownWorkersOnly: boolean;
  /** The actor kind of the session's writes: `model`, or `human` for a human or admin principal's client. */
  actorKind: ActorKind;
  /** The model the host runs (`--model`, AGENTSTATE_MODEL), when it says. */
  model?: string | undefined;
  /** The MCP client, from initialize or the request envelope. */
  client?: { name: string; version: string } | undefined;
  /** The MCP session id (Streamable HTTP), else the server's own id for this connection. */
  session: string;
  /** The named principal the HTTP request authenticated as, when it did. */
  principal?: string | undefined;
  /** The JSON-RPC id of the tools/call request. */
  request: string | number;
}

/**
 * The operation input of a tool call: the caller's arguments, with the fields the MCP edge owns filled in
 * (actor, actor_kind, provenance) and the session's worker as the default lease owner. A call that
 * sets an owned field is refused (INVALID_INPUT naming it): a model cannot write as a human or as someone else.
 */
export function attributed(
  def: ToolDefinition,
  properties: Record<string, unknown>,
  args: Record<string, unknown>,
  origin: CallOrigin,
): Record<string, unknown> {
  for (const f of def.owned) {
    if (Object.hasOwn(args, f)) {
      if (f === 'traceparent')
        throw new InvalidInputError(
          `${def.name}: traceparent is set by the MCP server from the request's params._meta.traceparent (W3C trace context), not from arguments`,
          { field: f },
        );
      throw new InvalidInputError(
        `${def.name}: ${f} is set by the MCP server: writes through MCP are recorded as the session's (actor ${JSON.stringify(origin.actor)}, actor_kind ${origin.actorKind})`,
        { field: f },
      );
    }
  }
  const input: Record<string, unknown> = { ...args };
  const w = input.worker;
  if (origin.ownWorkersOnly && 'worker' in properties && w !== undefined) {
    if (typeof w !== 'string' || !ownsWorker(origin.actor, w)) {
      throw new PermissionDeniedError(
        `${def.name}: worker ${JSON.stringify(w)} is not this session's: it works as ${JSON.stringify(origin.actor)} (or ${origin.actor}/<anything>)`,
        { field: 'worker', operation: def.name },
      );
    }
  }
  if ('worker' in properties && input.worker === undefined) input.worker = origin.actor;
  if ('actor' in properties) input.actor = origin.actor;
  if ('actor_kind' in properties) input.actor_kind = origin.actorKind;
  // A provenance that is no object is left for the operation's schema to refuse.
  const given = args.provenance;
  if ('provenance' in properties && (given === undefined || isObject(given))) {
    input.provenance = provenance(given, origin);
  }
  return input;
}

function isObject(v: unknown): v is Record<string, Json> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/**
 * The provenance record of a model write: the call's own fields (prompt_ref or input_hash, which only the
 * caller knows), the host's model id over any the call claims, the session as the run and the request as
 * the step unless the call names its own, and where the write came from.
 */
export function provenance(
  given: Record<string, Json> | undefined,
  origin: CallOrigin,
): Record<string, Json> {
  const p: Record<string, Json> = { ...given };
  if (origin.model) p.model_id = origin.model;
  if (typeof p.run_id !== 'string' || p.run_id === '') p.run_id = origin.session;
  if (typeof p.step_id !== 'string' || p.step_id === '') p.step_id = `mcp-request-${String(origin.request)}`;
  p.via = 'mcp';
  p.mcp_session = origin.session;
  p.mcp_request = String(origin.request);
  if (origin.client) p.mcp_client = `${origin.client.name}/${origin.client.version}`;
  if (origin.principal) p.principal = origin.principal;
  return p;
}
