// Running one operation that is already in hand: validate its input from its schema, prepare, open, run. The
// table (every operation) is not loaded here, so a process that runs one operation loads only its group.
import type { Instance } from '../instance/instance.js';
import type { Operation, RunContext } from './operation.js';
import { traced } from './trace.js';
import { validateInput } from './validate.js';

/** The instance an operation runs on: open already, none, or opened once the input passed (`open`). */
export type InstanceSource = Instance | null | (() => Promise<Instance | null>);

/**
 * Validates `input` against `op`'s input schema (nothing runs on a refusal), prepares, takes the instance
 * (calling `inst` when it is an opener: a refused input or preparation opens nothing), runs.
 */
export async function execute(
  op: Operation<never, unknown>,
  inst: InstanceSource,
  input: unknown,
  ctx: Omit<RunContext, 'prepared'> = {},
): Promise<unknown> {
  const o = op as unknown as Operation<unknown, unknown>;
  return traced(o.name, input, async () => {
    const i = validateInput(o, input);
    const prepared = o.prepare
      ? await o.prepare(i, ctx.progress ? { progress: ctx.progress } : {})
      : undefined;
    const target = typeof inst === 'function' ? await inst() : inst;
    return o.run(target as Instance, i, { ...ctx, prepared });
  });
}
