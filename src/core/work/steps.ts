// The calls on what a durable run recorded (src/core/runs/ runs the steps themselves): its records read a
// page at a time, signals sent to the item for the run's waits, and a person's reset of a recorded step.
import { InvalidInputError, PermissionDeniedError } from '../../errors.js';
import type { RunRecord } from '../codecs/run-records.js';
import { readSignal, type SignalRecord, signalEvent } from '../codecs/run-records.js';
import { checkInput } from '../input.js';
import { checkRecordName } from '../runs/inputs.js';
import type { Json, ResetStepInput, SignalInput, StepsInput } from '../types.js';
import type { QueueParts } from './context.js';
import { WORK_INPUTS } from './inputs.js';
import { STORE_ACTOR_KIND } from './rules.js';

/** The body of `WorkQueue.steps` (its comment says what it does). */
export async function steps(w: QueueParts, input: string | StepsInput): Promise<RunRecord[]> {
  const i = checkInput<StepsInput>(
    'steps',
    typeof input === 'string' ? { id: input } : input,
    WORK_INPUTS.steps,
  );
  const item = await w.queue.get(i.id);
  const all = await w.runs.records(item.id);
  // The records of one item are few: read them all, and page in memory.
  let from = 0;
  if (i.after !== undefined) {
    from = all.findIndex((r) => r.position === i.after) + 1;
    if (from === 0) {
      throw new InvalidInputError(
        `steps: after ${i.after} is not the position of a record of work item ${item.id}; page on from the position of the last record a page showed`,
        { field: 'after' },
      );
    }
  }
  return all.slice(from, i.limit === undefined ? undefined : from + i.limit);
}

/** The body of `WorkQueue.signal` (its comment says what it does). */
export async function signal(w: QueueParts, input: SignalInput): Promise<SignalRecord> {
  const i = checkInput<SignalInput>('signal', input, WORK_INPUTS.signal);
  const name = checkRecordName('signal', i.name);
  const payload = (i.payload ?? null) as Json;
  const actor = i.actor ?? w.ctx.defaultWorker;
  const actorKind = i.actor_kind ?? STORE_ACTOR_KIND;
  const now = w.ctx.clock();
  const { event } = await w.backend.work.signal({
    id: i.id,
    name,
    now,
    build: (wakes) => signalEvent(i.id, { name, payload, actor, actor_kind: actorKind }, wakes, now),
  });
  return readSignal(event) as SignalRecord;
}

/** The body of `WorkQueue.resetStep` (its comment says what it does). */
export async function resetStep(w: QueueParts, input: ResetStepInput): Promise<RunRecord> {
  const i = checkInput<ResetStepInput>('reset_step', input, WORK_INPUTS.reset_step);
  const actor = i.actor ?? w.ctx.defaultWorker;
  if (i.actor_kind === 'model') {
    // Running a step again may repeat what it did outside (a charge, a message): a person decides that.
    throw new PermissionDeniedError(
      `reset_step: a model may not reset a step of work item ${i.id}: running it again is a person's decision`,
      { id: i.id, actor_kind: i.actor_kind },
    );
  }
  return w.runs.reset({
    id: i.id,
    name: i.name,
    occurrence: i.occurrence ?? 1,
    reason: i.reason ?? null,
    actor,
    actor_kind: i.actor_kind ?? STORE_ACTOR_KIND,
  });
}
