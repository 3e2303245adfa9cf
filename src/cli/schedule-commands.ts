// `agentstate schedule add | list | remove | tick | run`: recurring work items from cron expressions. add,
// list, remove and tick are the schedule kind's operations of the table (flags from their input schemas);
// run is the scheduler loop (a pass every --poll until SIGINT/SIGTERM), like `work`.
import type { Command } from 'commander';
import type { JsonObject } from '../core/types.js';
import { duration, interrupted, outputOf, withInstance } from './context.js';
import { addCommands, command } from './generate.js';

interface Listed extends JsonObject {
  name: string;
  cron: string;
  timezone: string | null;
  enabled: boolean;
  next_tick: string | null;
  last_tick: string | null;
  catch_up: string;
}

const line = (s: Listed) =>
  `${s.name}  ${JSON.stringify(s.cron)}${s.timezone ? ` ${s.timezone}` : ''}  ${
    s.enabled ? `next ${s.next_tick ?? '—'}` : 'removed'
  }  last ${s.last_tick ?? '—'}  catch-up ${s.catch_up}  "${(s.item as { title: string }).title}"`;

type Ticked = Array<{ schedule: string; enqueued: Array<{ tick: string; id: string }>; missed: number }>;
const ticked = (r: Ticked) =>
  r.length === 0
    ? 'nothing due'
    : r
        .map(
          (t) =>
            `${t.schedule}: ${t.enqueued.map((e) => `${e.tick} ${e.id}`).join(', ') || 'none'}${
              t.missed ? ` (${t.missed} missed, by its catch-up policy)` : ''
            }`,
        )
        .join('\n');

export const SCHEDULE_COMMANDS = [
  command<Listed>({
    usage: 'add <name> <cron> <title>',
    op: 'schedule_add',
    description:
      'add a recurring work item: each tick of the cron expression enqueues one item, exactly once',
    flags: { kind: { short: 'k', help: "the item's kind (workers claim by kind)" } },
    human: (s) => line(s),
  }),
  command<Listed[]>({
    usage: 'list',
    op: 'schedule_list',
    human: (ls) => (ls.length === 0 ? 'no schedules' : ls.map(line).join('\n')),
  }),
  command<Listed>({ usage: 'remove <name>', op: 'schedule_remove', human: (s) => `removed: ${line(s)}` }),
  command<Ticked>({ usage: 'tick', op: 'schedule_tick', human: ticked }),
];

export function addScheduleCommands(program: Command): void {
  const schedule = program
    .command('schedule')
    .description(
      'recurring work items from cron expressions, each tick enqueued exactly once (docs/schedules.md)',
    );
  addCommands(schedule, SCHEDULE_COMMANDS);
  schedule
    .command('run')
    .description('run the scheduler until SIGINT/SIGTERM: a pass every --poll enqueues the due ticks')
    .option('--poll <duration>', 'how often a pass runs [default: 1s]', duration('--poll'))
    .action(async (o: { poll?: number }, cmd: Command) => {
      const out = outputOf(cmd);
      await withInstance(cmd, async (inst) => {
        const { createScheduler } = await import('../worker/scheduler.js');
        const s = createScheduler({
          instance: inst,
          signal: interrupted(),
          ...(o.poll === undefined ? {} : { pollMs: o.poll }),
        });
        let enqueued = 0;
        s.on('ticked', (r) => {
          enqueued += r.reduce((n, t) => n + t.enqueued.length, 0);
          if (!out.json) process.stderr.write(`${ticked(r as Ticked)}\n`);
        });
        s.on('storeError', (err) =>
          process.stderr.write(`agentstate schedule run: ${(err as Error).message}\n`),
        );
        await s.start();
        out.emit({ enqueued }, () => `schedule run: ${enqueued} ticks enqueued`);
      });
    });
}
