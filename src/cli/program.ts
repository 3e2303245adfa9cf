// The agentstate command set (commander): every command a thin view of one operation of the service table,
// grouped in help as the store is (work items, events, documents, state files, instances, workflows).
import { readFileSync } from 'node:fs';
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { EXIT_CODES, InvalidInputError, toAgentStateError } from '../errors.js';
import { inEdgeTerms } from '../service/instance-resolver.js';
import { WORKFLOW_NAMES, WORKFLOWS } from '../workflows/registry.js';
import { addAuthCommands } from './auth-commands.js';
import { addCallCommand } from './call-command.js';
import { type GlobalOpts, Output } from './context.js';
import { addEventCommands } from './event-commands.js';
import { addInstanceCommands } from './instance-commands.js';
import { addMcpCommand } from './mcp-command.js';
import { addRunsCommands } from './runs-commands.js';
import { addScheduleCommands } from './schedule-commands.js';
import { addServeCommand } from './serve-command.js';
import { addSessionCommands } from './session-commands.js';
import { addHookCommand, addSetupCommand } from './setup-command.js';
import { addStateCommands } from './state-commands.js';
import { addViewCommands } from './view-commands.js';
import { addWorkCommands } from './work-commands.js';
import { addWorkerCommand } from './worker-command.js';
import { runWorkflowCommand } from './workflow-command.js';

/** The package's own version: package.json sits two folders up from src/cli and from dist/cli alike. */
function packageVersion(): string {
  const pkg: unknown = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
  const v = (pkg as { version?: unknown }).version;
  return typeof v === 'string' ? v : 'unknown';
}

export function buildProgram(): Command {
  const program = new Command('agentstate')
    .description(
      'Durable, versioned, conflict-safe state for AI agents: leased work items, a tamper-evident event log and ' +
        'versioned documents. The instance comes from --dir, or --name/--host/--root, or MF_INSTANCE_DIR / ' +
        'MF_AGENT_NAME / MF_HOST (root: AGENTSTATE_ROOT, else $XDG_CONFIG_HOME, else ~/.config).',
    )
    .version(packageVersion())
    .optionsGroup('Global options (before or after the command):')
    .option('--dir <path>', 'the instance folder itself (like MF_INSTANCE_DIR)')
    .option('--name <name>', 'agent name (like MF_AGENT_NAME)')
    .option('--host <host>', 'host name (like MF_HOST) [default: this machine]')
    .option(
      '--root <path>',
      'folder holding <host>/agents/<name> [default: AGENTSTATE_ROOT, $XDG_CONFIG_HOME or ~/.config]',
    )
    .addOption(
      new Option(
        '--durability <mode>',
        'SQLite sync mode: full survives power loss (or AGENTSTATE_DURABILITY)',
      ).choices(['full', 'normal']),
    )
    .option(
      '--url <url>',
      'shared store, e.g. postgres://user@host/db (or AGENTSTATE_URL) [default: embedded SQLite]',
    )
    .option('--project <dir>', 'project root that holds the state files [default: current folder]')
    .option('--json', 'print machine-readable JSON')
    .configureHelp({ showGlobalOptions: true })
    .exitOverride()
    // Parse errors are reported by runCli in the one-line error format, not by commander.
    .configureOutput({ outputError: () => {} })
    .addHelpText(
      'after',
      '\nRun `agentstate <Workflow> --help` for one workflow, or see skill/Workflows/.\n' +
        'Exit codes: 0 ok, 1 not found, 2 invalid input, 3 conflict/lease lost, 4 refused, 5 storage unavailable, 10 internal.',
    );

  addWorkCommands(program);
  addWorkerCommand(program);
  addScheduleCommands(program);
  addSetupCommand(program);
  addHookCommand(program);
  addEventCommands(program);
  addStateCommands(program);
  addViewCommands(program);
  addSessionCommands(program);
  addInstanceCommands(program);
  addMcpCommand(program);
  addServeCommand(program);
  addAuthCommands(program);
  addCallCommand(program);
  addRunsCommands(program);
  addWorkflowCommands(program);
  return program;
}

/** The bundle workflows as commands too, so global options may come before a workflow's name. */
function addWorkflowCommands(program: Command): void {
  program.commandsGroup('Bundle workflows (MF_* contract, JSON in and out):');
  program
    .command('workflows')
    .description('list the bundle workflows')
    .action((_o, cmd: Command) => {
      const out = new Output(cmd.optsWithGlobals<GlobalOpts>().json ?? false);
      const rows = WORKFLOW_NAMES.map((n) => ({ name: n, summary: WORKFLOWS[n].summary }));
      out.emit(rows, () => rows.map((r) => `${r.name.padEnd(22)} ${r.summary}`).join('\n'));
    });
  for (const name of WORKFLOW_NAMES) {
    program
      .command(name)
      .description(WORKFLOWS[name].summary)
      .option(
        '-p, --payload <json>',
        'the payload, a JSON object (- reads stdin) [default: MF_TRIGGER_PAYLOAD_JSON or the file MF_TRIGGER_PAYLOAD_FILE names]',
      )
      .action(async (o: { payload?: string }, cmd: Command) => {
        const g = cmd.optsWithGlobals<GlobalOpts & { payload?: string }>();
        const flags: string[] = [];
        for (const key of ['dir', 'name', 'host', 'root', 'durability', 'url'] as const) {
          if (g[key] !== undefined) flags.push(`--${key}`, String(g[key]));
        }
        if (o.payload !== undefined) flags.push('--payload', o.payload);
        process.exitCode = await runWorkflowCommand(name, flags);
      });
  }
}

