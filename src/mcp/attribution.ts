// Who a write through MCP is recorded as: the session's actor, with actor_kind `model` (or `human` for a human
// or admin principal's client), and a provenance record built from what the server knows (client, session,
// request, the host's model id) plus what the call passed. The policy itself is the edges' one
// (auth/attribution.ts); this is the MCP writer it is given.
import type { Writer } from '../auth/attribution.js';
import type { ActorKind, Json } from '../core/types.js';

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
 * The writer of a tool call: the fields the MCP edge owns (actor, actor_kind, override, traceparent) are
 * refused from arguments, naming where each comes from (a model cannot write as a human or as someone else),
 * the session's worker is the default lease owner, and every write carries the call's provenance.
 */
export function mcpWriter(origin: CallOrigin): Writer {
  return {
    actor: origin.actor,
    actorKind: origin.actorKind,
    who: 'this session',
    ownWorkersOnly: origin.ownWorkersOnly,
    setByEdge: (field) =>
      field === 'traceparent'
        ? "is set by the MCP server from the request's params._meta.traceparent (W3C trace context), not from arguments"
        : `is set by the MCP server: writes through MCP are recorded as the session's (actor ${JSON.stringify(origin.actor)}, actor_kind ${origin.actorKind})`,
    provenance: (given) => provenance(given, origin),
    principal: origin.principal,
  };
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
