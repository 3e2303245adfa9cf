// The named commands as views of the operation table. A command is data (`CliCommand`): the operation it runs,
// the fields its positionals fill, and only what an input schema cannot say — a short flag, a CLI name for a
// field (`--key` for idempotency_key), a unit (`--lease 30s` for lease_ms), the fields the CLI fills in
// itself (the project folder), and how a result reads for a person. Every other flag — its name, value type,
// choices and help — is generated from the operation's input schema, so a field an operation gains is a flag
// of its command with no CLI code.
import { type Command, Option } from 'commander';
import type { JsonSchema } from '../core/json-schema.js';
import { types } from '../service/params.js';
import { getOperation } from '../service/table.js';
import { duration, int, json, list, type progressLine, projectOf, runCommand } from './context.js';

type Input = Record<string, unknown>;

/** What the CLI says about one field of an operation beyond its schema. */
export interface FlagSpec {
  /** The flag in commander syntax when not `--<field-in-kebab-case> <value>`, e.g. `-l, --lease <duration>`. */
  flags?: string;
  /** A short flag beside the generated long one (`k`: `-k, --kind <kind>`). */
  short?: string;
  /** The value's placeholder in help when not generated (`<time>`). */
  value?: string;
  /** The help, when the schema's description does not fit the command line (a unit, a default). */
  help?: string;
  /** Parses the flag's text, when not typed by the schema (a unit: `30s` to milliseconds). */
  parse?: (text: string) => unknown;
}

/**
 * One command: `usage` in commander syntax (`resolve <id> <status>`; each positional fills the field of its
 * name, kebab case read as snake case, or the one `args` maps it to).
 */
export interface CliCommand<R = never> {
  usage: string;
  /** The operation whose input schema the flags come from (and that runs, unless `route` says otherwise). */
  op: string;
  /** The help line [default: the operation's description]. */
  description?: string;
  /** The group's command when it is given none (`agentstate runs` runs `runs list`). */
  isDefault?: boolean;
  /** Per field: more about its flag, or `false` when it is no flag (the command fills it in). */
  flags?: Record<string, FlagSpec | string | false>;
  /** Only these fields are flags [default: every field the positionals do not fill]. */
  only?: readonly string[];
  /** Positional name → field, when not the same. */
  args?: Record<string, string>;
  /** Flags that are the command's, not a field's (`--follow`), in commander syntax with their help. */
  options?: ReadonlyArray<readonly [flags: string, help: string]>;
  /** Field values before the flags (`actor_kind: 'human'` for a person at the terminal). */
  defaults?: Input;
  /** The final input and the operation to run, from the parsed input, the command's options and the command. */
  route?: (input: Input, opts: Input, cmd: Command) => Promise<RouteTo> | RouteTo;
  /** How the result reads for a person (--json prints it whole). */
  human: (result: R, input: Input, opts: Input) => string;
  progress?: () => ReturnType<typeof progressLine>;
  exitCode?: (result: R) => number | undefined;
}

/** Where a command's input goes: an operation's name and its input, or a run of its own (a stream). */
export type RouteTo = { op: string; input: Input } | { run: () => Promise<void> };

/**
 * What the command line says about the fields most commands share (a command's own entry wins). The help is
 * the CLI's, not the schema's description: the MCP tool list is held to a token budget, a terminal's help
 * is not.
 */
