// Running one operation that is already in hand: validate its input from its schema, prepare, run. The
// table (every operation) is not loaded here, so a process that runs one operation loads only its group.
import type { Instance } from '../instance/instance.js';
import type { Operation, RunContext } from './operation.js';
import { traced } from './trace.js';
import { validateInput } from './validate.js';

/** Validates `input` against `op`'s input schema (nothing runs on a refusal), prepares, runs. */
export async function execute(
  op: Operation<never, unknown>,
  inst: Instance | null,
  input: unknown,
  ctx: Omit<RunContext, 'prepared'> = {},
): Promise<unknown> {
  const o = op as unknown as Operation<unknown, unknown>;
  return traced(o.name, input, async () => {
    const i = validateInput(o, input);
    const prepared = o.prepare
      ? await o.prepare(i, ctx.progress ? { progress: ctx.progress } : {})
      : undefined;
    return o.run(inst as Instance, i, { ...ctx, prepared });
  });
}
