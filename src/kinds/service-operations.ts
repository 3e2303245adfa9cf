// The operations of the service table the built-in kinds bring (KindExtensions.serviceOperations), in the
// registry's order. Apart from the registry, which loads every kind (about 90 ms): the table loads with every
// CLI command and must not pay for that, so it takes them from here, and a kind's operations.ts imports what
// its operations need when one runs. The registry checks every kind's declaration against this list.
import type { ServiceOperation } from '../core/kind.js';
import { InvalidInputError } from '../errors.js';
import { scheduleServiceOperations } from './schedule/operations.js';
import { taskIrServiceOperations } from './task-ir/operations.js';
import { sessionServiceOperations } from './workflow-sessions/operations.js';

export const KIND_SERVICE_OPERATIONS: readonly ServiceOperation<never, never>[] = [
  ...taskIrServiceOperations,
  ...sessionServiceOperations,
  ...scheduleServiceOperations,
];

/**
 * Refuses (INVALID_INPUT) a kind that declares an operation the table does not serve: the table is built
 * once, from the built-in kinds, so a kind registered later cannot add one.
 */
export function checkServiceOperations(
  kind: string,
  ops: readonly ServiceOperation<never, never>[] = [],
): void {
  for (const op of ops) {
    if (!KIND_SERVICE_OPERATIONS.includes(op)) {
      throw new InvalidInputError(
        `kind ${kind} declares the operation ${JSON.stringify(op.name)}: only the built-in kinds' operations are served`,
        { field: 'serviceOperations' },
      );
    }
  }
}
