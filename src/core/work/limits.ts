// Limits of concurrency keys: at most so many of a key's items in flight, and/or so many claims started per
// window. Their inputs, the calls that set, remove and list them, and the events that audit each change
// (claims enforce limits in the backends' claim statements: backends/<b>/work/claim.ts and limits.ts).
import { InvalidInputError, NotFoundError } from '../../errors.js';
import { checkInput, type InputSpec } from '../input.js';
import { limitFromRow } from '../rows.js';
import type { RateLimit, RemoveLimitInput, SetLimitInput, WorkLimit } from '../types.js';
import type { QueueParts } from './context.js';
import { WORK_INPUTS } from './inputs.js';
import { STORE_ACTOR_KIND } from './rules.js';

/** The bounds of a rate limit's fields: at most a million claims per window, a window of at most a year. */
const RATE = {
  count: { type: 'int', required: true, min: 1, max: 1_000_000 },
  period_ms: { type: 'int', required: true, min: 1, max: 366 * 86_400_000 },
} as const satisfies InputSpec;

/** Checks a set_limit input: a limit needs max_in_flight, a rate, or both. */
export function checkSetLimit(raw: SetLimitInput): SetLimitInput & { rate: RateLimit | null } {
  const i = checkInput<SetLimitInput>('set_limit', raw, WORK_INPUTS.set_limit);
  const rate =
    i.rate === undefined || i.rate === null ? null : checkInput<RateLimit>('set_limit.rate', i.rate, RATE);
  if ((i.max_in_flight ?? null) === null && rate === null) {
    throw new InvalidInputError(
      'set_limit: give max_in_flight, rate, or both (remove_limit removes a limit)',
      {
        field: 'max_in_flight',
      },
    );
  }
  return { ...i, rate };
}

/** The body of `WorkQueue.setLimit` (its comment says what it does). */
export async function setLimit(w: QueueParts, input: SetLimitInput): Promise<WorkLimit> {
  const i = checkSetLimit(input);
  const { after } = await w.backend.limits.change({
    key: i.key,
    limit: { max_in_flight: i.max_in_flight ?? null, rate: i.rate },
    actor: i.actor ?? w.ctx.defaultWorker,
    actor_kind: i.actor_kind ?? STORE_ACTOR_KIND,
    now: w.ctx.clock(),
  });
  return limitFromRow(after!);
}

/** The body of `WorkQueue.removeLimit` (its comment says what it does). */
export async function removeLimit(w: QueueParts, input: RemoveLimitInput): Promise<WorkLimit> {
  const i = checkInput<RemoveLimitInput>('remove_limit', input, WORK_INPUTS.remove_limit);
  const { before } = await w.backend.limits.change({
    key: i.key,
    limit: null,
    actor: i.actor ?? w.ctx.defaultWorker,
    actor_kind: i.actor_kind ?? STORE_ACTOR_KIND,
    now: w.ctx.clock(),
  });
  return limitFromRow(before!);
}

/** The body of `WorkQueue.limits` (its comment says what it does). */
export async function listLimits(w: QueueParts): Promise<WorkLimit[]> {
  return (await w.backend.limits.list()).map(limitFromRow);
}

/** NOT_FOUND: a limit removed where there is none. */
export function noLimit(key: string): NotFoundError {
  return new NotFoundError(`concurrency key ${key} has no limit`, { key });
}
