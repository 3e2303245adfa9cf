// Kind `schedule` brings four operations of the service table: schedule_add, schedule_list,
// schedule_remove and schedule_tick (one pass of the scheduler: enqueue every due tick). A schedule is a
// document of this kind (its name is the id), so it is versioned, compare-and-swap and audited like any
// other; each tick's item carries the idempotency key `schedule:<name>@<tick>`, so however many schedulers
// run the same pass at once, each tick is enqueued once (docs/schedules.md).
import { inputSchema } from '../../core/json-schema.js';
import { OBJECT } from '../../core/output-schemas.js';
import { type StoreServices, serviceOperation } from '../../core/services.js';
import type { ActorKind, EnqueueInput, JsonObject } from '../../core/types.js';
import { AS_SCHEDULER } from '../../core/work/owners.js';
import { isAgentStateError, NotFoundError } from '../../errors.js';
import type { Schedule, ScheduleItem } from './model.js';
import { CATCH_UP_POLICIES, type CatchUpPolicy } from './schema.js';

const KIND = 'schedule';
/** How far a running scheduler lets the stored cursor lag behind the ticks it handled, in ms. */
export const CURSOR_EVERY_MS = 60_000;
/** Under `catch_up: 'none'`, how late a tick may be found and still run (a scheduler's poll is later). */
export const DEFAULT_TOLERANCE_MS = 60_000;

/** One schedule's part of a pass. */
export interface TickResult {
  schedule: string;
  /** The items of its due ticks (the same item when another scheduler enqueued that tick first). */
  enqueued: Array<{ tick: string; id: string }>;
  /** Due ticks the catch-up policy left out. */
  missed: number;
}

const ACTOR = {
  actor: { type: 'name' },
  actor_kind: { type: 'string', enum: ['human', 'model', 'tool', 'system'] },
} as const;

/** schedule_add's input: the schedule's name, expression and policy, and the fields of its item. */
type AddInput = ScheduleItem & {
  name: string;
  cron: string;
  timezone?: string | null;
  catch_up?: CatchUpPolicy;
  actor?: string;
  actor_kind?: ActorKind;
};

function now(inst: StoreServices): number {
  const clock = (inst as { clock?: () => number }).clock;
  return typeof clock === 'function' ? clock() : Date.now();
}

/** The schedule named `name`, enabled or not, with its version; NOT_FOUND when there is none. */
async function load(inst: StoreServices, name: string): Promise<{ version: number; body: Schedule }> {
  const doc = await inst.docs.find(KIND, name);
  if (!doc) throw new NotFoundError(`schedule ${JSON.stringify(name)} not found`, { id: name });
  return { version: doc.version, body: doc.body as unknown as Schedule };
}

/** A schedule as listed: its name and document version, its definition, and its next tick. */
async function view(name: string, version: number, s: Schedule, at: number): Promise<JsonObject> {
  const { cronOf } = await import('./model.js');
  const next = s.enabled ? cronOf(s.cron, s.timezone).nextRun(new Date(at)) : null;
  return { name, version, ...(s as unknown as JsonObject), next_tick: next ? next.toISOString() : null };
}

/**
 * One pass: for every enabled schedule, enqueues the ticks due at `at` (its catch-up policy decides which),
 * each with its tick's idempotency key, then moves its `last_tick` forward (compare-and-swap: a scheduler
 * that lost the race leaves it to the winner). Safe to run from any number of processes at once. `memory`:
 * a running scheduler's own cursors, kept between its passes (then `last_tick` is written at most once a
 * minute per schedule).
 */
