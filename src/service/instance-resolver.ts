// The one instance resolver: which instance an edge (CLI, workflow process, MCP, HTTP) opens, from its
// flags or options first and the environment second.
import { isAbsolute } from 'node:path';
import { type AgentStateError, InvalidInputError, isAgentStateError, NotFoundError } from '../errors.js';
import type { OpenInstanceOptions } from '../instance/instance.js';
import { NO_INSTANCE_GIVEN, NO_SUCH_INSTANCE } from '../instance/paths.js';

/** What an edge can be told about the instance (flags, tool options); every field optional. */
export interface InstanceFlags {
  /** The instance folder itself; wins over name/host/root (like MF_INSTANCE_DIR). */
  dir?: string | undefined;
  /** Agent name (like MF_AGENT_NAME). */
  name?: string | undefined;
  /** Host part of the identity (like MF_HOST). */
  host?: string | undefined;
  /** Folder holding `<host>/agents/<name>` (like AGENTSTATE_ROOT). */
  root?: string | undefined;
  /** Storage URL, e.g. `postgres://…` (like AGENTSTATE_URL); unset means embedded SQLite. */
  url?: string | undefined;
  /** SQLite sync mode, `full` or `normal` (like AGENTSTATE_DURABILITY). */
  durability?: string | undefined;
}

/** The environment variables the resolver reads, in the order it prefers them. */
export const INSTANCE_ENV = [
  'MF_INSTANCE_DIR',
  'MF_AGENT_NAME',
  'MF_HOST',
  'AGENTSTATE_ROOT',
  'XDG_CONFIG_HOME',
  'AGENTSTATE_URL',
  'AGENTSTATE_DURABILITY',
] as const;

function set(v: string | undefined): string | undefined {
  return v === undefined || v === '' ? undefined : v;
}

/**
 * The options to open the instance with. A flag wins over its variable; `--name` also wins over
 * MF_INSTANCE_DIR (naming an agent means that agent, not the folder the host exported). The root is
 * `--root`, else AGENTSTATE_ROOT, else `$XDG_CONFIG_HOME` (when set to an absolute path, as the XDG spec
 * requires), else `~/.config`. Throws INVALID_INPUT for a durability other than full or normal.
 * @example await openInstance({ ...resolveInstance({ name: 'planner' }), create: false })
 */
export function resolveInstance(
  flags: InstanceFlags = {},
  env: NodeJS.ProcessEnv = process.env,
): OpenInstanceOptions {
  const durability = set(flags.durability) ?? set(env.AGENTSTATE_DURABILITY);
  if (durability !== undefined && durability !== 'full' && durability !== 'normal') {
    throw new InvalidInputError(`durability must be full or normal, got ${JSON.stringify(durability)}`, {
      field: 'durability',
    });
  }
  const xdg = set(env.XDG_CONFIG_HOME);
  const name = set(flags.name) ?? set(env.MF_AGENT_NAME);
  const opts: OpenInstanceOptions = {
    dir: set(flags.dir) ?? (set(flags.name) === undefined ? set(env.MF_INSTANCE_DIR) : undefined),
    name,
    host: set(flags.host) ?? set(env.MF_HOST),
    root:
      set(flags.root) ?? set(env.AGENTSTATE_ROOT) ?? (xdg !== undefined && isAbsolute(xdg) ? xdg : undefined),
    url: set(flags.url) ?? set(env.AGENTSTATE_URL),
  };
  if (durability !== undefined) opts.durability = durability;
  return opts;
}

/** Whether the flags or the environment name an instance at all (some commands work without one). */
export function namesAnInstance(flags: InstanceFlags = {}, env: NodeJS.ProcessEnv = process.env): boolean {
  const o = resolveInstance(flags, env);
  return o.dir !== undefined || o.name !== undefined;
}

/**
 * A library error about which instance, in the terms of the edges that take flags and variables (the CLI,
 * the workflow processes, the servers they start): the library names its options (`name`, `dir`,
 * `create`); these name --name / --dir / MF_AGENT_NAME and the commands that create an instance. Any other
 * error comes back as it was.
 * @example process.stderr.write(String(inEdgeTerms(err)))
 */
export function inEdgeTerms(err: unknown): unknown {
  if (!isAgentStateError(err)) return err;
  const details = (err as AgentStateError).details ?? {};
  if (details.reason === NO_INSTANCE_GIVEN) {
    return new InvalidInputError(
      'no instance given: pass --name (or --dir), or set MF_AGENT_NAME (or MF_INSTANCE_DIR)',
      details,
    );
  }
  if (details.reason === NO_SUCH_INSTANCE) {
    const where =
      typeof details.dir === 'string'
        ? `at ${details.dir}`
        : `${String(details.instance)} in schema ${String(details.schema)}`;
    return new NotFoundError(
      `no agentstate instance ${where}: create it with \`agentstate init\` (or run the ScaffoldFolders workflow first), or check --dir / --name / --host / MF_AGENT_NAME`,
      details,
    );
  }
  return err;
}
