// Who may run which operation at a network edge, and who a call is recorded as: the one principal × operation
// matrix the HTTP API and MCP both apply (docs/http.md, "Principals and roles"). The CLI and the library run
// as the machine's user, who owns the store, and are not checked here.
import type { ActorKind } from '../core/types.js';
import { PermissionDeniedError } from '../errors.js';
import type { Operation } from '../service/operation.js';

/** The roles a principal is created with (`agentstate auth add <name> --role …`). */
export const ROLES = ['agent', 'human', 'admin'] as const;
export type Role = (typeof ROLES)[number];

/**
 * Who is calling through a network edge. `owner` is the single-user token (AGENTSTATE_TOKEN or the serve
 * token file): the store's owner, admin and human at once, trusted as the CLI is to name its actors.
 */
export interface Principal {
  name: string;
  role: Role | 'owner';
  /** Reads only: every operation that writes is PERMISSION_DENIED. */
  read_only: boolean;
}

/** The owner's token as a principal. */
export const OWNER: Principal = { name: 'owner', role: 'owner', read_only: false };

/** The actor kind a role's writes are recorded with: an agent's are a model's, a person's a human's. */
export function actorKindOf(role: Role): ActorKind {
  return role === 'agent' ? 'model' : 'human';
}

/**
 * Operations only an admin (or the owner) may run through a network edge: they replace or delete what
 * others wrote (import over an instance, prune history) or create instances.
 */
export const ADMIN_OPERATIONS: ReadonlySet<string> = new Set(['import_instance', 'prune', 'scaffold']);

/**
 * Whether `p` may run `op`: PERMISSION_DENIED naming the rule when not. What a role may do to one item (a
 * human decision is answered, cancelled, parked or retried by a human only) the store checks on the item,
 * from the actor kind this edge records.
 */
export function checkAccess(p: Principal, op: Pick<Operation, 'name' | 'writes'>): void {
  if (p.read_only && op.writes) {
    throw new PermissionDeniedError(`${op.name} writes, and ${p.name} is a read-only principal`, {
      operation: op.name,
      principal: p.name,
      rule: 'read-only',
    });
  }
  if (ADMIN_OPERATIONS.has(op.name) && p.role !== 'admin' && p.role !== 'owner') {
    throw new PermissionDeniedError(`${op.name} is for admins, and ${p.name} is ${p.role}`, {
      operation: op.name,
      principal: p.name,
      rule: 'admin-only',
    });
  }
}

/** Whether `worker` is one of `name`'s lease owners: the name itself, or `<name>/<anything>`. */
export function ownsWorker(name: string, worker: string): boolean {
  return worker === name || worker.startsWith(`${name}/`);
}

/**
 * The input a principal's call runs with: the actor is the principal and the actor kind its role's; the
 * lease owner defaults to the principal, and an agent's must be it (or one of its `<name>/…` workers). A
 * call that names another actor or actor kind, or an agent naming another's worker, is PERMISSION_DENIED:
 * nobody writes as someone else. The owner's input stands as given.
 * `properties` are the operation's input properties (which fields it has).
 */
export function attributeTo(
  p: Principal,
  opName: string,
  properties: Record<string, unknown>,
  input: Record<string, unknown>,
): Record<string, unknown> {
  if (p.role === 'owner') return input;
  const kind = actorKindOf(p.role);
  const refuse = (field: string, given: unknown, rule: string) =>
    new PermissionDeniedError(
      `${opName}: ${field} ${JSON.stringify(given)} is not yours: ${p.name} writes as ${rule}`,
      { operation: opName, principal: p.name, field },
    );
  const out = { ...input };
  if ('actor' in properties) {
    if (out.actor !== undefined && out.actor !== p.name) throw refuse('actor', out.actor, `actor ${p.name}`);
    out.actor = p.name;
  }
  if ('actor_kind' in properties) {
    if (out.actor_kind !== undefined && out.actor_kind !== kind) {
      throw refuse('actor_kind', out.actor_kind, `actor_kind ${kind} (role ${p.role})`);
    }
    out.actor_kind = kind;
  }
  if ('worker' in properties) {
    const w = out.worker;
    // An agent holds only its own leases; a person (human, admin) may act on anyone's, as a supervisor.
    if (p.role === 'agent' && w !== undefined && (typeof w !== 'string' || !ownsWorker(p.name, w))) {
      throw refuse('worker', w, `worker ${p.name} or ${p.name}/<anything>`);
    }
    out.worker ??= p.name;
  }
  return out;
}