/** Global options that take a value: the command word is the first argument that is neither. */
const VALUE_OPTIONS = new Set(['--dir', '--name', '--host', '--root', '--durability', '--url', '--project']);

/** The first argument that is not a global option (or its value): the command a run asks for. */
function commandWord(argv: string[]): string | undefined {
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (VALUE_OPTIONS.has(a)) i++;
    else if (!a.startsWith('-')) return a;
  }
  return undefined;
}

/**
 * The program for `argv`: every command, and each kind's operations (which load every kind, about a third of
 * a command's start-up) only when the run names none of the others (a kind's group, `help`, no command).
 */
export async function programFor(argv: string[]): Promise<Command> {
  const program = buildProgram();
  const word = commandWord(argv);
  const known =
    word !== undefined && program.commands.some((c) => c.name() === word || c.aliases().includes(word));
  if (!known) {
    const { addKindCommands } = await import('./kind-commands.js');
    addKindCommands(program);
  }
  return program;
}

/** A command's words from the program down: `agentstate state apply`. */
function commandPath(cmd: Command): string {
  const words: string[] = [];
  for (let c: Command | null = cmd; c !== null; c = c.parent) words.unshift(c.name());
  return words.join(' ');
}

/**
 * What a usage error says. A word after a group that runs its default command when given none (`agentstate
 * runs wrun_1`) is read as an argument of that command; say instead that the group has no such command, and
 * what it has.
 */
function usageMessage(err: CommanderError, failed: Command, argv: string[]): string {
  const group = failed.parent;
  const isDefault =
    group !== null &&
    (group as unknown as { _defaultCommandName?: string })._defaultCommandName === failed.name();
  if (err.code === 'commander.excessArguments' && isDefault && !argv.includes(failed.name())) {
    const word = failed.args[0] ?? '';
    const names = group.commands.map((c) => c.name());
    const show = names.find((n) => n === 'show');
    return `${commandPath(group)} has no command ${JSON.stringify(word)}: its commands are ${names.join(', ')}${
      show ? ` (to show one: ${commandPath(group)} show ${word})` : ''
    } (see ${commandPath(group)} --help)`;
  }
  return `${err.message.replace(/^error: /, '')} (see ${commandPath(failed)} --help)`;
}

/** Runs the CLI with `argv` (without node and script); returns the exit code. */
export async function runCli(argv: string[]): Promise<number> {
  const program = await programFor(argv);
  // Bare `agentstate` asks what the command can do: the help, on stdout, exit 0.
  if (argv.length === 0) {
    program.outputHelp();
    return 0;
  }
  const wantsJson = argv.includes('--json');
  // The command whose parse failed (an unknown option, a missing argument): the error points at its help.
  let failed: Command = program;
  const noteFailures = (cmd: Command): void => {
    cmd.exitOverride((err) => {
      failed = cmd;
      throw err;
    });
    for (const sub of cmd.commands) noteFailures(sub);
  };
  noteFailures(program);
  try {
    await program.parseAsync(argv, { from: 'user' });
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (err) {
    if (err instanceof CommanderError) {
      // Help and version output were already printed by commander. Help it printed because a group was
      // given without its command (`agentstate state`) is a usage error: exit 2, never commander's 1 (which
      // means "not found" here).
      if (err.exitCode === 0 || err.code === 'commander.help' || err.code === 'commander.helpDisplayed') {
        return err.exitCode === 0 ? 0 : EXIT_CODES.INVALID_INPUT;
      }
      const message = usageMessage(err, failed, argv);
      process.stderr.write(
        wantsJson
          ? `${JSON.stringify({ error: { code: 'INVALID_INPUT', message } })}\n`
          : `agentstate: ${message} [INVALID_INPUT]\n`,
      );
      return EXIT_CODES.INVALID_INPUT;
    }
    const e = toAgentStateError(
      err instanceof InvalidArgumentError ? new InvalidInputError(err.message) : inEdgeTerms(err),
    );
    if (wantsJson) process.stderr.write(`${JSON.stringify({ error: e.toJSON() })}\n`);
    else {
      process.stderr.write(`agentstate: ${e.message} [${e.code}]\n`);
      if (e.code === 'INTERNAL' && err instanceof Error && process.env.AGENTSTATE_DEBUG)
        process.stderr.write(`${err.stack}\n`);
    }
    return EXIT_CODES[e.code];
  }
}
