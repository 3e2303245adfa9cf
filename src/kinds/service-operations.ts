// The operations of the service table that kinds declare (KindExtensions.serviceOperations). The built-in
// kinds' are listed here apart from the registry, which loads every kind (tens of ms): the table loads with
// every CLI command and must not pay for that, so it takes them from here, and a kind's operations.ts
// imports what its operations need when one runs (a test holds this list to the kinds' own declarations).
// A kind registered later declares its own through the registry: they are handed to the table, which the
// service subscribes (`onDeclaredOperations`), so a kind's operations are served wherever the table is.

import { specOf } from '../core/json-schema.js';
import type { OperationGroup, ServiceOperation } from '../core/kind.js';
import { InvalidInputError } from '../errors.js';
import { scheduleServiceOperations } from './schedule/operations.js';
import { taskIrServiceOperations } from './task-ir/operations.js';
import { sessionServiceOperations } from './workflow-sessions/operations.js';

type AnyOperation = ServiceOperation<never, never>;

/** The built-in kinds' operations, in the registry's order. */
export const KIND_SERVICE_OPERATIONS: readonly AnyOperation[] = [
  ...taskIrServiceOperations,
  ...sessionServiceOperations,
  ...scheduleServiceOperations,
];

const BUILT_IN = new Set<AnyOperation>(KIND_SERVICE_OPERATIONS);
const GROUPS: ReadonlySet<OperationGroup> = new Set([
  'work',
  'events',
  'documents',
  'files',
  'reports',
  'instance',
  'workflow',
]);

/** The operations declared by kinds registered after the built-in ones, by kind. */
const declared = new Map<string, readonly AnyOperation[]>();

/**
 * What the table does with declared operations: `accept` refuses (throws) what it cannot serve — a name it
 * serves already, other than one of the operations these replace — before anything changes; `apply` takes the
 * whole current list.
 */
export interface DeclaredOperationsListener {
  accept(ops: readonly AnyOperation[], replacing: readonly AnyOperation[]): void;
  apply(ops: readonly AnyOperation[]): void;
}
let listener: DeclaredOperationsListener | undefined;

/** The operations kinds registered later declared, in the order they were registered. */
export function declaredOperations(): AnyOperation[] {
  return [...declared.values()].flat();
}

/** The table subscribes: it is told every later declaration (and checks it first). */
export function onDeclaredOperations(l: DeclaredOperationsListener): void {
  listener = l;
}

/**
 * Takes kind `kind`'s operations for the table, replacing those it declared before: each must be an
 * operation the table can serve (a snake_case name, a known group, an input built by `inputSchema`, a `run`)
 * whose name no other operation has. INVALID_INPUT otherwise, and nothing changes. The built-in kinds'
 * operations are in the table already.
 */
export function declareServiceOperations(kind: string, ops: readonly AnyOperation[] = []): void {
  const own = ops.filter((op) => !BUILT_IN.has(op));
  if (own.length === 0 && !declared.has(kind)) return;
  const names = new Set<string>();
  for (const op of own) {
    const refuse = (why: string) =>
      new InvalidInputError(`kind ${kind} declares the operation ${JSON.stringify(op?.name)}: ${why}`, {
        field: 'serviceOperations',
      });
    if (typeof op?.name !== 'string' || !/^[a-z][a-z0-9_]{0,63}$/.test(op.name)) {
      throw refuse('an operation name is snake_case, 1–64 characters');
    }
    if (names.has(op.name)) throw refuse('it declares it twice');
    names.add(op.name);
    if (!GROUPS.has(op.group)) throw refuse(`its group must be one of ${[...GROUPS].join(', ')}`);
    if (typeof op.run !== 'function') throw refuse('it has no run');
    if (!op.input || !specOf(op.input)) throw refuse('its input must be built by inputSchema');
    for (const [other, theirs] of declared) {
      if (other !== kind && theirs.some((t) => t.name === op.name)) {
        throw refuse(`kind ${other} declares it already`);
      }
    }
  }
  listener?.accept(own, declared.get(kind) ?? []);
  if (own.length === 0) declared.delete(kind);
  else declared.set(kind, own);
  listener?.apply(declaredOperations());
}
