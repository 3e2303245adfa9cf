// The state machine of a Workflow SDK World's events.create (issue 42): one test per rule and per error, on
// real values — ids with '|', '+' and non-ASCII, binary payloads with a NUL byte — and an injected clock.
import type { Hook, Step, Wait, WorkflowRun } from '@workflow/world';
import { describe, expect, it } from 'vitest';
import type { CreateEventInput } from '../../src/core/codecs/workflow-events/decision.js';
import {
  EntityConflictError,
  HookNotFoundError,
  RunExpiredError,
  RunNotSupportedError,
  TooEarlyError,
  WorkflowError,
  WorkflowRunNotFoundError,
  WorkflowWorldError,
} from '../../src/core/codecs/workflow-events/errors.js';
import { decideCreateEvent } from '../../src/core/codecs/workflow-events/rules.js';

const NOW = Date.UTC(2026, 0, 15, 12, 0, 0);
const HOUR = 3_600_000;

/** `wrun_` and a ULID whose time is `ms` (the random part fixed). */
function runIdAt(ms: number): string {
  const crockford = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
  let time = '';
  for (let t = ms, i = 0; i < 10; i++, t = Math.floor(t / 32)) time = crockford[t % 32]! + time;
  return `wrun_${time}Z9Y8X7W6V5T4S3R2`;
}

const RUN = runIdAt(NOW - 1000);
const OTHER_RUN = runIdAt(NOW - 2000);
const STEP = 'step//./src/ü|a+b//φ';
const HOOK = 'hook|ä+1';
const WAIT = 'wait+ß|漢';
const TOKEN = 'tok|€+x';
const OWNER = { ownerId: 'owner-ö', projectId: 'proj|1', environment: 'env+test' };
const bytes = (...b: number[]) => new Uint8Array(b);
const INPUT = bytes(0x5b, 0x00, 0xff, 0x5d);

function decide(over: Partial<CreateEventInput> & { request: unknown }) {
  return decideCreateEvent({ runId: RUN, now: NOW, run: null, hookOwner: OWNER, ...over });
}

/** The error `fn` throws (the test fails if it throws none). */
function thrown(fn: () => unknown): Error & Record<string, unknown> {
  try {
    fn();
  } catch (err) {
    return err as Error & Record<string, unknown>;
  }
  throw new Error('expected an error, got none');
}

const runCreatedRequest = {
  eventType: 'run_created',
  specVersion: 5,
  eventData: { deploymentId: 'dpl|1', workflowName: 'workflow//./w//ƒ', input: INPUT },
} as const;

const pendingRun = (): WorkflowRun => decide({ request: runCreatedRequest }).run!.value;
const runningRun = (): WorkflowRun =>
  decide({ run: pendingRun(), request: { eventType: 'run_started', specVersion: 5 } }).run!.value;
const endedRun = (status: 'completed' | 'failed' | 'cancelled'): WorkflowRun => {
  const request =
    status === 'completed'
      ? { eventType: 'run_completed', eventData: { output: bytes(1) } }
      : status === 'failed'
        ? { eventType: 'run_failed', eventData: { error: bytes(2) } }
        : { eventType: 'run_cancelled' };
  return decide({ run: runningRun(), request }).run!.value;
};
const createdStep = (): Step =>
  decide({
    run: runningRun(),
    request: { eventType: 'step_created', correlationId: STEP, eventData: { stepName: 'add', input: INPUT } },
  }).step!.value;
const startStep = (step: Step, now = NOW, run = runningRun()) =>
  decide({ now, run, step, request: { eventType: 'step_started', correlationId: STEP } });
const hookCreated = { eventType: 'hook_created', correlationId: HOOK, eventData: { token: TOKEN } } as const;
const liveHook = (): Hook => decide({ run: runningRun(), request: hookCreated }).hook!.value;
const waitingWait = (): Wait =>
  decide({
    run: runningRun(),
    request: {
      eventType: 'wait_created',
      correlationId: WAIT,
      eventData: { resumeAt: new Date(NOW + HOUR) },
    },
  }).wait!.value;

