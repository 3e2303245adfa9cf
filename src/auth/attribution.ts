// Who a call through a network edge is recorded as: the one attribution policy of HTTP, MCP and the dashboard.
// An edge describes the writer it knows (a principal's token, an MCP session) as a `Writer`; `attribute` turns
// a call's input into the input the operation runs with. Nobody writes as someone else: the actor and actor
// kind are the writer's, the lease owner defaults to the writer and, for a writer that holds only its own
// leases, must be it or one of its `<name>/…` workers.
import type { ActorKind, Json } from '../core/types.js';
import { InvalidInputError, PermissionDeniedError } from '../errors.js';
import { actorKindOf, type Principal } from './access.js';

/**
 * Input fields an edge that speaks for a model decides, so a call cannot set them: who wrote (`actor`,
 * `actor_kind`), rule overrides (a person grants them, not the writer itself) and the W3C `traceparent` an
 * item carries (it comes from the request's trace context). MCP tools leave them out of their schemas.
 */
export const EDGE_OWNED = ['actor', 'actor_kind', 'override', 'traceparent'] as const;

/** Who a call's writes are recorded as, as the edge knows it. */
export interface Writer {
  /** The actor of the writes, and the lease owner when a call names none. */
  actor: string;
  /** The actor kind of the writes. */
  actorKind: ActorKind;
  /** Who, in a refusal: a principal's name, or `this session`. */
  who: string;
  /** Holds only its own leases: a `worker` the call names must be `actor` or `<actor>/<anything>`. */
  ownWorkersOnly: boolean;
  /**
   * How a call that names an attributed field is met. Absent: it may name `actor` and `actor_kind` only as
   * they are (a principal's token; PERMISSION_DENIED otherwise). Present: the edge sets EDGE_OWNED and refuses
   * a call that names any of them (INVALID_INPUT), with `why` saying where each comes from (MCP).
   */
  setByEdge?: (field: string) => string;
  /** The provenance record of the writes, from the call's own (only an object) and what the edge knows. */
  provenance?: (given: Record<string, Json> | undefined) => Record<string, Json>;
  /** The named principal the edge authenticated, recorded in a refusal's details (none: undefined). */
  principal?: string | undefined;
}

/** Whether `worker` is one of `name`'s lease owners: the name itself, or `<name>/<anything>`. */
export function ownsWorker(name: string, worker: string): boolean {
  return worker === name || worker.startsWith(`${name}/`);
}

/**
 * The writer of a principal's calls (HTTP, the dashboard), or null for the owner's token, whose input stands
 * as given, as the CLI's does (the operations default to `system`). An agent holds only its own leases; a
 * person (human, admin) may act on anyone's, as a supervisor.
 */
export function principalWriter(p: Principal): Writer | null {
  if (p.role === 'owner') return null;
  return {
    actor: p.name,
    actorKind: actorKindOf(p.role),
    who: p.name,
    ownWorkersOnly: p.role === 'agent',
    principal: p.name,
  };
}

/**
 * The input a writer's call of operation `opName` runs with (`properties`: the operation's input properties,
 * which fields it has): actor and actor kind the writer's, the lease owner defaulting to the writer, the
 * provenance the writer's. A call naming another actor, actor kind or (for a writer of its own leases only)
 * another's worker is refused; nothing has run.
 */
export function attribute(
  opName: string,
  properties: Record<string, unknown>,
  input: Record<string, unknown>,
  w: Writer,
): Record<string, unknown> {
  const details = (field: string) => ({
    operation: opName,
    field,
    ...(w.principal === undefined ? {} : { principal: w.principal }),
  });
  if (w.setByEdge) {
    for (const f of EDGE_OWNED) {
      if (f in properties && Object.hasOwn(input, f)) {
        throw new InvalidInputError(`${opName}: ${f} ${w.setByEdge(f)}`, details(f));
      }
    }
  } else {
    const mine = { actor: w.actor, actor_kind: w.actorKind } as const;
    for (const f of ['actor', 'actor_kind'] as const) {
      const given = input[f];
      if (f in properties && given !== undefined && given !== mine[f]) {
        throw new PermissionDeniedError(
          `${opName}: ${f} ${JSON.stringify(given)} is not yours: ${w.who} writes as ${f} ${mine[f]}`,
          details(f),
        );
      }
    }
  }
  const out = { ...input };
  if ('worker' in properties) {
    const worker = out.worker;
    if (
      w.ownWorkersOnly &&
      worker !== undefined &&
      (typeof worker !== 'string' || !ownsWorker(w.actor, worker))
    ) {
      throw new PermissionDeniedError(
        `${opName}: worker ${JSON.stringify(worker)} is not yours: ${w.who} works as ${w.actor} or ${w.actor}/<anything>`,
        details('worker'),
      );
    }
    out.worker ??= w.actor;
  }
  if ('actor' in properties) out.actor = w.actor;
  if ('actor_kind' in properties) out.actor_kind = w.actorKind;
  // A provenance that is no object is left for the operation's schema to refuse.
  const given = input.provenance;
  if (w.provenance && 'provenance' in properties && (given === undefined || isObject(given))) {
    out.provenance = w.provenance(given);
  }
  return out;
}

function isObject(v: unknown): v is Record<string, Json> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}
