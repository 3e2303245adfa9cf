// `agentstate hook <event>`: a coding-agent host's hook as a command. Reads the host's hook JSON on stdin,
// acts on the project's store (src/hosts/hooks/run.ts) and answers in the host's format on stdout. Taken on a
// lean path (no CLI framework), since a host waits for it at every lifecycle moment. It never blocks or
// breaks the host: any failure is a warning (stderr, and for Claude Code a systemMessage the user sees)
// with exit 0, and nothing half-written; --strict makes it the documented exit code instead.
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { ErrorCode } from '../errors.js';
import type { HookEvent, HookFormat } from '../hosts/hooks/input.js';

const USAGE = `Usage: agentstate hook <event> [options]

Run a coding-agent host's hook: reads the host's hook JSON on stdin, acts on the project's store, answers in
the host's format. \`agentstate setup claude-code\` (or codex) writes the hook entries that call it.

Events:
  session-start    SessionStart: the plan, held work and open decisions as additional context
  pre-compact      PreCompact: the transcript's last todo list into the store before the context is cut
  post-tool-use    PostToolUse on TodoWrite, TaskCreate, TaskUpdate (update_plan): the list mirrored
  subagent-start   SubagentStart: a delegation opened; the sub-agent told its worker id
  subagent-stop    SubagentStop: the delegation closed; leases the sub-agent still holds released
  stop             Stop: the transcript's last list reconciled; dashboard.md regenerated

Options:
  --format <host>  the host's hook format: claude-code or codex [default: claude-code]
  --dir <path>     the store folder [default: the nearest .agentstate at or above the hook's cwd]
  --url <url>      a shared PostgreSQL store (or AGENTSTATE_URL), with --name
  --name <name>    the instance name on a shared store
  --strict         fail with the documented exit code instead of warning with exit 0
  --json           print what the hook did as JSON (for testing hooks by hand)
  -h, --help       display help for command

Never blocks the host: a failure is a warning and exit 0 unless --strict. See docs/hosts.md.
`;

/** The nearest `.agentstate` store at or above `cwd` (a session may start in a sub-folder of the project). */
function findStore(cwd: string): string | undefined {
  for (let d = resolve(cwd); ; d = dirname(d)) {
    const dir = join(d, '.agentstate');
    if (existsSync(join(dir, 'state.sqlite'))) return dir;
    if (dirname(d) === d) return undefined;
  }
}

/** Runs `agentstate hook …` with the arguments after `hook`; returns the exit code. */
export async function runHookCommand(argv: string[]): Promise<number> {
  let strict = false;
  let format: HookFormat = 'claude-code';
  let event = argv[0] ?? '?';
  try {
    const { HOOK_EVENTS, HOOK_FORMATS, parseHookPayload } = await import('../hosts/hooks/input.js');
    const { InvalidInputError, NotFoundError } = await import('../errors.js');
    const { values, positionals } = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        format: { type: 'string' },
        dir: { type: 'string' },
        url: { type: 'string' },
        name: { type: 'string' },
        strict: { type: 'boolean' },
        json: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: false,
    });
    strict = values.strict === true;
    if (values.help) {
      process.stdout.write(USAGE);
      return 0;
    }
    const unknown = Object.keys(values).filter(
      (k) => !['format', 'dir', 'url', 'name', 'strict', 'json', 'help'].includes(k),
    );
    if (unknown.length > 0)
      throw new InvalidInputError(`hook: unknown option --${unknown[0]} (see agentstate hook --help)`);
    event = positionals[0] ?? '';
    if (!(HOOK_EVENTS as readonly string[]).includes(event) || positionals.length > 1) {
      throw new InvalidInputError(
        `hook: the event must be one of ${HOOK_EVENTS.join(', ')}, got ${JSON.stringify(positionals.join(' '))}`,
        { field: 'event' },
      );
    }
    const f = (values.format as string | undefined) ?? 'claude-code';
    if (!(HOOK_FORMATS as readonly string[]).includes(f)) {
      throw new InvalidInputError(`hook: --format must be one of ${HOOK_FORMATS.join(', ')}`, {
        field: 'format',
      });
    }
    format = f as HookFormat;
    const { readCapped, decodeUtf8 } = await import('../core/text-input.js');
    const text = decodeUtf8(await readCapped(process.stdin, 'stdin', { field: 'stdin' }), 'stdin', 'stdin');
    const payload = parseHookPayload(text, event as HookEvent, format);
    const url = (values.url as string | undefined) || process.env.AGENTSTATE_URL || undefined;
    let dir = values.dir as string | undefined;
    if (dir === undefined && !url) {
      if (!payload.cwd) {
        throw new InvalidInputError('hook: no store: pass --dir, or a hook JSON with the cwd of the project');
      }
      dir = findStore(payload.cwd) ?? join(payload.cwd, '.agentstate');
    }
    if (dir !== undefined && !url && !existsSync(join(dir, 'state.sqlite'))) {
      throw new NotFoundError(
        `hook: no agentstate store at ${dir}: run \`agentstate setup ${format}\` in the project (nothing was written)`,
      );
    }
    const { openInstance } = await import('../instance/instance.js');
    const inst = await openInstance({
      create: false,
      ...(dir !== undefined ? { dir } : {}),
      ...(url ? { url, ...(values.name ? { name: values.name as string } : {}) } : {}),
    });
    let warned: ErrorCode | undefined;
    try {
      const { runHook, hostFolder } = await import('../hosts/hooks/run.js');
      // A transcript is read only in the host's own folder or the project (the store's folder's parent).
      const project = dir !== undefined ? dirname(resolve(dir)) : payload.cwd;
      const outcome = await runHook(inst, payload, {
        transcriptRoots: [hostFolder(format), ...(project ? [resolve(project)] : [])],
      });
      for (const w of outcome.warnings ?? []) {
        warned ??= w.code;
        process.stderr.write(`agentstate hook ${event}: ${w.message} [${w.code}]\n`);
      }
      const first = outcome.warnings?.[0];
      const output =
        first && format === 'claude-code' && !strict
          ? {
              ...outcome.output,
              systemMessage: `agentstate hook ${event}: ${first.message} [${first.code}] (the session goes on)`,
            }
          : outcome.output;
      if (values.json) {
        process.stdout.write(`${JSON.stringify({ event, format, ...outcome })}\n`);
      } else if (output) {
        process.stdout.write(`${JSON.stringify(output)}\n`);
      }
    } finally {
      await inst.close();
    }
    if (strict && warned) {
      const { EXIT_CODES } = await import('../errors.js');
      return EXIT_CODES[warned];
    }
    return 0;
  } catch (err) {
    const { toAgentStateError, EXIT_CODES } = await import('../errors.js');
    const e = toAgentStateError(err);
    const message = `agentstate hook ${event}: ${e.message} [${e.code}]`;
    process.stderr.write(`${message}\n`);
    if (strict) return EXIT_CODES[e.code];
    // Claude Code shows a systemMessage to the user; the hook itself succeeded as far as the host cares.
    if (format === 'claude-code') {
      process.stdout.write(`${JSON.stringify({ systemMessage: `${message} (the session goes on)` })}\n`);
    }
    return 0;
  }
}