describe('errors', () => {
  it('carry the names and fields of @workflow/errors, which the SDK checks by name', () => {
    const cases: [Error, string][] = [
      [new WorkflowWorldError('x', { status: 400 }), 'WorkflowWorldError'],
      [new EntityConflictError('x'), 'EntityConflictError'],
      [new RunExpiredError('x'), 'RunExpiredError'],
      [new TooEarlyError('x', { retryAfter: 3 }), 'TooEarlyError'],
      [new WorkflowRunNotFoundError(RUN), 'WorkflowRunNotFoundError'],
      [new HookNotFoundError(HOOK), 'HookNotFoundError'],
      [new RunNotSupportedError(6, 5), 'RunNotSupportedError'],
    ];
    for (const [err, name] of cases) {
      expect(err.name).toBe(name);
      expect(err).toBeInstanceOf(WorkflowError);
    }
    expect(new WorkflowWorldError('x', { status: 400 }).status).toBe(400);
    expect(new TooEarlyError('x', { retryAfter: 3 }).retryAfter).toBe(3);
    expect(new EntityConflictError('x')).toBeInstanceOf(WorkflowWorldError);
    expect(new WorkflowRunNotFoundError(RUN)).toMatchObject({
      runId: RUN,
      message: `Workflow run "${RUN}" not found`,
    });
    expect(new HookNotFoundError(HOOK).token).toBe(HOOK);
    expect(new RunNotSupportedError(6, 5)).toMatchObject({ runSpecVersion: 6, worldSpecVersion: 5 });
  });
});

describe('validation', () => {
  it('refuses a request the SDK schema refuses (hook_conflict is not user-creatable) with a 400', () => {
    for (const request of [
      { eventType: 'hook_conflict', correlationId: HOOK, eventData: { token: TOKEN } },
      { eventType: 'step_created', correlationId: STEP, eventData: { input: INPUT } },
      { eventType: 'wait_created', correlationId: WAIT, eventData: { resumeAt: 'not a date' } },
      null,
    ]) {
      const err = thrown(() => decide({ run: runningRun(), request }));
      expect(err.name).toBe('WorkflowWorldError');
      expect(err.status).toBe(400);
    }
  });

  it('refuses an empty correlationId and an empty runId with a 400', () => {
    const empty = thrown(() =>
      decide({
        run: runningRun(),
        request: { eventType: 'step_created', correlationId: '', eventData: { stepName: 'a', input: INPUT } },
      }),
    );
    expect([empty.name, empty.status]).toEqual(['WorkflowWorldError', 400]);
    const noRun = thrown(() => decide({ runId: '', request: { eventType: 'run_cancelled' } }));
    expect([noRun.name, noRun.status]).toEqual(['WorkflowWorldError', 400]);
  });

  it('passes payloads through untouched: the same bytes, NUL included, in the entity and the event', () => {
    const d = decide({ request: runCreatedRequest });
    expect(d.run!.value.input).toBe(INPUT);
    expect((d.events[0] as { eventData: { input: unknown } }).eventData.input).toBe(INPUT);
  });
});

