// What both backends build alike and the core has no use for: kept here once, beside the two backends,
// instead of once in each.
import { InvalidInputError } from '../errors.js';

/** An enqueued item's `blocked_by` names `dep`, which is no item of this instance. */
export function missingBlocker(dep: string): InvalidInputError {
  return new InvalidInputError(`blocked_by names ${dep}, which is not a work item of this instance`, {
    field: 'blocked_by',
    id: dep,
  });
}
