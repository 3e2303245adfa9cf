// `agentstate enqueue | claim | heartbeat | resolve | release | cancel | park | unpark | retry | get | list |
// annotate | replay` and `agentstate limit set | list | remove`: the work-item operations of the table as
// commands (flags from their input schemas), each item printed on one line.
import type { Command } from 'commander';
import type { RunRecord, SignalRecord } from '../core/codecs/run-records.js';
import type { WorkItem, WorkLimit } from '../core/types.js';
import { rate } from './context.js';
import { formatItem, formatLimit, formatRecord } from './format.js';
import { addCommands, type CliCommand, command } from './generate.js';

const items = (list: WorkItem[], empty: string) =>
  list.length === 0 ? empty : list.map((i) => formatItem(i)).join('\n');

/**
 * A command on one or several items (`<op> <ids...>`): one id runs `op`, several run `many` in one
 * transaction, all of them or none.
 */
const manyCommand = (op: string, many: string, what: string, none: string) =>
  command<WorkItem | WorkItem[]>({
    usage: `${op} <ids...>`,
    op: many,
    description: `${what} (several: one transaction, all or none)`,
    route: ({ ids, ...rest }) =>
      (ids as string[]).length === 1
        ? { op, input: { id: (ids as string[])[0], ...rest } }
        : { op: many, input: { ids, ...rest } },
    human: (r) => (Array.isArray(r) ? items(r, none) : formatItem(r)),
  });

/** A command that changes one item and prints it. */
const itemCommand = (c: Omit<CliCommand<WorkItem>, 'human'>) =>
  command<WorkItem>({ ...c, human: (i) => formatItem(i) });

/** `agentstate signal`: a signal to an item whose durable run waits (or will wait) for it. */
const SIGNAL_COMMAND = command<SignalRecord>({
  usage: 'signal <id> <name>',
  op: 'signal',
  description: "send a signal to an item: its durable run's waitFor(<name>) takes it and goes on",
  human: (s) => `signal ${JSON.stringify(s.name)} sent (event #${s.position})`,
});

export const WORK_COMMANDS = [
  itemCommand({
    usage: 'enqueue <title>',
    op: 'enqueue',
    flags: { kind: { short: 'k', help: 'item kind (workers can claim by kind)' } },
  }),
  command<WorkItem | WorkItem[] | null>({
    usage: 'claim',
    op: 'claim_many',
    description: 'claim the highest-priority ready item under a lease (prints nothing-ready when none)',
    flags: {
      limit: { short: 'n', help: 'claim up to n items at once (prints a list)' },
      key: { help: 'hold a name as a lock, e.g. path:src/a.ts (made on first use; release it when done)' },
    },
    // One item unless --limit asks for several: claim answers an item or null, claim_many a list.
    route: (input) => ({ op: input.limit === undefined ? 'claim' : 'claim_many', input }),
    human: (r) => (Array.isArray(r) ? items(r, 'nothing ready') : r ? formatItem(r) : 'nothing ready'),
  }),
  itemCommand({ usage: 'heartbeat <id>', op: 'heartbeat' }),
  itemCommand({
    usage: 'resolve <id> <status>',
    op: 'resolve',
    flags: {
      actor: { help: 'who resolves an item waiting for a human (who answered a decision)' },
      retry_at: {
        help: 'with failed: try again not before this time or duration (e.g. 30s) while attempts remain',
      },
    },
  }),
  itemCommand({
    usage: 'release <id>',
    op: 'release',
    flags: { actor: { help: 'who hands it back, when not the worker (a person releasing a stuck lease)' } },
  }),
  ...(['park', 'unpark'] as const).map((op) => itemCommand({ usage: `${op} <id>`, op })),
  manyCommand('cancel', 'cancel_many', 'cancel unfinished items so they do not run', 'nothing cancelled'),
  manyCommand(
    'retry',
    'retry_many',
    'put failed or cancelled items back to pending with a fresh attempt budget',
    'nothing retried',
  ),
  command<WorkItem>({
    usage: 'get <id>',
    op: 'get_item',
    description: 'show one work item (exit 1 when there is none)',
    human: (item) =>
      `${formatItem(item)}\n${JSON.stringify({ payload: item.payload, notes: item.notes, result: item.result }, null, 2)}`,
  }),
  command<WorkItem[]>({
    usage: 'list',
    op: 'list_items',
    flags: {
      ready: { help: 'only items claimable now' },
      after: { value: 'id', help: 'the items after this one in claim order (the last id a page showed)' },
    },
    options: [['--blocked', 'only pending items still blocked or scheduled later']],
    route: (input, o) => ({ op: 'list_items', input: o.blocked ? { ready: false, ...input } : input }),
    human: (r) => items(r, 'no items'),
  }),
  command<WorkItem>({
    usage: 'annotate <id> <notes-json>',
    op: 'annotate',
    args: { 'notes-json': 'notes' },
    human: (item) => `${formatItem(item)}\nnotes: ${JSON.stringify(item.notes)}`,
  }),
  command<WorkItem[]>({ usage: 'replay', op: 'replay', human: (r) => items(r, 'nothing unfinished') }),
  command<RunRecord[]>({
    usage: 'steps <id>',
    op: 'list_steps',
    description:
      "what an item's durable run recorded: steps, sleeps and resets, in order (exit 1: no such item)",
    flags: {
      after: { value: 'position', help: 'the records after this one (the last position a page showed)' },
      limit: { short: 'n', help: 'at most n [default: 1000]' },
    },
    human: (r) => (r.length === 0 ? 'no steps recorded' : r.map(formatRecord).join('\n')),
  }),
  SIGNAL_COMMAND,
];

/** `agentstate step reset`: a person re-runs a recorded step. */
export const STEP_COMMANDS = [
  command<RunRecord>({
    usage: 'reset <id> <name>',
    op: 'reset_step',
    description:
      'run a recorded step of an item, and everything after it, again on its next attempt (not while in flight)',
    // A person at the terminal decides this.
    defaults: { actor_kind: 'human' },
    human: (r) => `reset: ${formatRecord(r)}`,
  }),
];

export const LIMIT_COMMANDS = [
  command<WorkLimit>({
    usage: 'set <key>',
    op: 'set_limit',
    description: 'limit the items of a concurrency key that claims hand out (replaces its limit)',
    flags: {
      max_in_flight: { help: 'at most n of its items in flight at once' },
      rate: {
        value: 'count/duration',
        help: 'at most count claims started per window, e.g. 60/1m',
        parse: rate('--rate'),
      },
    },
    human: (l) => formatLimit(l),
  }),
  command<WorkLimit[]>({
    usage: 'list',
    op: 'list_limits',
    human: (ls) => (ls.length === 0 ? 'no limits' : ls.map(formatLimit).join('\n')),
  }),
  command<WorkLimit>({
    usage: 'remove <key>',
    op: 'remove_limit',
    human: (l) => `removed: ${formatLimit(l)}`,
  }),
];

export function addWorkCommands(program: Command): void {
  program.commandsGroup('Work items:');
  addCommands(program, WORK_COMMANDS);
  const limit = program
    .command('limit')
    .description('limits per concurrency key (items in flight, claims per window) that claims respect');
  addCommands(limit, LIMIT_COMMANDS);
  const step = program.command('step').description("a person's changes to an item's durable run");
  addCommands(step, STEP_COMMANDS);
}