describe('run_created', () => {
  it('creates a pending run with the attributes, spec version and clock time, and records the event', () => {
    const d = decide({
      request: {
        ...runCreatedRequest,
        eventData: { ...runCreatedRequest.eventData, attributes: { 'k|ü': 'v+1' } },
      },
    });
    const at = new Date(NOW);
    expect(d.run).toEqual({
      op: 'insert',
      value: {
        runId: RUN,
        status: 'pending',
        deploymentId: 'dpl|1',
        workflowName: 'workflow//./w//ƒ',
        specVersion: 5,
        input: INPUT,
        attributes: { 'k|ü': 'v+1' },
        createdAt: at,
        updatedAt: at,
      },
    });
    expect(d.events).toEqual([
      {
        eventType: 'run_created',
        runId: RUN,
        createdAt: at,
        specVersion: 5,
        eventData: { ...runCreatedRequest.eventData, attributes: { 'k|ü': 'v+1' } },
      },
    ]);
    expect(d.reply).toEqual({ run: d.run!.value });
    expect(d.removals).toEqual([]);
  });

  it('refuses a second run_created for the run: EntityConflictError', () => {
    expect(thrown(() => decide({ run: pendingRun(), request: runCreatedRequest })).name).toBe(
      'EntityConflictError',
    );
  });

  it('takes a run id minted up to 24 h before now or 5 min after it, and refuses others with a 400', () => {
    const at = (ms: number) => () => decide({ runId: runIdAt(ms), request: runCreatedRequest });
    expect(at(NOW - 24 * HOUR)().run!.value.status).toBe('pending');
    expect(at(NOW + 5 * 60_000)().run!.value.status).toBe('pending');
    for (const bad of [at(NOW - 24 * HOUR - 1), at(NOW + 5 * 60_000 + 1)]) {
      expect(thrown(bad).status).toBe(400);
    }
    expect(thrown(() => decide({ runId: 'wrun_ü|+', request: runCreatedRequest })).status).toBe(400);
  });

  it("replaying a logged run_created (verify's fold) does not check its run id again: a run_started may have made it", () => {
    // run_started with the run's data creates any id, and logs a run_created for it.
    const started = decide({
      runId: 'wrun_ü|+',
      request: { eventType: 'run_started', eventData: runCreatedRequest.eventData },
    });
    expect(started.events.map((e) => e.eventType)).toEqual(['run_created', 'run_started']);
    const replayed = decide({ runId: 'wrun_ü|+', request: runCreatedRequest, replay: true });
    expect(replayed.run!.value).toMatchObject({ runId: 'wrun_ü|+', status: 'pending' });
    const old = decide({ runId: runIdAt(NOW - 48 * HOUR), request: runCreatedRequest, replay: true });
    expect(old.run!.value.status).toBe('pending');
  });

  it('refuses reserved ($) attributes unless allowed, with a 400', () => {
    const request = (allow: boolean) => ({
      ...runCreatedRequest,
      eventData: {
        ...runCreatedRequest.eventData,
        attributes: { $parentRunId: OTHER_RUN },
        ...(allow ? { allowReservedAttributes: true } : {}),
      },
    });
    expect(thrown(() => decide({ request: request(false) })).status).toBe(400);
    expect(decide({ request: request(true) }).run!.value.attributes).toEqual({ $parentRunId: OTHER_RUN });
  });

  it('refuses a legacy (spec version 1) run with a 400', () => {
    expect(thrown(() => decide({ request: { ...runCreatedRequest, specVersion: 1 } })).status).toBe(400);
  });
});

