// `agentstate enqueue | claim | heartbeat | resolve | release | cancel | park | unpark | retry | get | list |
// annotate | replay`: the work-item operations of the service table, with flags and one-line output.
import { type Command, Option } from 'commander';
import { parseJsonInput } from '../core/input.js';
import { ACTOR_KINDS, type WorkItem } from '../core/types.js';
import { duration, given, int, json, list, runCommand } from './context.js';
import { formatItem } from './format.js';

const items = (list: WorkItem[], empty: string) =>
  list.length === 0 ? empty : list.map((i) => formatItem(i)).join('\n');

export function addWorkCommands(program: Command): void {
  program.commandsGroup('Work items:');

  program
    .command('enqueue <title>')
    .description('add a work item')
    .option('-k, --kind <kind>', 'item kind (workers can claim by kind)')
    .option('-p, --priority <n>', 'higher is claimed first [default: 0]', int('--priority'))
    .option('--payload <json>', 'JSON payload', json('--payload'))
    .option('--key <key>', 'idempotency key: a retried enqueue returns the existing item')
    .option('-b, --blocked-by <ids>', 'ids that must be done first (comma-separated or repeated)', list)
    .option('--not-before <time>', 'not claimable before this ISO-8601 time, or this long from now (e.g. 5m)')
    .option(
      '--max-attempts <n>',
      'attempts before an expiring lease fails the item [default: 3]',
      int('--max-attempts'),
    )
    .option('--waiting-human', 'start parked for a human decision')
    .addOption(
      new Option(
        '--on-blocker-failure <policy>',
        'when a blocker ends failed or cancelled: wait (reported blocked on the failure) or cascade (cancelled with it) [default: wait]',
      ).choices(['wait', 'cascade']),
    )
    .action((title: string, o, cmd: Command) =>
      runItem(cmd, 'enqueue', {
        title,
        ...given('kind', o.kind),
        ...given('priority', o.priority),
        ...given('payload', o.payload),
        ...given('idempotency_key', o.key),
        ...given('blocked_by', o.blockedBy),
        ...given('not_before', o.notBefore),
        ...given('max_attempts', o.maxAttempts),
        ...(o.waitingHuman ? { waiting_human: true } : {}),
        ...given('on_blocker_failure', o.onBlockerFailure),
      }),
    );

  program
    .command('claim')
    .description('claim the highest-priority ready item under a lease (prints nothing-ready when none)')
    .option('-w, --worker <id>', 'lease owner [default: the agent name]')
    .option('-l, --lease <duration>', 'lease length, e.g. 30s, 5m [default: 60s]', duration('--lease'))
    .option('-k, --kind <kind>', 'only items of this kind')
    .option('--id <id>', 'claim this item if it is ready')
    .option('-n, --limit <n>', 'claim up to n items at once', int('--limit'))
    .action(async (o, cmd: Command) => {
      const input = {
        ...given('worker', o.worker),
        ...given('lease_ms', o.lease),
        ...given('kind', o.kind),
        ...given('id', o.id),
      };
      if (o.limit !== undefined) {
        await runCommand<WorkItem[]>(cmd, 'claim_many', { ...input, limit: o.limit }, (r) =>
          items(r, 'nothing ready'),
        );
      } else {
        await runCommand<WorkItem | null>(cmd, 'claim', input, (item) =>
          item ? formatItem(item) : 'nothing ready',
        );
      }
    });

  program
    .command('heartbeat <id>')
    .description('extend your lease on an item')
    .option('-w, --worker <id>', 'lease owner [default: the agent name]')
    .option('-l, --lease <duration>', 'new lease length from now [default: 60s]', duration('--lease'))
    .option('--attempt <n>', 'fencing token: the attempt number your claim returned', int('--attempt'))
    .action((id: string, o, cmd: Command) =>
      runItem(cmd, 'heartbeat', {
        id,
        ...given('worker', o.worker),
        ...given('lease_ms', o.lease),
        ...given('attempt', o.attempt),
      }),
    );

  program
    .command('resolve <id> <status>')
    .description('finish an item you hold: status is done or failed')
    .option('-w, --worker <id>', 'lease owner [default: the agent name]')
    .option('--result <json>', 'JSON result', json('--result'))
    .option('-e, --error <message>', 'why it failed')
    .option('--attempt <n>', 'fencing token: the attempt number your claim returned', int('--attempt'))
    .option('--actor <name>', 'who resolves an item waiting for a human (who answered a decision)')
    .addOption(
      new Option('--actor-kind <kind>', 'human answers a decision a document asked for').choices([
        ...ACTOR_KINDS,
      ]),
    )
    .action((id: string, status: string, o, cmd: Command) =>
      runItem(cmd, 'resolve', {
        id,
        status,
        ...given('worker', o.worker),
        ...given('result', o.result),
        ...given('error', o.error),
        ...given('attempt', o.attempt),
        ...by(o),
      }),
    );

  program
    .command('release <id>')
    .description('hand an item you hold back to the queue without spending the attempt')
    .option('-w, --worker <id>', 'lease owner [default: the agent name]')
    .option('--attempt <n>', 'fencing token: the attempt number your claim returned', int('--attempt'))
    .option('--actor <name>', 'who hands it back, when not the worker (a person releasing a stuck lease)')
    .addOption(actorKindOption())
    .action((id: string, o, cmd: Command) =>
      runItem(cmd, 'release', { id, ...given('worker', o.worker), ...given('attempt', o.attempt), ...by(o) }),
    );

  for (const [name, description] of [
    ['cancel', 'cancel an unfinished item'],
    ['park', 'park a pending item for a human (waiting_human)'],
    ['unpark', 'return an item a human decided on to the queue'],
  ] as const) {
    program
      .command(`${name} <id>`)
      .description(description)
      .option('-r, --reason <text>', 'why')
      .option('--actor <name>', 'who does it [default: the agent name]')
      .addOption(actorKindOption('a human decision a document asked for is cancelled by a human only'))
      .action((id: string, o, cmd: Command) =>
        runItem(cmd, name, { id, ...given('reason', o.reason), ...by(o) }),
      );
  }

  program
    .command('retry <ids...>')
    .description(
      'put failed or cancelled items back to pending with a fresh attempt budget (several: one transaction, all or none)',
    )
    .option('-r, --reason <text>', 'why (kept in the history)')
    .option('--actor <name>', 'who retries [default: the agent name]')
    .addOption(
      actorKindOption('a human asks a cancelled decision a document asked for again (one id at a time)'),
    )
    .action((ids: string[], o, cmd: Command) =>
      ids.length === 1
        ? runItem(cmd, 'retry', { id: ids[0], ...given('reason', o.reason), ...by(o) })
        : runCommand<WorkItem[]>(cmd, 'retry_many', { ids, ...given('reason', o.reason), ...by(o) }, (r) =>
            items(r, 'nothing retried'),
          ),
    );

  program
    .command('get <id>')
    .description('show one work item (exit 1 when there is none)')
    .action((id: string, _o, cmd: Command) =>
      runCommand<WorkItem>(
        cmd,
        'get_item',
        { id },
        (item) =>
          `${formatItem(item)}\n${JSON.stringify({ payload: item.payload, notes: item.notes, result: item.result }, null, 2)}`,
      ),
    );

  program
    .command('list')
    .description('list work items in claim order')
    .option('-s, --status <status>', 'only this status (repeatable, comma-separated)', list)
    .option('-k, --kind <kind>', 'only this kind')
    .option('--ready', 'only items claimable now')
    .option('--blocked', 'only pending items still blocked or scheduled later')
    .option('--blocked-on-failure', 'only pending items blocked on a failed or cancelled blocker')
    .option('-n, --limit <n>', 'at most n items [default: 100]', int('--limit'))
    .action((o, cmd: Command) =>
      runCommand<WorkItem[]>(
        cmd,
        'list_items',
        {
          ...given('status', o.status),
          ...given('kind', o.kind),
          ...(o.ready ? { ready: true } : o.blocked ? { ready: false } : {}),
          ...(o.blockedOnFailure ? { blocked_on_failure: true } : {}),
          ...given('limit', o.limit),
        },
        (r) => items(r, 'no items'),
      ),
    );

  program
    .command('annotate <id> <notes-json>')
    .description("merge a JSON object into an item's notes (a null value removes a key)")
    .action((id: string, notes: string, _o, cmd: Command) =>
      runCommand<WorkItem>(
        cmd,
        'annotate',
        { id, notes: parseJsonInput(notes, 'notes') },
        (item) => `${formatItem(item)}\nnotes: ${JSON.stringify(item.notes)}`,
      ),
    );

  program
    .command('replay')
    .description('reclaim expired leases and re-emit every unfinished item (ReplayPending)')
    .action((_o, cmd: Command) =>
      runCommand<WorkItem[]>(cmd, 'replay', {}, (r) => items(r, 'nothing unfinished')),
    );
}

/** Runs a work-item operation that answers one item, and prints it on one line. */
function runItem(cmd: Command, op: string, input: Record<string, unknown>): Promise<void> {
  return runCommand<WorkItem>(cmd, op, input, (item) => formatItem(item));
}

/** `--actor-kind`: what the item's event records of who acted (human, model, tool or system). */
function actorKindOption(more?: string): Option {
  return new Option(
    '--actor-kind <kind>',
    `who acts: a person, a model, a tool or the system [default: system]${more ? `; ${more}` : ''}`,
  ).choices([...ACTOR_KINDS]);
}

/** The --actor and --actor-kind a command was given. */
function by(o: { actor?: string; actorKind?: string }): Record<string, unknown> {
  return { ...given('actor', o.actor), ...given('actor_kind', o.actorKind) };
}