export async function runDueSchedules(
  inst: StoreServices,
  at: number = now(inst),
  toleranceMs = DEFAULT_TOLERANCE_MS,
  memory?: Map<string, number>,
): Promise<TickResult[]> {
  const { dueTicks, tickKey } = await import('./model.js');
  const out: TickResult[] = [];
  for (const rec of await inst.docs.list({ kind: KIND })) {
    const doc = await inst.docs.find(KIND, rec.id);
    const s = doc?.body as unknown as Schedule | undefined;
    if (!doc || !s?.enabled) continue;
    // The newest tick handled: the stored cursor, or this scheduler's own when it is ahead (a schedule
    // added again under its name is another schedule: its creation time is part of the key).
    const stored = s.last_tick ? Date.parse(s.last_tick) : 0;
    const mkey = `${rec.id}\u0000${s.created_at}`;
    const known = Math.max(stored, memory?.get(mkey) ?? 0);
    const { ticks, missed, newest } = dueTicks(
      { ...s, last_tick: known > 0 ? new Date(known).toISOString() : null },
      at,
      toleranceMs,
    );
    if (newest !== null) memory?.set(mkey, Math.max(known, newest));
    const result: TickResult = { schedule: rec.id, enqueued: [], missed };
    if (ticks.length > 0) {
      const items = await inst.work.enqueueMany(
        ticks.map((tick): EnqueueInput => {
          const when = new Date(tick).toISOString();
          const p = s.item.payload;
          const payload =
            p === undefined || p === null
              ? { scheduled_for: when }
              : typeof p === 'object' && !Array.isArray(p)
                ? { ...p, scheduled_for: when }
                : p;
          return {
            title: s.item.title,
            ...(s.item.kind == null ? {} : { kind: s.item.kind }),
            payload,
            ...(s.item.priority === undefined ? {} : { priority: s.item.priority }),
            ...(s.item.max_attempts === undefined ? {} : { max_attempts: s.item.max_attempts }),
            ...(s.item.concurrency_key == null ? {} : { concurrency_key: s.item.concurrency_key }),
            idempotency_key: tickKey(rec.id, tick),
            actor: 'scheduler',
          };
        }),
        AS_SCHEDULER,
      );
      result.enqueued = items.map((item, k) => ({ tick: new Date(ticks[k]!).toISOString(), id: item.id }));
    }
    // The cursor moves past what was enqueued and what the policy skipped, so neither comes back. A scheduler
    // that remembers its own writes it at most once a minute per schedule: a tick a second would otherwise
    // be a document version a second (the items' keys, not the cursor, make each tick once).
    const due = newest !== null && newest > stored;
    const since = stored || Date.parse(s.created_at);
    if (due && (!memory || missed > 0 || newest - since >= CURSOR_EVERY_MS)) {
      try {
        await inst.docs.commit({
          kind: KIND,
          id: rec.id,
          expected_version: doc.version,
          merge_patch: { last_tick: new Date(newest).toISOString() },
          actor: 'scheduler',
          actor_kind: 'system',
        });
      } catch (err) {
        // Another scheduler moved it first (or further): its pass enqueued the same ticks.
        if (!isAgentStateError(err) || !['STATE_CONFLICT', 'VALIDATION_FAILED'].includes(err.code)) throw err;
      }
    }
    if (result.enqueued.length > 0 || result.missed > 0) out.push(result);
  }
  return out;
}

const ITEM_DOCS = {
  name: 'the schedule (its document id): each tick enqueues one item keyed schedule:<name>@<tick>',
  cron: 'minute hour day month weekday (e.g. "*/5 * * * *"), or six fields with seconds first',
  timezone: 'IANA time zone the expression is read in (default UTC)',
  catch_up:
    'ticks missed while no scheduler ran: latest (default: the newest only), all (each, at most 100), none',
  title: "the title of each tick's item",
};