describe('run_started', () => {
  it('starts a pending run at the clock time; the event carries no eventData', () => {
    const run = pendingRun();
    const d = decide({
      now: NOW + 5,
      run,
      request: { eventType: 'run_started', specVersion: 5, eventData: { input: INPUT } },
    });
    expect(d.run).toEqual({
      op: 'update',
      value: { ...run, status: 'running', startedAt: new Date(NOW + 5), updatedAt: new Date(NOW + 5) },
    });
    expect(d.events).toEqual([
      { eventType: 'run_started', runId: RUN, createdAt: new Date(NOW + 5), specVersion: 5 },
    ]);
  });

  it('on a running run records nothing and returns the run', () => {
    const run = runningRun();
    const d = decide({ now: NOW + 9, run, request: { eventType: 'run_started' } });
    expect(d).toEqual({ events: [], removals: [], reply: { run } });
  });

  it('creates a missing run from the creation data it carries, with a synthetic run_created first', () => {
    const eventData = { deploymentId: 'dpl|1', workflowName: 'wf+ü', input: INPUT };
    const d = decide({ request: { eventType: 'run_started', specVersion: 5, eventData } });
    expect(d.events.map((e) => e.eventType)).toEqual(['run_created', 'run_started']);
    expect(d.events[0]).toMatchObject({ runId: RUN, eventData });
    expect(d.events[1]).not.toHaveProperty('eventData');
    expect(d.run!.op).toBe('insert');
    expect(d.run!.value).toMatchObject({ status: 'running', input: INPUT, startedAt: new Date(NOW) });
  });

  it('without creation data, a missing run is WorkflowRunNotFoundError', () => {
    const err = thrown(() => decide({ request: { eventType: 'run_started', eventData: { input: INPUT } } }));
    expect([err.name, err.runId]).toEqual(['WorkflowRunNotFoundError', RUN]);
  });

  it('on a run that is over is RunExpiredError', () => {
    for (const status of ['completed', 'failed', 'cancelled'] as const) {
      expect(
        thrown(() => decide({ run: endedRun(status), request: { eventType: 'run_started' } })).name,
      ).toBe('RunExpiredError');
    }
  });

  it('on a run from a newer spec version is RunNotSupportedError', () => {
    const run = { ...pendingRun(), specVersion: 99 };
    const err = thrown(() => decide({ run, request: { eventType: 'run_started' } }));
    expect([err.name, err.runSpecVersion, err.worldSpecVersion]).toEqual(['RunNotSupportedError', 99, 5]);
  });
});

describe('run_completed, run_failed, run_cancelled', () => {
  it('run_completed sets the output and completedAt, and removes the run’s hooks and waits', () => {
    const output = bytes(0, 1, 0);
    const d = decide({
      now: NOW + 7,
      run: runningRun(),
      request: { eventType: 'run_completed', eventData: { output } },
    });
    expect(d.run!.value).toMatchObject({ status: 'completed', output, completedAt: new Date(NOW + 7) });
    expect(d.removals).toEqual([
      { kind: 'hooks-of-run', runId: RUN },
      { kind: 'waits-of-run', runId: RUN },
    ]);
  });

  it('run_failed sets the error and its code', () => {
    const error = bytes(0, 0x45);
    const d = decide({
      run: runningRun(),
      request: { eventType: 'run_failed', eventData: { error, errorCode: 'USER_ERROR' } },
    });
    expect(d.run!.value).toMatchObject({
      status: 'failed',
      error,
      errorCode: 'USER_ERROR',
      completedAt: new Date(NOW),
    });
    expect(d.removals).toHaveLength(2);
  });

  it('run_cancelled cancels a pending run too, and records the reason', () => {
    const d = decide({
      run: pendingRun(),
      request: { eventType: 'run_cancelled', eventData: { cancelReason: 'ø|+' } },
    });
    expect(d.run!.value).toMatchObject({ status: 'cancelled', completedAt: new Date(NOW) });
    expect(d.events[0]).toMatchObject({ eventData: { cancelReason: 'ø|+' } });
    expect(d.removals).toHaveLength(2);
  });

  it('cancelling a cancelled run succeeds: the event is recorded, nothing changes', () => {
    const run = endedRun('cancelled');
    const d = decide({ now: NOW + 50, run, request: { eventType: 'run_cancelled' } });
    expect(d).toEqual({
      events: [{ eventType: 'run_cancelled', runId: RUN, createdAt: new Date(NOW + 50), specVersion: 5 }],
      removals: [],
      reply: { run },
    });
  });

  it('a terminal event on a run that is over is EntityConflictError', () => {
    for (const status of ['completed', 'failed'] as const) {
      for (const request of [
        { eventType: 'run_completed', eventData: {} },
        { eventType: 'run_failed', eventData: { error: bytes(1) } },
        { eventType: 'run_cancelled' },
      ]) {
        expect(thrown(() => decide({ run: endedRun(status), request })).name).toBe('EntityConflictError');
      }
    }
  });

  it('a terminal event on a missing run is WorkflowRunNotFoundError', () => {
    expect(
      thrown(() => decide({ request: { eventType: 'run_failed', eventData: { error: bytes(1) } } })).name,
    ).toBe('WorkflowRunNotFoundError');
  });
});

