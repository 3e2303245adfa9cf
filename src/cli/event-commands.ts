// `agentstate append | events | verify`: the event-log operations as commands (and `events --follow`, a view
// of the watch_events stream).
import type { Command } from 'commander';
import type { EventRecord, VerifyResult } from '../core/types.js';
import { EXIT_CODES } from '../errors.js';
import { runOperation } from '../service/invoke.js';
import type { EventWatch } from '../service/operations/events.js';
import { interrupted, outputOf, progressLine, withInstance } from './context.js';
import { formatEvent, formatVerify } from './format.js';
import { addCommands, command, type RouteTo } from './generate.js';

/** `events --follow`: the watch_events stream on the instance, printed until interrupted. */
function follow(cmd: Command, input: Record<string, unknown>): RouteTo {
  const { until: _until, limit: _limit, reverse: _reverse, ...filters } = input;
  const out = outputOf(cmd);
  return {
    run: () =>
      withInstance(cmd, async (inst) => {
        const signal = interrupted();
        // From the start of the log unless --after says otherwise, as `events` without --follow reads.
        const watch = (await runOperation(
          inst,
          'watch_events',
          { after: 0, ...filters },
          { signal },
        )) as EventWatch;
        for await (const e of watch.events) {
          process.stdout.write(out.json ? `${JSON.stringify(e)}\n` : `${formatEvent(e)}\n`);
        }
      }),
  };
}

export const EVENT_COMMANDS = [
  command<EventRecord>({
    usage: 'append <type>',
    op: 'append_event',
    flags: {
      stream: { short: 's', help: 'stream [default: instance, or the work item stream with --item]' },
      work_item_id: { flags: '-i, --item <id>', help: 'work item the event is about' },
    },
    human: formatEvent,
  }),
  command<EventRecord[]>({
    usage: 'events',
    op: 'read_events',
    description: 'read the event log (by position, stream, type, item, time); --follow tails it',
    options: [['-f, --follow', 'keep printing new events until interrupted']],
    route: (input, o, cmd) =>
      o.follow ? follow(cmd, input) : { op: 'read_events', input: { limit: 100, ...input } },
    human: (events) => (events.length === 0 ? 'no events' : events.map(formatEvent).join('\n')),
  }),
  command<VerifyResult>({
    usage: 'verify',
    op: 'verify',
    description:
      'check the event hash chain, and documents and work items against it; exit 3 and list the problems if tampered',
    flags: {
      head: {
        flags: '--head <position:hash>',
        help: 'a head printed earlier by verify, instance export or the dashboard: also report any rewrite of the log up to it',
      },
    },
    human: formatVerify,
    progress: () => progressLine('verifying: events'),
    exitCode: (r) => (r.ok ? undefined : EXIT_CODES.INTEGRITY_VIOLATION),
  }),
];

export function addEventCommands(program: Command): void {
  program.commandsGroup('Events:');
  addCommands(program, EVENT_COMMANDS);
}