const COMMON: Record<string, FlagSpec> = {
  kind: { short: 'k', help: 'only this kind' },
  id: { help: 'this item only, if it is ready' },
  priority: { short: 'p', help: 'higher is claimed first [default: 0]' },
  payload: { help: 'JSON payload' },
  idempotency_key: {
    flags: '--key <key>',
    help: 'idempotency key: a retried enqueue returns the existing item',
  },
  blocked_by: { short: 'b', value: 'ids', help: 'ids that must be done first (comma-separated or repeated)' },
  not_before: {
    value: 'time',
    help: 'not claimable before this ISO-8601 time, or this long from now (e.g. 5m)',
  },
  max_attempts: { help: 'attempts before an expiring lease fails the item [default: 3]' },
  waiting_human: { help: 'start parked for a human decision' },
  on_blocker_failure: {
    value: 'policy',
    help: 'when a blocker ends failed or cancelled: wait (reported blocked on the failure) or cascade (cancelled with it) [default: wait]',
  },
  worker: { short: 'w', value: 'id', help: 'lease owner [default: the agent name]' },
  lease_ms: {
    flags: '-l, --lease <duration>',
    help: 'lease length, e.g. 30s, 5m [default: 60s]',
    parse: duration('--lease'),
  },
  attempt: { help: 'fencing token: the attempt number your claim returned' },
  result: { help: 'JSON result' },
  error: { short: 'e', value: 'message', help: 'why it failed' },
  status: { short: 's', help: 'only this status (repeatable, comma-separated)' },
  reason: { short: 'r', value: 'text', help: 'why' },
  actor: { value: 'name', help: 'who acts [default: the agent name]' },
  actor_kind: { value: 'kind', help: 'who acts: a person, a model, a tool or the system' },
  limit: { short: 'n', help: 'at most n [default: 100]' },
  data: { short: 'd', help: 'JSON data' },
  stream: { short: 's', help: 'only this stream' },
  type: { short: 't', help: 'only these types (repeatable, comma-separated)' },
  work_item_id: { flags: '-i, --item <id>', help: 'only events of this work item' },
  correlation_id: { flags: '--correlation <id>', help: 'correlation id' },
  causation_id: { flags: '--causation <id>', help: 'causation id' },
  after: { help: 'after this position' },
  until: { help: 'up to this position' },
  since: { value: 'time', help: 'ISO time or duration ago, e.g. 1h' },
  before: { value: 'time', help: 'ISO time or duration ago' },
  reverse: { help: 'newest first' },
  version: { short: 'v', help: 'a past version' },
  expected_version: { flags: '-e, --expect <version>', help: 'the version you read (0: must not exist yet)' },
  noop: { help: 'record an explicit no-op (needs --reason)' },
  write_id: { help: 'idempotency key: a retry returns the original result' },
  provenance: { help: 'provenance record (model_id, input_hash|prompt_ref, run_id, step_id)' },
  role: { help: 'your role, for kinds with field permissions' },
};

/** The global options: a field of the same name is filled in by the command, never a flag of its own. */
const GLOBAL = new Set(['dir', 'name', 'host', 'root', 'durability', 'url', 'project', 'json']);

/** A field's flag name: `lease_ms` → `lease-ms`, `agentType` → `agent-type`. */
export const kebab = (field: string) =>
  field
    .replaceAll('_', '-')
    .replace(/([a-z])([A-Z])/g, '$1-$2')
    .toLowerCase();
const snake = (arg: string) => arg.replaceAll('-', '_');

/**
 * An operation description as a help line: no final stop, and lower case as commander lists commands, unless
 * its first word is a name or an acronym with a capital after its first letter (`RFC 6902 patch …`, `SQLite`),
 * which stays as written.
 */
const helpLine = (d: string) => {
  const first = /^\S*/.exec(d)![0];
  const lowered = /[A-Z]/.test(first.slice(1)) ? d : d.charAt(0).toLowerCase() + d.slice(1);
  return lowered.replace(/\.$/, '');
};

/** The enum a field's schema (or one branch of it) allows, if any. */
const choicesOf = (s: JsonSchema): string[] | undefined =>
  (s.enum ?? s.anyOf?.find((b) => b.enum)?.enum) as string[] | undefined;

/** The text → value parser for a field, typed by its schema. */
function parserOf(s: JsonSchema, name: string): ((v: string, prev?: never) => unknown) | undefined {
  const t = types(s);
  if (t.includes('array')) return list;
  if (t.includes('string')) return undefined;
  if (t.includes('integer')) return int(name);
  if (t.includes('json') || t.includes('object')) return json(name);
  return undefined;
}