describe('attr_set', () => {
  const attrSet = (
    changes: { key: string; value: string | null }[],
    writer: object = { type: 'workflow' },
  ) => ({
    eventType: 'attr_set',
    correlationId: 'attr|1',
    eventData: { changes, writer },
  });

  it('merges the changes into the run’s attributes: a string sets, null removes', () => {
    const run = { ...runningRun(), attributes: { keep: '1', drop: '2' } };
    const d = decide({
      now: NOW + 3,
      run,
      request: attrSet([
        { key: 'drop', value: null },
        { key: 'neu|ü', value: 'v+' },
      ]),
    });
    expect(d.run).toEqual({
      op: 'update',
      value: { ...run, attributes: { keep: '1', 'neu|ü': 'v+' }, updatedAt: new Date(NOW + 3) },
    });
  });

  it('a workflow write of a recorded correlationId is EntityConflictError; a step’s is uncorrelated', () => {
    const run = runningRun();
    expect(
      thrown(() => decide({ run, attrSetRecorded: true, request: attrSet([{ key: 'a', value: 'b' }]) })).name,
    ).toBe('EntityConflictError');
    const step = attrSet([{ key: 'a', value: 'b' }], { type: 'step', stepId: STEP, attempt: 1 });
    expect(decide({ run, attrSetRecorded: true, request: step }).run!.value.attributes).toEqual({ a: 'b' });
  });

  it('past the per-run cap of 64 attributes is a 400', () => {
    const attributes = Object.fromEntries(Array.from({ length: 64 }, (_, i) => [`k${i}`, 'v']));
    const run = { ...runningRun(), attributes };
    expect(thrown(() => decide({ run, request: attrSet([{ key: 'one-more', value: 'v' }]) })).status).toBe(
      400,
    );
    expect(decide({ run, request: attrSet([{ key: 'k0', value: 'w' }]) }).run!.value.attributes.k0).toBe('w');
  });

  it('on a run that is over is EntityConflictError; on a missing run WorkflowRunNotFoundError', () => {
    const request = attrSet([{ key: 'a', value: 'b' }]);
    expect(thrown(() => decide({ run: endedRun('completed'), request })).name).toBe('EntityConflictError');
    expect(thrown(() => decide({ request })).name).toBe('WorkflowRunNotFoundError');
  });
});

