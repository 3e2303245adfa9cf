// The agentstate command set (commander): friendly commands over the same service API as the workflows.
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { parseJsonInput } from '../core/input.js';
import type { JsonObject, WorkItem, WorkItemStatus } from '../core/types.js';
import { EXIT_CODES, InvalidInputError, toAgentStateError } from '../errors.js';
import { scaffold } from '../instance/scaffold.js';
import { regenerateDashboard } from '../reports/dashboard.js';
import { retrospective } from '../reports/retro.js';
import { WORKFLOW_NAMES, WORKFLOWS } from '../workflows/registry.js';
import { duration, type GlobalOpts, int, json, list, Output, timeOrOffset, withInstance } from './context.js';
import { formatEvent, formatItem, formatVerify } from './format.js';
import { addInstanceCommands } from './instance-commands.js';
import { addSessionCommands } from './session-commands.js';
import { addStateCommands } from './state-commands.js';
import { addViewCommands } from './view-commands.js';

function items(out: Output, list: WorkItem[], empty: string): void {
  out.emit(list, () => (list.length === 0 ? empty : list.map((i) => formatItem(i)).join('\n')));
}

export function buildProgram(): Command {
  const program = new Command('agentstate')
    .description(
      'Durable, versioned, conflict-safe state for AI agents: leased work items and a tamper-evident event log.\n' +
        'The instance comes from --dir, or --name/--host/--root, or MF_INSTANCE_DIR / MF_AGENT_NAME / MF_HOST.',
    )
    .version('0.1.0')
    .option('--dir <path>', 'the instance folder itself (like MF_INSTANCE_DIR)')
    .option('--name <name>', 'agent name (like MF_AGENT_NAME)')
    .option('--host <host>', 'host name (like MF_HOST) [default: this machine]')
    .option('--root <path>', 'folder holding <host>/agents/<name> [default: ~/.config or AGENTSTATE_ROOT]')
    .addOption(
      new Option('--durability <mode>', 'SQLite sync mode: full survives power loss').choices([
        'full',
        'normal',
      ]),
    )
    .option(
      '--url <url>',
      'shared store, e.g. postgres://user@host/db (or AGENTSTATE_URL) [default: embedded SQLite]',
    )
    .option('--json', 'print machine-readable JSON')
    .exitOverride()
    // Parse errors are reported by runCli in the one-line error format, not by commander.
    .configureOutput({ outputError: () => {} })
    .addHelpText(
      'after',
      `\nWorkflows (MF_* contract, JSON in/out): ${WORKFLOW_NAMES.join(', ')}\n` +
        'Run `agentstate <Workflow> --help` for one, or see skill/Workflows/.\n' +
        'Exit codes: 0 ok, 1 not found, 2 invalid input, 3 conflict/lease lost, 4 refused, 5 storage unavailable, 10 internal.',
    );

  program
    .command('init')
    .description('create the instance layout and database (ScaffoldFolders)')
    .action(async (_o, cmd: Command) =>
      withInstance(
        cmd,
        async (inst, out) => {
          const r = scaffold(inst);
          await regenerateDashboard(inst);
          out.emit(
            r,
            () =>
              `instance ${r.name}@${r.host} at ${r.instance_dir}${r.created.length ? ` (created ${r.created.join(', ')})` : ' (already there)'}`,
          );
        },
        { create: true },
      ),
    );

  program
    .command('enqueue <title>')
    .description('add a work item')
    .option('-k, --kind <kind>', 'item kind (workers can claim by kind)')
    .option('-p, --priority <n>', 'higher is claimed first [default: 0]', int('priority'))
    .option('--payload <json>', 'JSON payload', json('--payload'))
    .option('--key <key>', 'idempotency key: a retried enqueue returns the existing item')
    .option('-b, --blocked-by <ids>', 'ids that must be done first (comma-separated or repeated)', list)
    .option(
      '--not-before <time>',
      'not claimable before this ISO-8601 time, or this long from now (e.g. 5m)',
      timeOrOffset('--not-before'),
    )
    .option(
      '--max-attempts <n>',
      'attempts before an expiring lease fails the item [default: 3]',
      int('max-attempts'),
    )
    .option('--waiting-human', 'start parked for a human decision')
    .action(async (title: string, o, cmd: Command) =>
      withInstance(cmd, async (inst, out) => {
        const item = await inst.work.enqueue({
          title,
          ...(o.kind !== undefined && { kind: o.kind }),
          ...(o.priority !== undefined && { priority: o.priority }),
          ...(o.payload !== undefined && { payload: o.payload }),
          ...(o.key !== undefined && { idempotency_key: o.key }),
          ...(o.blockedBy !== undefined && { blocked_by: o.blockedBy }),
          ...(o.notBefore !== undefined && { not_before: o.notBefore }),
          ...(o.maxAttempts !== undefined && { max_attempts: o.maxAttempts }),
          ...(o.waitingHuman && { waiting_human: true }),
        });
        out.emit(item, () => formatItem(item));
      }),
    );

  program
    .command('claim')
    .description('claim the highest-priority ready item under a lease (prints nothing-ready when none)')
    .option('-w, --worker <id>', 'lease owner [default: the agent name]')
    .option('-l, --lease <duration>', 'lease length, e.g. 30s, 5m [default: 60s]', duration('--lease'))
    .option('-k, --kind <kind>', 'only items of this kind')
    .option('--id <id>', 'claim this item if it is ready')
    .option('-n, --limit <n>', 'claim up to n items at once', int('limit'))
    .action(async (o, cmd: Command) =>
      withInstance(cmd, async (inst, out) => {
        const input = {
          ...(o.worker !== undefined && { worker: o.worker }),
          ...(o.lease !== undefined && { lease_ms: o.lease }),
          ...(o.kind !== undefined && { kind: o.kind }),
          ...(o.id !== undefined && { id: o.id }),
        };
        if (o.limit !== undefined)
          items(out, await inst.work.claimMany({ ...input, limit: o.limit }), 'nothing ready');
        else {
          const item = await inst.work.claim(input);
          out.emit(item, () => (item ? formatItem(item) : 'nothing ready'));
        }
      }),
    );

  program
    .command('heartbeat <id>')
    .description('extend your lease on an item')
    .option('-w, --worker <id>', 'lease owner [default: the agent name]')
    .option('-l, --lease <duration>', 'new lease length from now [default: 60s]', duration('--lease'))
    .option('--attempt <n>', 'fencing token: the attempt number your claim returned', int('attempt'))
    .action(async (id: string, o, cmd: Command) =>
      withInstance(cmd, async (inst, out) => {
        const item = await inst.work.heartbeat({
          id,
          ...(o.worker !== undefined && { worker: o.worker }),
          ...(o.lease !== undefined && { lease_ms: o.lease }),
          ...(o.attempt !== undefined && { attempt: o.attempt }),
        });
        out.emit(item, () => formatItem(item));
      }),
    );

  program
    .command('resolve <id> <status>')
    .description('finish an item you hold: status is done or failed')
    .option('-w, --worker <id>', 'lease owner [default: the agent name]')
    .option('--result <json>', 'JSON result', json('--result'))
    .option('-e, --error <message>', 'why it failed')
    .option('--attempt <n>', 'fencing token: the attempt number your claim returned', int('attempt'))
    .option('--actor <name>', 'who resolves an item waiting for a human (who answered a decision)')
    .addOption(
      new Option('--actor-kind <kind>', 'human answers a decision a document asked for').choices([
        'human',
        'model',
        'tool',
        'system',
      ]),
    )
    .action(async (id: string, status: string, o, cmd: Command) =>
      withInstance(cmd, async (inst, out) => {
        const item = await inst.work.resolve({
          id,
          status: status as 'done' | 'failed',
          ...(o.worker !== undefined && { worker: o.worker }),
          ...(o.result !== undefined && { result: o.result }),
          ...(o.error !== undefined && { error: o.error }),
          ...(o.attempt !== undefined && { attempt: o.attempt }),
          ...(o.actor !== undefined && { actor: o.actor }),
          ...(o.actorKind !== undefined && { actor_kind: o.actorKind }),
        });
        out.emit(item, () => formatItem(item));
      }),
    );

  program
    .command('release <id>')
    .description('hand an item you hold back to the queue without spending the attempt')
    .option('-w, --worker <id>', 'lease owner [default: the agent name]')
    .action(async (id: string, o, cmd: Command) =>
      withInstance(cmd, async (inst, out) => {
        const item = await inst.work.release({ id, ...(o.worker !== undefined && { worker: o.worker }) });
        out.emit(item, () => formatItem(item));
      }),
    );

  for (const [name, verb, description] of [
    ['cancel', 'cancel', 'cancel an unfinished item'],
    ['park', 'park', 'park a pending item for a human (waiting_human)'],
    ['unpark', 'unpark', 'return an item a human decided on to the queue'],
  ] as const) {
    program
      .command(`${name} <id>`)
      .description(description)
      .option('-r, --reason <text>', 'why')
      .action(async (id: string, o, cmd: Command) =>
        withInstance(cmd, async (inst, out) => {
          const item = await inst.work[verb]({ id, ...(o.reason !== undefined && { reason: o.reason }) });
          out.emit(item, () => formatItem(item));
        }),
      );
  }

  program
    .command('get <id>')
    .description('show one work item (exit 1 when there is none)')
    .action(async (id: string, _o, cmd: Command) =>
      withInstance(cmd, async (inst, out) => {
        const item = await inst.work.get(id);
        out.emit(
          item,
          () =>
            `${formatItem(item)}\n${JSON.stringify({ payload: item.payload, notes: item.notes, result: item.result }, null, 2)}`,
        );
      }),
    );

  program
    .command('list')
    .description('list work items in claim order')
    .option('-s, --status <status>', 'only this status (repeatable, comma-separated)', list)
    .option('-k, --kind <kind>', 'only this kind')
    .option('--ready', 'only items claimable now')
    .option('--blocked', 'only pending items still blocked or scheduled later')
    .option('-n, --limit <n>', 'at most n items [default: 100]', int('limit'))
    .action(async (o, cmd: Command) =>
      withInstance(cmd, async (inst, out) => {
        const result = await inst.work.list({
          ...(o.status !== undefined && { status: o.status as WorkItemStatus[] }),
          ...(o.kind !== undefined && { kind: o.kind }),
          ...(o.ready ? { ready: true } : o.blocked ? { ready: false } : {}),
          ...(o.limit !== undefined && { limit: o.limit }),
        });
        items(out, result, 'no items');
      }),
    );

  program
    .command('annotate <id> <notes-json>')
    .description("merge a JSON object into an item's notes (a null value removes a key)")
    .action(async (id: string, notes: string, _o, cmd: Command) =>
      withInstance(cmd, async (inst, out) => {
        const item = await inst.work.annotate({ id, notes: parseJsonInput(notes, 'notes') as JsonObject });
        out.emit(item, () => `${formatItem(item)}\nnotes: ${JSON.stringify(item.notes)}`);
      }),
    );

  program
    .command('append <type>')
    .description('append an event to the log')
    .option('-d, --data <json>', 'JSON data', json('--data'))
    .option('-s, --stream <stream>', 'stream [default: instance, or the work item stream with --item]')
    .option('-i, --item <id>', 'work item the event is about')
    .option('--correlation <id>', 'correlation id')
    .option('--causation <id>', 'causation id')
    .action(async (type: string, o, cmd: Command) =>
      withInstance(cmd, async (inst, out) => {
        const e = await inst.events.append({
          type,
          ...(o.data !== undefined && { data: o.data }),
          ...(o.stream !== undefined && { stream: o.stream }),
          ...(o.item !== undefined && { work_item_id: o.item }),
          ...(o.correlation !== undefined && { correlation_id: o.correlation }),
          ...(o.causation !== undefined && { causation_id: o.causation }),
        });
        out.emit(e, () => formatEvent(e));
      }),
    );

  program
    .command('events')
    .description('read the event log (by position, stream, type, item, time); --follow tails it')
    .option('--after <n>', 'events after this position', int('after'))
    .option('--until <n>', 'events up to this position', int('until'))
    .option('-s, --stream <stream>', 'only this stream')
    .option('-t, --type <type>', 'only these types (repeatable, comma-separated)', list)
    .option('-i, --item <id>', 'only events of this work item')
    .option('--since <time>', 'ISO time or duration ago, e.g. 1h')
    .option('--before <time>', 'ISO time or duration ago')
    .option('-n, --limit <n>', 'at most n events [default: 100]', int('limit'))
    .option('-f, --follow', 'keep printing new events until interrupted')
    .action(async (o, cmd: Command) =>
      withInstance(cmd, async (inst, out) => {
        const q = {
          ...(o.after !== undefined && { after: o.after }),
          ...(o.stream !== undefined && { stream: o.stream }),
          ...(o.type !== undefined && { type: o.type }),
          ...(o.item !== undefined && { work_item_id: o.item }),
          ...(o.since !== undefined && { since: o.since }),
          ...(o.before !== undefined && { before: o.before }),
        };
        if (o.follow) {
          const ac = new AbortController();
          process.once('SIGINT', () => ac.abort());
          process.once('SIGTERM', () => ac.abort());
          for await (const e of inst.events.tail({ ...q, signal: ac.signal })) {
            process.stdout.write(out.json ? `${JSON.stringify(e)}\n` : `${formatEvent(e)}\n`);
          }
          return;
        }
        const events = await inst.events.read({
          ...q,
          ...(o.until !== undefined && { until: o.until }),
          limit: o.limit ?? 100,
        });
        out.emit(events, () => (events.length === 0 ? 'no events' : events.map(formatEvent).join('\n')));
      }),
    );

  program
    .command('verify')
    .description(
      'check the event hash chain, and documents and work items against it; exit 3 and list the problems if tampered',
    )
    .option(
      '--head <position:hash>',
      'a head printed earlier by verify, instance export or the dashboard: also report any rewrite of the log up to it',
    )
    .action(async (o: { head?: string }, cmd: Command) =>
      withInstance(cmd, async (inst, out) => {
        const tty = process.stderr.isTTY === true;
        const r = await inst.events.verify({
          ...(o.head !== undefined && { head: o.head }),
          ...(tty && { onProgress: (n: number) => process.stderr.write(`\rverifying: ${n} events…`) }),
        });
        if (tty && r.checked.events >= 10_000) process.stderr.write('\r\x1b[K');
        out.emit(r, () => formatVerify(r));
        if (!r.ok) process.exitCode = EXIT_CODES.INTEGRITY_VIOLATION;
      }),
    );

  program
    .command('replay')
    .description('reclaim expired leases and re-emit every unfinished item (ReplayPending)')
    .action(async (_o, cmd: Command) =>
      withInstance(cmd, async (inst, out) =>
        items(out, await inst.work.replayPending(), 'nothing unfinished'),
      ),
    );

  program
    .command('dashboard')
    .description('rewrite dashboard.md from the store (RegenerateDashboard)')
    .action(async (_o, cmd: Command) =>
      withInstance(cmd, async (inst, out) => {
        const r = await regenerateDashboard(inst);
        out.emit(r, () => `${r.path} (at event #${r.position})`);
      }),
    );

  program
    .command('retro')
    .description('write a retrospective of a time window to retros/ (RetrospectiveSummary)')
    .option('--since <time>', 'ISO time or duration ago [default: 24h]')
    .option('--until <time>', 'ISO time or duration ago [default: now]')
    .action(async (o, cmd: Command) =>
      withInstance(cmd, async (inst, out) => {
        const r = await retrospective(inst, {
          ...(o.since !== undefined && { since: o.since }),
          ...(o.until !== undefined && { until: o.until }),
        });
        out.emit(
          r,
          () =>
            `${r.path}\n${r.summary.done} done, ${r.summary.failed} failed, ${r.summary.retried_items} retried`,
        );
      }),
    );

  program
    .command('workflows')
    .description('list the bundle workflows')
    .action(async (_o, cmd: Command) => {
      const out = new Output(cmd.optsWithGlobals<GlobalOpts>().json ?? false);
      const rows = WORKFLOW_NAMES.map((n) => ({ name: n, summary: WORKFLOWS[n].summary }));
      out.emit(rows, () => rows.map((r) => `${r.name.padEnd(22)} ${r.summary}`).join('\n'));
    });

  addStateCommands(program);
  addInstanceCommands(program);
  addViewCommands(program);
  addSessionCommands(program);
  return program;
}

/** Runs the CLI with `argv` (without node and script); returns the exit code. */
export async function runCli(argv: string[]): Promise<number> {
  const program = buildProgram();
  const wantsJson = argv.includes('--json');
  try {
    await program.parseAsync(argv, { from: 'user' });
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (err) {
    if (err instanceof CommanderError) {
      // Help and version output were already printed by commander.
      if (err.exitCode === 0 || err.code === 'commander.help' || err.code === 'commander.helpDisplayed') {
        return err.exitCode;
      }
      const message = `${err.message.replace(/^error: /, '')} (see agentstate --help)`;
      process.stderr.write(
        wantsJson
          ? `${JSON.stringify({ error: { code: 'INVALID_INPUT', message } })}\n`
          : `agentstate: ${message} [INVALID_INPUT]\n`,
      );
      return EXIT_CODES.INVALID_INPUT;
    }
    const e = toAgentStateError(
      err instanceof InvalidArgumentError ? new InvalidInputError(err.message) : err,
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
