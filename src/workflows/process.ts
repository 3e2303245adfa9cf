// The subprocess contract of the bundle: MF_* environment in, one JSON document on stdout, typed
// JSON error on stderr, exit code from DESIGN.md. The payload is one JSON object, from
// MF_TRIGGER_PAYLOAD_JSON, or from MF_TRIGGER_PAYLOAD_FILE (a file, or `-` for stdin) when it is too
// large for an environment variable (Linux refuses one over 128 KiB at spawn, E2BIG).
import { LIMITS, parseJsonInput } from '../core/input.js';
import { decodeUtf8, readCapped } from '../core/text-input.js';
import {
  AgentStateError,
  EXIT_CODES,
  InvalidInputError,
  NotFoundError,
  toAgentStateError,
} from '../errors.js';
import { readRegularFile } from '../fs/files.js';
import { openInstance } from '../instance/instance.js';
import { inEdgeTerms, resolveInstance } from '../service/instance-resolver.js';
import { checkPayload, isWorkflowName, runWorkflow, WORKFLOW_NAMES, workflowOperation } from './registry.js';

/** What `runWorkflowProcess` takes from its caller instead of the environment: payload, instance, storage. */
export interface WorkflowInvocation {
  /** Overrides MF_TRIGGER_PAYLOAD_JSON and MF_TRIGGER_PAYLOAD_FILE. */
  payloadText?: string | undefined;
  /** What `payloadText` came from, for error messages. @default 'payload' */
  payloadSource?: string | undefined;
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

/** Where a workflow process writes its result and its error (tests and hosts that embed it can capture). */
export interface WorkflowOutput {
  /** Receives the result: one JSON document. */
  stdout(text: string): void;
  /** Receives the error: a JSON document `{ error }` (with AGENTSTATE_DEBUG, an internal error's stack too). */
  stderr(text: string): void;
}

/** This process's own stdout and stderr. */
const PROCESS_OUTPUT: WorkflowOutput = {
  stdout: (text) => void process.stdout.write(text),
  stderr: (text) => void process.stderr.write(text),
};

/** Writes the JSON error document to stderr and returns the exit code for it. */
export function reportError(err: unknown, out: WorkflowOutput = PROCESS_OUTPUT): number {
  const e = toAgentStateError(inEdgeTerms(err));
  out.stderr(`${JSON.stringify({ error: e.toJSON() })}\n`);
  if (e.code === 'INTERNAL' && process.env.AGENTSTATE_DEBUG && err instanceof Error) {
    out.stderr(`${err.stack}\n`);
  }
  return EXIT_CODES[e.code];
}

const FILE_VAR = 'MF_TRIGGER_PAYLOAD_FILE';

/**
 * Reads the payload file named by MF_TRIGGER_PAYLOAD_FILE (`-`: stdin) as hostile input: a FIFO, device,
 * socket or directory is refused unread, at most LIMITS.inputBytes (4 MiB) + 1 bytes are read, and the
 * bytes must be UTF-8. Every refusal is INVALID_INPUT naming the variable.
 */
async function readPayloadFile(path: string): Promise<string> {
  const source = path === '-' ? `${FILE_VAR} (stdin)` : `${FILE_VAR} (${path})`;
  let bytes: Buffer;
  try {
    bytes =
      path === '-'
        ? await readCapped(process.stdin, source, { field: 'payload' })
        : readRegularFile(path, LIMITS.inputBytes);
  } catch (err) {
    if (err instanceof NotFoundError || (err instanceof AgentStateError && err.code === 'INVALID_INPUT')) {
      throw new InvalidInputError(`${FILE_VAR}: ${err.message}`, {
        source: FILE_VAR,
        field: 'payload',
        path,
      });
    }
    throw new InvalidInputError(`cannot read ${source}: ${(err as Error).message}`, {
      source: FILE_VAR,
      field: 'payload',
      path,
    });
  }
  return decodeUtf8(bytes, source, 'payload');
}

/** The payload text and where it came from: the invocation's, else MF_TRIGGER_PAYLOAD_JSON or _FILE. */
async function payloadInput(
  inv: WorkflowInvocation,
  env: NodeJS.ProcessEnv,
): Promise<{ text: string | undefined; source: string }> {
  if (inv.payloadText !== undefined) return { text: inv.payloadText, source: inv.payloadSource ?? 'payload' };
  // Empty variables count as unset.
  const json = env.MF_TRIGGER_PAYLOAD_JSON || undefined;
  const file = env[FILE_VAR] || undefined;
  if (json !== undefined && file !== undefined) {
    throw new InvalidInputError(
      `both MF_TRIGGER_PAYLOAD_JSON and ${FILE_VAR} are set: pass the payload one way only`,
      { source: FILE_VAR, field: 'payload' },
    );
  }
  if (file !== undefined) return { text: await readPayloadFile(file), source: FILE_VAR };
  return { text: json, source: 'MF_TRIGGER_PAYLOAD_JSON' };
}

/**
 * The payload rule, the same for every way in: a JSON object. Absent, empty or blank text means `{}`;
 * any other value (`null`, a list, a number, a string) is INVALID_INPUT naming where it came from.
 */
export function parsePayload(text: string | undefined, source: string): Record<string, unknown> {
  if (text === undefined || text.trim() === '') return {};
  const value = parseJsonInput(text, source);
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    const what = value === null ? 'null' : Array.isArray(value) ? 'a list' : `a ${typeof value}`;
    throw new InvalidInputError(
      `${source} must be a JSON object of the workflow's fields, not ${what} (leave it unset or empty for {})`,
      { source, field: 'payload' },
    );
  }
  return value as Record<string, unknown>;
}

/**
 * Runs workflow `name` as a process would: instance from flags or MF_AGENT_NAME / MF_HOST /
 * MF_INSTANCE_DIR (root from AGENTSTATE_ROOT), payload from MF_TRIGGER_PAYLOAD_JSON or
 * MF_TRIGGER_PAYLOAD_FILE (see parsePayload for the rule). Writes one JSON document to `out.stdout`, or
 * the JSON error to `out.stderr`, and returns the exit code.
 * @param out @default this process's stdout and stderr
 */
export async function runWorkflowProcess(
  name: string,
  inv: WorkflowInvocation = {},
  env: NodeJS.ProcessEnv = process.env,
  out: WorkflowOutput = PROCESS_OUTPUT,
): Promise<number> {
  try {
    if (!isWorkflowName(name)) {
      throw new InvalidInputError(
        `unknown workflow ${JSON.stringify(name)}; known: ${WORKFLOW_NAMES.join(', ')}`,
      );
    }
    const { text, source } = await payloadInput(inv, env);
    const payload = parsePayload(text, source);
    // Checked once here, before anything is opened; the checked command is what runs.
    const command = await checkPayload(name, payload);
    // Only the workflow whose job is to make the instance (ScaffoldFolders) creates one: any other refuses a
    // missing instance with NOT_FOUND, so a host's mistyped MF_AGENT_NAME never grows an empty instance.
    const { instance } = await workflowOperation(name);
    const inst = await openInstance({ ...resolveInstance(inv, env), create: instance === 'create' });
    try {
      const result = await runWorkflow(inst, name, command);
      out.stdout(`${JSON.stringify(result ?? null)}\n`);
      return 0;
    } finally {
      await inst.close();
    }
  } catch (err) {
    return reportError(err, out);
  }
}