export const scheduleServiceOperations = [
  serviceOperation({
    name: 'schedule_add',
    group: 'work',
    description:
      'Add a recurring work item: a cron expression and the item each tick enqueues (exactly once per tick, however many schedulers run); replaces a removed schedule of that name.',
    input: inputSchema(
      {
        name: { type: 'name', required: true },
        cron: { type: 'string', required: true, max: 200 },
        title: { type: 'string', required: true },
        kind: { type: 'name', nullable: true },
        payload: { type: 'json' },
        priority: { type: 'int', min: -1_000_000, max: 1_000_000 },
        max_attempts: { type: 'int', min: 1, max: 1000 },
        concurrency_key: { type: 'name', nullable: true },
        timezone: { type: 'name', nullable: true },
        catch_up: { type: 'string', enum: CATCH_UP_POLICIES },
        ...ACTOR,
      },
      ITEM_DOCS,
    ),
    output: OBJECT,
    writes: true,
    idempotent: false,
    async run(inst: StoreServices, i: AddInput) {
      const { cronOf } = await import('./model.js');
      cronOf(i.cron, i.timezone);
      const at = now(inst);
      const existing = await inst.docs.find(KIND, i.name);
      if (existing && (existing.body as unknown as Schedule).enabled !== false) {
        const { StateConflictError } = await import('../../errors.js');
        throw new StateConflictError(
          `schedule ${JSON.stringify(i.name)} exists: remove it first (agentstate schedule remove ${i.name}), or add it under another name`,
          { id: i.name, expected: 0, actual: existing.version },
        );
      }
      const body: Schedule = {
        cron: i.cron.trim(),
        timezone: i.timezone ?? null,
        item: {
          title: i.title,
          ...(i.kind == null ? {} : { kind: i.kind }),
          ...(i.payload === undefined ? {} : { payload: i.payload }),
          ...(i.priority === undefined ? {} : { priority: i.priority }),
          ...(i.max_attempts === undefined ? {} : { max_attempts: i.max_attempts }),
          ...(i.concurrency_key == null ? {} : { concurrency_key: i.concurrency_key }),
        },
        catch_up: i.catch_up ?? 'latest',
        enabled: true,
        created_at: new Date(at).toISOString(),
        last_tick: null,
      };
      const r = await inst.docs.commit({
        kind: KIND,
        id: i.name,
        expected_version: existing?.version ?? 0,
        body: body as unknown as JsonObject,
        ...(i.actor === undefined ? {} : { actor: i.actor }),
        ...(i.actor_kind === undefined ? {} : { actor_kind: i.actor_kind }),
      });
      return view(i.name, r.version, body, at);
    },
  }),
  serviceOperation({
    name: 'schedule_list',
    group: 'work',
    description: 'The schedules: cron, item, catch-up policy, last tick enqueued and next tick.',
    input: inputSchema({ all: { type: 'bool' } }, { all: 'removed (disabled) schedules too' }),
    output: { type: 'array', items: OBJECT },
    writes: false,
    async run(inst: StoreServices, i: { all?: boolean }) {
      const at = now(inst);
      const out: JsonObject[] = [];
      for (const rec of await inst.docs.list({ kind: KIND })) {
        const { version, body } = await load(inst, rec.id);
        if (body.enabled || i.all) out.push(await view(rec.id, version, body, at));
      }
      return out;
    },
  }),
  serviceOperation({
    name: 'schedule_remove',
    group: 'work',
    description:
      'Remove a schedule: no tick is enqueued after this (its items already enqueued stay); its history stays.',
    input: inputSchema({ name: { type: 'name', required: true }, ...ACTOR }, {}),
    output: OBJECT,
    writes: true,
    async run(inst: StoreServices, i: { name: string; actor?: string; actor_kind?: ActorKind }) {
      const { version, body } = await load(inst, i.name);
      if (!body.enabled)
        throw new NotFoundError(`schedule ${JSON.stringify(i.name)} not found`, { id: i.name });
      const r = await inst.docs.commit({
        kind: KIND,
        id: i.name,
        expected_version: version,
        merge_patch: { enabled: false },
        ...(i.actor === undefined ? {} : { actor: i.actor }),
        ...(i.actor_kind === undefined ? {} : { actor_kind: i.actor_kind }),
      });
      return view(i.name, r.version, { ...body, enabled: false }, now(inst));
    },
  }),
  serviceOperation({
    name: 'schedule_tick',
    group: 'work',
    description:
      'Run one scheduler pass now: enqueue every due tick of every schedule (each exactly once, whoever else runs it).',
    input: inputSchema({}, {}),
    output: { type: 'array', items: OBJECT },
    writes: true,
    async run(inst: StoreServices) {
      return (await runDueSchedules(inst)) as unknown as JsonObject[];
    },
  }),
];