describe('steps', () => {
  it('step_created creates a pending step at attempt 0', () => {
    const step = createdStep();
    expect(step).toEqual({
      runId: RUN,
      stepId: STEP,
      stepName: 'add',
      status: 'pending',
      input: INPUT,
      attempt: 0,
      createdAt: new Date(NOW),
      updatedAt: new Date(NOW),
      specVersion: 5,
    });
  });

  it('a second step_created is EntityConflictError, and so is one on a run that is over', () => {
    const request = {
      eventType: 'step_created',
      correlationId: STEP,
      eventData: { stepName: 'add', input: INPUT },
    };
    expect(thrown(() => decide({ run: runningRun(), step: createdStep(), request })).name).toBe(
      'EntityConflictError',
    );
    expect(thrown(() => decide({ run: endedRun('failed'), request })).name).toBe('EntityConflictError');
  });

  it('step_started runs the step, counts the attempt, and sets startedAt on the first start only', () => {
    const first = startStep(createdStep(), NOW + 10);
    expect(first.step).toEqual({
      op: 'update',
      value: {
        ...createdStep(),
        status: 'running',
        attempt: 1,
        startedAt: new Date(NOW + 10),
        updatedAt: new Date(NOW + 10),
      },
    });
    expect(first.reply).toEqual({ step: first.step!.value });
    const second = startStep(first.step!.value, NOW + 2000);
    expect(second.step!.value).toMatchObject({
      attempt: 2,
      startedAt: new Date(NOW + 10),
      updatedAt: new Date(NOW + 2000),
    });
  });

  it('step_started on an unknown step (no input: not lazy) is WorkflowWorldError, with no status', () => {
    const err = thrown(() =>
      decide({ run: runningRun(), step: null, request: { eventType: 'step_started', correlationId: STEP } }),
    );
    expect([err.name, err.status]).toEqual(['WorkflowWorldError', undefined]);
    expect(err.message).toContain(STEP);
  });

  it('a lazy step_started creates the step (synthetic step_created), starts it, says stepCreated', () => {
    const d = decide({
      run: runningRun(),
      step: null,
      request: {
        eventType: 'step_started',
        correlationId: STEP,
        eventData: { stepName: 'add', input: INPUT, ownerMessageId: 'msg|ü' },
      },
    });
    expect(d.events).toEqual([
      {
        eventType: 'step_created',
        correlationId: STEP,
        eventData: { stepName: 'add', input: INPUT },
        runId: RUN,
        createdAt: new Date(NOW),
        specVersion: 5,
      },
      {
        eventType: 'step_started',
        correlationId: STEP,
        eventData: { stepName: 'add', ownerMessageId: 'msg|ü' },
        runId: RUN,
        createdAt: new Date(NOW),
        specVersion: 5,
      },
    ]);
    expect(d.step!.op).toBe('insert');
    expect(d.step!.value).toMatchObject({
      status: 'running',
      attempt: 1,
      input: INPUT,
      startedAt: new Date(NOW),
    });
    expect(d.reply.stepCreated).toBe(true);
  });

  it('a lazy step_started of a step that exists lost the create race: EntityConflictError', () => {
    const request = {
      eventType: 'step_started',
      correlationId: STEP,
      eventData: { stepName: 'add', input: INPUT },
    };
    expect(thrown(() => decide({ run: runningRun(), step: createdStep(), request })).name).toBe(
      'EntityConflictError',
    );
  });

  it('on an ended run: a lazy start conflicts, a non-running step is expired, a running one finishes', () => {
    const run = endedRun('cancelled');
    const lazy = {
      eventType: 'step_started',
      correlationId: STEP,
      eventData: { stepName: 'add', input: INPUT },
    };
    expect(thrown(() => decide({ run, request: lazy })).name).toBe('EntityConflictError');
    expect(thrown(() => startStep(createdStep(), NOW, run)).name).toBe('RunExpiredError');
    const running = startStep(createdStep()).step!.value;
    const done = decide({
      run,
      step: running,
      request: { eventType: 'step_completed', correlationId: STEP, eventData: { result: bytes(0) } },
    });
    expect(done.step!.value.status).toBe('completed');
  });

  it('step_retrying puts the step back to pending with the error and retryAfter', () => {
    const running = startStep(createdStep()).step!.value;
    const error = bytes(0, 9);
    const d = decide({
      now: NOW + 1,
      run: runningRun(),
      step: running,
      request: {
        eventType: 'step_retrying',
        correlationId: STEP,
        eventData: { error, retryAfter: new Date(NOW + 2500).toISOString() },
      },
    });
    expect(d.step!.value).toMatchObject({
      status: 'pending',
      error,
      retryAfter: new Date(NOW + 2500),
      attempt: 1,
    });
  });

  it('step_started before retryAfter is TooEarlyError (whole seconds); at retryAfter it starts', () => {
    const waiting: Step = {
      ...startStep(createdStep()).step!.value,
      status: 'pending',
      retryAfter: new Date(NOW + 2500),
    };
    const err = thrown(() => startStep(waiting, NOW));
    expect([err.name, err.retryAfter]).toEqual(['TooEarlyError', 3]);
    expect(thrown(() => startStep(waiting, NOW + 2499)).retryAfter).toBe(1);
    const started = startStep(waiting, NOW + 2500).step!.value;
    expect(started.attempt).toBe(2);
    expect(started).not.toHaveProperty('retryAfter');
  });

  it('step_completed stores the result as output; step_failed stores the error; both set completedAt', () => {
    const running = startStep(createdStep()).step!.value;
    const result = bytes(0x22, 0x00);
    const done = decide({
      now: NOW + 4,
      run: runningRun(),
      step: running,
      request: { eventType: 'step_completed', correlationId: STEP, eventData: { result } },
    });
    expect(done.step!.value).toMatchObject({
      status: 'completed',
      output: result,
      completedAt: new Date(NOW + 4),
    });
    const error = bytes(0x00);
    const failed = decide({
      now: NOW + 4,
      run: runningRun(),
      step: running,
      request: { eventType: 'step_failed', correlationId: STEP, eventData: { error } },
    });
    expect(failed.step!.value).toMatchObject({ status: 'failed', error, completedAt: new Date(NOW + 4) });
  });

  it('any event on a terminal step is EntityConflictError', () => {
    const completed: Step = { ...createdStep(), status: 'completed' };
    for (const request of [
      { eventType: 'step_started', correlationId: STEP },
      { eventType: 'step_completed', correlationId: STEP, eventData: { result: bytes(1) } },
      { eventType: 'step_failed', correlationId: STEP, eventData: { error: bytes(1) } },
      { eventType: 'step_retrying', correlationId: STEP, eventData: { error: bytes(1) } },
    ]) {
      expect(thrown(() => decide({ run: runningRun(), step: completed, request })).name).toBe(
        'EntityConflictError',
      );
    }
  });

  it('step_completed on an unknown step is WorkflowWorldError', () => {
    const request = { eventType: 'step_completed', correlationId: STEP, eventData: { result: bytes(1) } };
    expect(thrown(() => decide({ run: runningRun(), request })).name).toBe('WorkflowWorldError');
  });
});

