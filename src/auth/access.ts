// Who may run which operation at a network edge: the one principal × operation matrix the HTTP API, the
// dashboard and MCP apply (docs/http.md, "Principals and roles"); who a call is recorded as is attribution.ts.
// The CLI and the library run as the machine's user, who owns the store, and are not checked here.
import type { ActorKind } from '../core/types.js';
import { PermissionDeniedError } from '../errors.js';

/** The roles a principal is created with (`agentstate auth add <name> --role …`). */
export const ROLES = ['agent', 'human', 'admin'] as const;
/** A principal's role: an agent's writes are a model's, a human's and an admin's a person's. */
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
export function checkAccess(p: Principal, op: { name: string; writes: boolean }): void {
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
