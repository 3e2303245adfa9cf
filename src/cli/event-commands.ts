// `agentstate append | events | verify`: the event-log operations (and `events --follow`, the tail).
import type { Command } from 'commander';
import type { EventRecord, VerifyResult } from '../core/types.js';
import { EXIT_CODES } from '../errors.js';
import { runOperation } from '../service/invoke.js';
import type { EventWatch } from '../service/operations/events.js';
import { given, int, json, list, outputOf, progressLine, runCommand, withInstance } from './context.js';
import { formatEvent, formatVerify } from './format.js';

export function addEventCommands(program: Command): void {
  program.commandsGroup('Events:');

  program
    .command('append <type>')
    .description('append an event to the log')
    .option('-d, --data <json>', 'JSON data', json('--data'))
    .option('-s, --stream <stream>', 'stream [default: instance, or the work item stream with --item]')
    .option('-i, --item <id>', 'work item the event is about')
    .option('--correlation <id>', 'correlation id')
    .option('--causation <id>', 'causation id')
    .action((type: string, o, cmd: Command) =>
      runCommand<EventRecord>(
        cmd,
        'append_event',
        {
          type,
          ...given('data', o.data),
          ...given('stream', o.stream),
          ...given('work_item_id', o.item),
          ...given('correlation_id', o.correlation),
          ...given('causation_id', o.causation),
        },
        formatEvent,
      ),
    );

  program
    .command('events')
    .description('read the event log (by position, stream, type, item, time); --follow tails it')
    .option('--after <n>', 'events after this position', int('--after'))
    .option('--until <n>', 'events up to this position', int('--until'))
    .option('-s, --stream <stream>', 'only this stream')
    .option('-t, --type <type>', 'only these types (repeatable, comma-separated)', list)
    .option('-i, --item <id>', 'only events of this work item')
    .option('--since <time>', 'ISO time or duration ago, e.g. 1h')
    .option('--before <time>', 'ISO time or duration ago')
    .option('-n, --limit <n>', 'at most n events [default: 100]', int('--limit'))
    .option('-f, --follow', 'keep printing new events until interrupted')
    .action(async (o, cmd: Command) => {
      const q = {
        ...given('after', o.after),
        ...given('stream', o.stream),
        ...given('type', o.type),
        ...given('work_item_id', o.item),
        ...given('since', o.since),
        ...given('before', o.before),
      };
      if (!o.follow) {
        await runCommand<EventRecord[]>(
          cmd,
          'read_events',
          { ...q, ...given('until', o.until), limit: o.limit ?? 100 },
          (events) => (events.length === 0 ? 'no events' : events.map(formatEvent).join('\n')),
        );
        return;
      }
      // A stream, not one result: watch_events runs on the instance until interrupted (from the start of
      // the log unless --after says otherwise, as `events` without --follow reads).
      const out = outputOf(cmd);
      await withInstance(cmd, async (inst) => {
        const ac = new AbortController();
        process.once('SIGINT', () => ac.abort());
        process.once('SIGTERM', () => ac.abort());
        const watch = (await runOperation(
          inst,
          'watch_events',
          { after: 0, ...q },
          { signal: ac.signal },
        )) as EventWatch;
        for await (const e of watch.events) {
          process.stdout.write(out.json ? `${JSON.stringify(e)}\n` : `${formatEvent(e)}\n`);
        }
      });
    });

  program
    .command('verify')
    .description(
      'check the event hash chain, and documents and work items against it; exit 3 and list the problems if tampered',
    )
    .option(
      '--head <position:hash>',
      'a head printed earlier by verify, instance export or the dashboard: also report any rewrite of the log up to it',
    )
    .action((o: { head?: string }, cmd: Command) =>
      runCommand<VerifyResult>(cmd, 'verify', given('head', o.head), formatVerify, {
        progress: progressLine('verifying: events'),
        exitCode: (r) => (r.ok ? undefined : EXIT_CODES.INTEGRITY_VIOLATION),
      }),
    );
}