describe('hooks', () => {
  it('hook_created creates a hook holding its token, owned by the World’s owner', () => {
    const metadata = bytes(0, 7);
    const d = decide({
      run: runningRun(),
      request: { ...hookCreated, eventData: { token: TOKEN, metadata, isWebhook: true } },
    });
    expect(d.hook).toEqual({
      op: 'insert',
      value: {
        runId: RUN,
        hookId: HOOK,
        token: TOKEN,
        ...OWNER,
        metadata,
        createdAt: new Date(NOW),
        specVersion: 5,
        isWebhook: true,
        isSystem: false,
      },
    });
    expect(d.reply).toEqual({ hook: d.hook!.value });
  });

  it('a token another live hook holds records hook_conflict, naming its run, and creates no hook', () => {
    const d = decide({
      run: runningRun(),
      tokenHolder: { runId: OTHER_RUN, hookId: 'hook|other' },
      request: hookCreated,
    });
    expect(d).toEqual({
      events: [
        {
          eventType: 'hook_conflict',
          correlationId: HOOK,
          eventData: { token: TOKEN, conflictingRunId: OTHER_RUN },
          runId: RUN,
          createdAt: new Date(NOW),
          specVersion: 5,
        },
      ],
      removals: [],
      reply: {},
    });
  });

  it('a second hook_created for the hook is EntityConflictError, not a conflict with itself', () => {
    const run = runningRun();
    expect(thrown(() => decide({ run, hook: liveHook(), request: hookCreated })).name).toBe(
      'EntityConflictError',
    );
    expect(
      thrown(() => decide({ run, tokenHolder: { runId: RUN, hookId: HOOK }, request: hookCreated })).name,
    ).toBe('EntityConflictError');
  });

  it('hook_created on a run that is over is EntityConflictError', () => {
    expect(thrown(() => decide({ run: endedRun('completed'), request: hookCreated })).name).toBe(
      'EntityConflictError',
    );
  });

  it('hook_received is recorded and changes nothing', () => {
    const payload = bytes(0, 0, 1);
    const d = decide({
      run: runningRun(),
      hook: liveHook(),
      request: { eventType: 'hook_received', correlationId: HOOK, eventData: { token: TOKEN, payload } },
    });
    expect(d).toEqual({
      events: [
        {
          eventType: 'hook_received',
          correlationId: HOOK,
          eventData: { token: TOKEN, payload },
          runId: RUN,
          createdAt: new Date(NOW),
          specVersion: 5,
        },
      ],
      removals: [],
      reply: {},
    });
  });

  it('hook_received for a missing hook, or another run’s, is HookNotFoundError', () => {
    const request = { eventType: 'hook_received', correlationId: HOOK, eventData: { payload: bytes(1) } };
    const err = thrown(() => decide({ run: runningRun(), hook: null, request }));
    expect([err.name, err.token]).toEqual(['HookNotFoundError', HOOK]);
    const foreign = { ...liveHook(), runId: OTHER_RUN };
    expect(thrown(() => decide({ run: runningRun(), hook: foreign, request })).name).toBe(
      'HookNotFoundError',
    );
  });

  it('hook_disposed removes the hook; disposing it again finds no hook: HookNotFoundError', () => {
    const request = { eventType: 'hook_disposed', correlationId: HOOK };
    const d = decide({ run: runningRun(), hook: liveHook(), request });
    expect(d.removals).toEqual([{ kind: 'hook', hookId: HOOK }]);
    expect(d.events.map((e) => e.eventType)).toEqual(['hook_disposed']);
    expect(thrown(() => decide({ run: runningRun(), hook: null, request })).name).toBe('HookNotFoundError');
  });
});

