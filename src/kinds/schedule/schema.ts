// Kind `schedule`: the JSON Schema of a recurring work item — a cron expression, the item each tick
// enqueues, what happens to ticks missed while no scheduler ran, and the last tick enqueued.

/** What a scheduler does with ticks that came due while none ran (see docs/schedules.md). */
export const CATCH_UP_POLICIES = ['latest', 'all', 'none'] as const;
export type CatchUpPolicy = (typeof CATCH_UP_POLICIES)[number];

/** The most ticks one pass enqueues for one schedule under `catch_up: 'all'` (the newest of them). */
export const CATCH_UP_MAX = 100;

const NAME_TEXT = { minLength: 1, maxLength: 200, pattern: '^[^\\u0000-\\u001f\\u007f]+$' };
const ISO = { type: 'string', minLength: 10, maxLength: 40 };

export const scheduleSchema = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  $id: 'urn:agentstate:schema:schedule:1.0.0',
  title: 'Schedule',
  description:
    'A recurring work item (kind `schedule`, id = its name): a cron expression read in `timezone`, the item each tick enqueues (keyed `schedule:<name>@<tick>`), the catch-up policy and the last tick enqueued.',
  type: 'object',
  additionalProperties: false,
  required: ['cron', 'item', 'catch_up', 'enabled', 'created_at', 'last_tick'],
  properties: {
    cron: { type: 'string', minLength: 9, maxLength: 200 },
    timezone: { type: ['string', 'null'], minLength: 1, maxLength: 64 },
    item: {
      type: 'object',
      additionalProperties: false,
      required: ['title'],
      properties: {
        title: { type: 'string', minLength: 1, maxLength: 1000 },
        kind: { type: ['string', 'null'], ...NAME_TEXT },
        payload: {},
        priority: { type: 'integer', minimum: -1_000_000, maximum: 1_000_000 },
        max_attempts: { type: 'integer', minimum: 1, maximum: 1000 },
        concurrency_key: { type: ['string', 'null'], ...NAME_TEXT },
      },
    },
    catch_up: { type: 'string', enum: CATCH_UP_POLICIES },
    enabled: { type: 'boolean' },
    created_at: ISO,
    last_tick: { anyOf: [ISO, { type: 'null' }] },
  },
} as const;