/** The option of one field: generated from its schema, with what the command or COMMON says about it. */
export function optionOf(field: string, s: JsonSchema, spec: FlagSpec): Option {
  const t = types(s);
  const value =
    spec.value !== undefined
      ? ` <${spec.value}>`
      : t.includes('boolean') && t.length === 1
        ? ''
        : t.includes('integer')
          ? ' <n>'
          : t.includes('json') || (t.includes('object') && !t.includes('string'))
            ? ' <json>'
            : ` <${kebab(field)}>`;
  const flags = spec.flags ?? `${spec.short ? `-${spec.short}, ` : ''}--${kebab(field)}${value}`;
  const option = new Option(flags, spec.help ?? s.description ?? field.replaceAll('_', ' '));
  const parse = spec.parse ?? parserOf(s, `--${option.name()}`);
  const choices = choicesOf(s);
  if (parse) option.argParser(parse as (v: string, prev: unknown) => unknown);
  else if (choices) option.choices(choices);
  return option;
}

/** Adds `commands` to `parent` (the program, or a group such as `state`), each built from its operation. */
export function addCommands(parent: Command, commands: ReadonlyArray<CliCommand<never>>): void {
  for (const c of commands as ReadonlyArray<CliCommand<unknown>>) {
    const op = getOperation(c.op);
    const props = op.input.properties as Record<string, JsonSchema>;
    const required = new Set(op.input.required ?? []);
    const positionals = [...c.usage.matchAll(/[<[]([a-z][a-z0-9-]*)(\.\.\.)?[>\]]/g)].map(
      (m) => c.args?.[m[1]!] ?? snake(m[1]!),
    );
    const command = parent
      .command(c.usage, c.isDefault ? { isDefault: true } : {})
      .description(c.description ?? helpLine(op.description));
    const fields: Array<[field: string, key: string]> = [];
    for (const [field, s] of Object.entries(props)) {
      const own = c.flags?.[field];
      if (own === false || positionals.includes(field) || (c.only && !c.only.includes(field))) continue;
      if (GLOBAL.has(field) && own === undefined) continue;
      const spec = { ...COMMON[field], ...(typeof own === 'string' ? { short: own } : own) };
      const option = optionOf(field, s, spec);
      if (required.has(field)) option.makeOptionMandatory();
      command.addOption(option);
      fields.push([field, option.attributeName()]);
    }
    for (const [flags, help] of c.options ?? []) command.option(flags, help);
    command.action(async (...args: unknown[]) => {
      const cmd = args.at(-1) as Command;
      const opts = cmd.opts<Input>();
      const input: Input = { ...c.defaults };
      positionals.forEach((field, k) => {
        const v = args[k];
        const parse = typeof v === 'string' && props[field] ? parserOf(props[field], field) : undefined;
        // An optional variadic given nothing (`escalate <id>`) is the field left out, not an empty list.
        if (v !== undefined && !(Array.isArray(v) && v.length === 0))
          input[field] = parse ? parse(v as string) : v;
      });
      for (const [field, key] of fields) if (opts[key] !== undefined) input[field] = opts[key];
      // The state-file operations' project folder is the global --project (else the current folder).
      if ('project' in props && c.flags?.project === undefined) input.project = projectOf(cmd);
      const to = c.route ? await c.route(input, opts, cmd) : { op: c.op, input };
      if ('run' in to) return to.run();
      await runCommand<unknown>(cmd, to.op, to.input, (r) => c.human(r, to.input, opts), {
        ...(c.progress && { progress: c.progress() }),
        ...(c.exitCode && { exitCode: c.exitCode }),
      });
    });
  }
}

/** Declares a command, keeping its result type for `human` (the table holds commands of every type). */
export const command = <R>(c: CliCommand<R>): CliCommand<never> => c as unknown as CliCommand<never>;
