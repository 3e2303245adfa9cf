// The subprocess contract of the bundle: MF_* environment in, one JSON document on stdout, typed
// JSON error on stderr, exit code from DESIGN.md.
import { parseJsonInput } from '../core/input.js';
import { EXIT_CODES, InvalidInputError, toAgentStateError } from '../errors.js';
import { openInstance } from '../instance/instance.js';
import { resolveInstance } from '../service/instance-resolver.js';
import { checkPayload, isWorkflowName, runWorkflow, WORKFLOW_NAMES } from './registry.js';

export interface WorkflowInvocation {
  /** Overrides MF_TRIGGER_PAYLOAD_JSON. */
  payloadText?: string | undefined;
  /** Overrides the instance location from the environment. */
  dir?: string | undefined;
  name?: string | undefined;
  host?: string | undefined;
  root?: string | undefined;
  /** SQLite durability (`full` or `normal`); also AGENTSTATE_DURABILITY. @default 'full' */
  durability?: string | undefined;
  /** Storage URL (also AGENTSTATE_URL); unset means embedded SQLite. */
  url?: string | undefined;
}

/** Writes the JSON error document to stderr and returns the exit code for it. */
export function reportError(err: unknown): number {
  const e = toAgentStateError(err);
  process.stderr.write(`${JSON.stringify({ error: e.toJSON() })}\n`);
  if (e.code === 'INTERNAL' && process.env.AGENTSTATE_DEBUG && err instanceof Error) {
    process.stderr.write(`${err.stack}\n`);
  }
  return EXIT_CODES[e.code];
}

/**
 * Runs workflow `name` as a process would: instance from flags or MF_AGENT_NAME / MF_HOST /
 * MF_INSTANCE_DIR (root from AGENTSTATE_ROOT), payload from MF_TRIGGER_PAYLOAD_JSON. Returns the exit code.
 */
export async function runWorkflowProcess(
  name: string,
  inv: WorkflowInvocation = {},
  env: NodeJS.ProcessEnv = process.env,
): Promise<number> {
  try {
    if (!isWorkflowName(name)) {
      throw new InvalidInputError(
        `unknown workflow ${JSON.stringify(name)}; known: ${WORKFLOW_NAMES.join(', ')}`,
      );
    }
    const text = inv.payloadText ?? env.MF_TRIGGER_PAYLOAD_JSON;
    const payload =
      text === undefined || text.trim() === '' ? {} : parseJsonInput(text, 'MF_TRIGGER_PAYLOAD_JSON');
    await checkPayload(name, payload);
    const inst = await openInstance(resolveInstance(inv, env));
    try {
      const result = await runWorkflow(inst, name, payload);
      process.stdout.write(`${JSON.stringify(result ?? null)}\n`);
      return 0;
    } finally {
      await inst.close();
    }
  } catch (err) {
    return reportError(err);
  }
}
