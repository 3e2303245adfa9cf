// Event-log operations: append, read by range/stream/type/time, and verify against the log.
import { viewableEvent } from '../../core/codecs/workflow-events/codec.js';
import { APPEND_INPUT, READ_INPUT } from '../../core/events/log.js';
import { inputSchema, type JsonSchema } from '../../core/json-schema.js';
import { EVENT, EVENTS, VERIFY_RESULT } from '../../core/output-schemas.js';
import type { AppendEventInput, EventRecord, ReadEventsInput } from '../../core/types.js';
import { InvalidInputError } from '../../errors.js';
import { operation } from '../operation.js';

const readInput = inputSchema(READ_INPUT, {
  after: 'only events after this position',
  since: 'ISO-8601 time, or a duration before now such as 24h',
  before: 'ISO-8601 time, or a duration before now',
});

const { until: _until, limit: _limit, reverse: _reverse, ...WATCH_FILTERS } = READ_INPUT;
/** watch_events: the read filters that make sense for a tail. */
export const WATCH_INPUT = WATCH_FILTERS;

/** What watch_events gives: where it starts (the head when `after` was not given), and the events from there. */
export interface EventWatch {
  after: number;
  events: AsyncIterable<EventRecord>;
}

const EVENT_HEAD: JsonSchema = {
  type: ['object', 'null'],
  properties: { position: { type: 'integer' }, hash: { type: 'string' } },
  required: ['position', 'hash'],
};

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
    // Oldest first, the next page is after the last position read; newest first, until the one before it.
    page: {
      limit: 'limit',
      defaultLimit: 1000,
      next: (last: EventRecord, i: ReadEventsInput) =>
        i.reverse ? { until: last.position - 1 } : { after: last.position },
    },
    async run(inst, i: ReadEventsInput) {
      const events = (await inst.events.read(i)).map(viewableEvent);
      // An empty page after a position past the head names events this log never had (another store's, or a
      // typo): said, as watch_events does, instead of an empty page that reads as "nothing new". Checked only
      // when the page is empty, so a read costs one query.
      if (events.length === 0 && i.after !== undefined && i.after > 0) {
        const head = (await inst.events.head())?.position ?? 0;
        if (i.after > head) {
          throw new InvalidInputError(
            `after ${i.after} is past the head of this log (${head}): page on from a position it gave you`,
            { field: 'after', head },
          );
        }
      }
      return events;
    },
  }),
  operation({
    name: 'watch_events',
    group: 'events',
    description:
      'Follow the log: every event after a position (default: the head), in order, each once, until stopped.',
    input: inputSchema(WATCH_INPUT, {
      after: 'start after this position (default: the head, so only new events)',
    }),
    output: EVENT,
    writes: false,
    streams: true,
    async run(inst, i: ReadEventsInput, { signal, pollMs }): Promise<EventWatch> {
      const head = (await inst.events.head())?.position ?? 0;
      const after = i.after ?? head;
      // A position past the head names events this log never had (another store's, or a typo): waiting for
      // them would be silent, so it is refused.
      if (after > head) {
        throw new InvalidInputError(
          `after ${after} is past the head of this log (${head}): resume from a position it gave you, or leave it out to start at the head`,
          { field: 'after', head },
        );
      }
      const events = inst.events.tail(i, {
        after,
        ...(pollMs === undefined ? {} : { pollMs }),
        ...(signal ? { signal } : {}),
      });
      return {
        after,
        events: (async function* () {
          for await (const e of events) yield viewableEvent(e);
        })(),
      };
    },
  }),
  operation({
    name: 'event_head',
    group: 'events',
    description:
      "The log's head: the newest event's position and hash (null for an empty log); as position:hash, verify's head.",
    input: inputSchema({}),
    output: EVENT_HEAD,
    writes: false,
    run: (inst) => inst.events.head(),
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
