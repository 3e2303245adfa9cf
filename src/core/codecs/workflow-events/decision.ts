// What a Workflow SDK World's `events.create` is decided from and what it decides (rules.ts): the run's
// entities as the storage read them with the request (`CreateEventInput`), and the events to record, the
// entity writes and removals, and the reply (`CreateEventDecision`). Types only: the World's storage applies
// a decision in its transaction, and verify's fold of the World's events (core/integrity/workflow.ts) applies
// it to the entities it keeps.
import type { Event, EventResult, Hook, Step, Wait, WorkflowRun } from '@workflow/world';

/** An event as recorded, less the id: the storage allocates `eventId` when it commits the event. */
export type EventDraft = Event extends infer E ? (E extends unknown ? Omit<E, 'eventId'> : never) : never;

/** A write of one entity: `insert` a new row (a duplicate is a conflict) or `update` the existing one. */
export interface EntityWrite<T> {
  /** Whether the entity is new (`insert`) or replaces the one read (`update`). */
  op: 'insert' | 'update';
  /** The entity's whole new value. */
  value: T;
}

/** Entities the event removes: one hook (`hook_disposed`), or all a run's hooks and waits (its end). */
export type Removal =
  | { kind: 'hook'; hookId: string }
  | { kind: 'hooks-of-run'; runId: string }
  | { kind: 'waits-of-run'; runId: string };

/** Who owns the hooks this World creates (the SDK's `Hook` carries these three strings). */
export interface HookOwner {
  /** The owner id set on every new hook. */
  ownerId: string;
  /** The project id set on every new hook. */
  projectId: string;
  /** The environment set on every new hook. */
  environment: string;
}

/** What {@link decideCreateEvent} needs: the request, the clock, and the entities the storage read for it. */
export interface CreateEventInput {
  /** The event's run (for `run_created`: the client's id, or a `wrun_<ULID>` the storage minted). */
  runId: string;
  /** The request as the caller sent it: validated here against the SDK's schema. */
  request: unknown;
  /** The time in ms since the epoch: every timestamp the decision sets, and the `retryAfter` check. */
  now: number;
  /** The run, or null when there is none. */
  run: WorkflowRun | null;
  /** For step events: the step the correlationId names in this run, or null. */
  step?: Step | null;
  /** For hook events: the hook the correlationId names, or null (disposed hooks are gone). */
  hook?: Hook | null;
  /** For wait events: the wait the correlationId names in this run, or null. */
  wait?: Wait | null;
  /** For `hook_created`: the live hook that holds the request's token, or null when the token is free. */
  tokenHolder?: { runId: string; hookId: string } | null;
  /** For `attr_set` by the workflow: whether an `attr_set` with this correlationId is already in the log. */
  attrSetRecorded?: boolean;
  /** The owner fields of the hooks this World creates. */
  hookOwner: HookOwner;
  /**
   * The request is an event already in the log, replayed to fold the entities it left (verify's check of
   * the World's tables, src/core/integrity/workflow.ts): what only a new request is checked for — a client's
   * run id minted near now — is not checked again, since a `run_started` may have created the run without it.
   */
  replay?: boolean;
}

/** What one `events.create` does: the events to append in order, entity writes, removals, the reply. */
export interface CreateEventDecision {
  /**
   * The events to append, in this order. The request's own event is the last: the reply's `event`. Before it
   * may come a synthetic `run_created` (a `run_started` that created its run) or `step_created` (a lazy
   * `step_started`). Empty when nothing is recorded (`run_started` on a running run).
   */
  events: EventDraft[];
  /** The run to write, if the event changes it. */
  run?: EntityWrite<WorkflowRun>;
  /** The step to write, if the event changes it. */
  step?: EntityWrite<Step>;
  /** The hook to write, if the event creates one. */
  hook?: EntityWrite<Hook>;
  /** The wait to write, if the event changes it. */
  wait?: EntityWrite<Wait>;
  /** The entities to delete. */
  removals: Removal[];
  /** The reply's entities (`EventResult` less the event, which gets its id at commit). */
  reply: Pick<EventResult, 'run' | 'step' | 'hook' | 'wait' | 'stepCreated'>;
}