describe('waits', () => {
  it('wait_created creates a waiting wait until resumeAt (an ISO string becomes a Date)', () => {
    const d = decide({
      run: runningRun(),
      request: {
        eventType: 'wait_created',
        correlationId: WAIT,
        eventData: { resumeAt: new Date(NOW + HOUR).toISOString() },
      },
    });
    expect(d.wait).toEqual({
      op: 'insert',
      value: {
        waitId: `${RUN}-${WAIT}`,
        runId: RUN,
        status: 'waiting',
        resumeAt: new Date(NOW + HOUR),
        createdAt: new Date(NOW),
        updatedAt: new Date(NOW),
        specVersion: 5,
      },
    });
  });

  it('a second wait_created is EntityConflictError', () => {
    const request = {
      eventType: 'wait_created',
      correlationId: WAIT,
      eventData: { resumeAt: new Date(NOW) },
    };
    expect(thrown(() => decide({ run: runningRun(), wait: waitingWait(), request })).name).toBe(
      'EntityConflictError',
    );
  });

  it('wait_completed completes the wait at the clock time; twice is EntityConflictError', () => {
    const request = { eventType: 'wait_completed', correlationId: WAIT };
    const d = decide({ now: NOW + HOUR, run: runningRun(), wait: waitingWait(), request });
    expect(d.wait).toEqual({
      op: 'update',
      value: {
        ...waitingWait(),
        status: 'completed',
        completedAt: new Date(NOW + HOUR),
        updatedAt: new Date(NOW + HOUR),
      },
    });
    expect(thrown(() => decide({ run: runningRun(), wait: d.wait!.value, request })).name).toBe(
      'EntityConflictError',
    );
  });

  it('wait_completed on an unknown wait is WorkflowWorldError', () => {
    const err = thrown(() =>
      decide({
        run: runningRun(),
        wait: null,
        request: { eventType: 'wait_completed', correlationId: WAIT },
      }),
    );
    expect(err.name).toBe('WorkflowWorldError');
    expect(err.message).toContain(WAIT);
  });
});
