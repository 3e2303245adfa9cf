// Running an operation as the machine's user (the CLI, the bundle workflows, the library): find the instance
// the operation needs (the one resolver), then run.ts's check → prepare → open → run, and close. The network
// edges, the hooks and the metrics go through edge.ts, which adds access and attribution to the same run.
import { type Instance, openInstance } from '../instance/instance.js';
import { type InstanceFlags, namesAnInstance, resolveInstance } from './instance-resolver.js';
import type { Operation, Progress, RunContext } from './operation.js';
import { execute } from './run.js';
import { getOperation } from './table.js';

/**
 * Runs operation `name` on an instance that is already open (the library's way, and what servers that
 * keep instances open use).
 * @example await runOperation(inst, 'enqueue', { title: 'triage inbox' })
 */
export async function runOperation(
  inst: Instance | null,
  name: string,
  input: unknown = {},
  ctx: Omit<RunContext, 'prepared'> = {},
): Promise<unknown> {
  return execute(getOperation(name) as Operation<never, unknown>, inst, input, ctx);
}

/** How `invoke` finds the instance an operation runs on, and how it reports long work. */
export interface InvokeOptions {
  /** Which instance (flags, options); the environment fills in the rest. */
  instance?: InstanceFlags;
  /** The environment the instance is resolved from (MF_INSTANCE_DIR, MF_AGENT_NAME, AGENTSTATE_URL …) [default: process.env]. */
  env?: NodeJS.ProcessEnv;
  /** Progress of long work, for edges that show it. */
  progress?: Progress;
}

/**
 * Validates `input`, runs the operation's preparation, opens the instance it needs, runs it, closes the
 * instance. Bad input throws before anything is opened, so it writes nothing.
 * @example await invoke('claim', { worker: 'w1' }, { instance: { name: 'planner' } })
 */
export async function invoke(name: string, input: unknown = {}, opts: InvokeOptions = {}): Promise<unknown> {
  const op = getOperation(name);
  const env = opts.env ?? process.env;
  const flags = opts.instance ?? {};
  const mode = op.instance ?? 'required';
  const location = resolveInstance(flags, env);
  const ctx = opts.progress ? { progress: opts.progress } : {};
  if (mode === 'none' || (mode === 'optional' && !namesAnInstance(flags, env))) {
    return execute(op as Operation<never, unknown>, null, input, ctx);
  }
  // Opened once the input passed and the preparation ran (a refusal opens nothing). Only the operations whose
  // job is to make an instance (init, import) create one; every other refuses a missing instance with
  // NOT_FOUND, creating nothing.
  let opened: Instance | undefined;
  try {
    return await execute(
      op as Operation<never, unknown>,
      async () => {
        opened = await openInstance({ ...location, create: mode === 'create' });
        return opened;
      },
      input,
      ctx,
    );
  } finally {
    await opened?.close();
  }
}
