// Event-log operations: append, read by range/stream/type/time, and verify against the log.
import { APPEND_INPUT, READ_INPUT } from '../../core/event-log.js';
import type { AppendEventInput, ReadEventsInput } from '../../core/types.js';
import { inputSchema } from '../json-schema.js';
import { operation } from '../operation.js';
import { EVENT, EVENTS, VERIFY_RESULT } from '../output-schemas.js';

const readInput = inputSchema(READ_INPUT, {
  after: 'only events after this position',
  since: 'ISO-8601 time, or a duration before now such as 24h',
  before: 'ISO-8601 time, or a duration before now',
});

export const EVENT_OPERATIONS = [
  operation({
    name: 'append_event',
    group: 'events',
    description: 'Append an event to the hash-chained, append-only log.',
    input: inputSchema(APPEND_INPUT, { work_item_id: 'the work item the event is about' }),
    output: EVENT,
    writes: true,
    run: (inst, i: AppendEventInput) => inst.events.append(i),
  }),
  operation({
    name: 'read_events',
    group: 'events',
    description: 'Read events by position, stream, type, work item and time window (oldest first).',
    input: readInput,
    output: EVENTS,
    writes: false,
    run: (inst, i: ReadEventsInput) => inst.events.read(i),
  }),
  operation({
    name: 'verify',
    group: 'events',
    description:
      'Recompute the hash chain and check documents, history and work items against the log; with head, detect any rewrite since.',
    input: inputSchema(
      { head: { type: 'name' } },
      { head: 'position:hash printed by an earlier verify, export or dashboard' },
    ),
    output: VERIFY_RESULT,
    writes: false,
    run: (inst, i: { head?: string }, { progress }) =>
      inst.events.verify({
        ...(i.head === undefined ? {} : { head: i.head }),
        ...(progress ? { onProgress: progress } : {}),
      }),
  }),
] as const;
