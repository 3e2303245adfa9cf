// The checks of a run's inputs: whose run a call names, a step's retry options, and record names.
import { InvalidInputError } from '../../errors.js';
import { checkInput, LIMITS, RESERVED_KEYS } from '../input.js';

/** The input spec of a run's holder: the item, the worker holding its lease, and the attempt. */
export const HOLDER_SPEC = {
  id: { type: 'name', required: true },
  worker: { type: 'name', required: true },
  attempt: { type: 'int', required: true, min: 1 },
} as const;

/** The input spec of a step called one at a time (`work.step`): its holder, its name, and how it retries. */
export const STEP_SPEC = {
  ...HOLDER_SPEC,
  name: { type: 'name', required: true },
  attempts: { type: 'int', min: 1, max: 100 },
  backoffMs: { type: 'int', min: 0, max: LIMITS.leaseMs },
  maxBackoffMs: { type: 'int', min: 0, max: LIMITS.leaseMs },
} as const;

/** A record name: a `name` field (1–`max` characters, no control characters), and never a reserved key. */
export function checkRecordName(op: string, name: unknown, max: number = LIMITS.name): string {
  const { name: n } = checkInput<{ name: string }>(
    op,
    { name },
    { name: { type: 'name', required: true, max } },
  );
  if (RESERVED_KEYS.has(n)) {
    throw new InvalidInputError(
      `${op}: name ${JSON.stringify(n)} is refused (${[...RESERVED_KEYS].join(', ')} are never names)`,
      {
        field: 'name',
      },
    );
  }
  return n;
}
