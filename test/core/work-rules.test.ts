// The work-item rules both backends share, as pure functions: why a fenced write matched nothing (each
// refusal's code, message and details, which tell a caller what to do), which repeated calls are recognised
// as repeats, how batch events are read back per item and digested for an agent, and how run and document
// keys are parsed. The backends' behaviour around them is the conformance suite's; these pin the rules.
import { describe, expect, it } from 'vitest';
import { enqueuedEvent, replayedEvent, retriedEvent } from '../../src/core/codecs/work-items.js';
import type { WorkItem } from '../../src/core/types.js';
import { digestBatchEvent, expandBatchEvent } from '../../src/core/work/batches.js';
import { historyBuckets } from '../../src/core/work/history.js';
import { noLimit } from '../../src/core/work/limits.js';
import {
  humanDecisionRefusal,
  ownerOf,
  runParentOf,
  runQuestionRefusal,
  runSignalName,
} from '../../src/core/work/owners.js';
import {
  checkRecord,
  checkSignal,
  checkUnless,
  explainLeaseFailure,
  explainRetryFailure,
  explainStatusFailure,
  isRefusal,
  isRepeatedHumanResolution,
  isRepeatedResolve,
  unmatchedResolve,
  wakesFor,
} from '../../src/core/work/refusals.js';
import { canTransition, claimerKind, isTerminal, STORE_ACTOR_KIND } from '../../src/core/work/rules.js';
import { StorageUnavailableError } from '../../src/errors.js';
import { refusal } from '../helpers/refusals.js';

const T = '2027-01-01T00:00:00.000Z';

function item(over: Partial<WorkItem> = {}): WorkItem {
  return {
    id: 'wi|1+é',
    title: 't',
    kind: null,
    status: 'in_flight',
    priority: 0,
    payload: null,
    notes: {},
    result: null,
    error: null,
    attempts: 2,
    max_attempts: 3,
    lease_owner: 'w1',
    lease_expires_at: T,
    claimed_at: T,
    blocked_by: [],
    not_before: null,
    idempotency_key: null,
    created_at: T,
    updated_at: T,
    resolved_at: null,
    on_blocker_failure: 'wait',
    cascaded_from: null,
    concurrency_key: null,
    traceparent: null,
    ...over,
  };
}

const lease = (over: Partial<{ worker: string; attempt: number | null }> = {}) => ({
  id: 'wi|1+é',
  worker: 'w1',
  attempt: 2 as number | null,
  now: 0,
  ...over,
});

describe('explainLeaseFailure', () => {
  it('no item: NOT_FOUND naming it', () => {
    const e = refusal(() => explainLeaseFailure(null, lease(), 'resolve'));
    expect([e.code, e.message, e.details]).toEqual([
      'NOT_FOUND',
      'work item wi|1+é not found',
      { id: 'wi|1+é' },
    ]);
  });

  it('never claimed, or finished by this very lease: INVALID_TRANSITION, not in flight', () => {
    const never = refusal(() =>
      explainLeaseFailure(item({ status: 'pending', attempts: 0 }), lease(), 'heartbeat'),
    );
    expect([never.code, never.message]).toEqual([
      'INVALID_TRANSITION',
      'cannot heartbeat work item wi|1+é: it is pending, not in_flight',
    ]);
    expect(never.details).toMatchObject({
      from: 'pending',
      status: 'pending',
      worker: 'w1',
      current_attempt: 0,
    });
    const mine = refusal(() => explainLeaseFailure(item({ status: 'done' }), lease(), 'release'));
    expect([mine.code, mine.message]).toEqual([
      'INVALID_TRANSITION',
      'cannot release work item wi|1+é: it is done, not in_flight',
    ]);
    // The same worker without an attempt is still this lease.
    expect(
      refusal(() => explainLeaseFailure(item({ status: 'failed' }), lease({ attempt: null }), 'x')).code,
    ).toBe('INVALID_TRANSITION');
  });

  it('gone back to pending, or finished by another lease or attempt: LEASE_LOST, naming the last holder', () => {
    const back = refusal(() => explainLeaseFailure(item({ status: 'pending' }), lease(), 'resolve'));
    expect([back.code, back.message]).toEqual([
      'LEASE_LOST',
      'cannot resolve work item wi|1+é: the lease of w1 is gone (the item is now pending)',
    ]);
    const theirs = refusal(() =>
      explainLeaseFailure(item({ status: 'done', lease_owner: 'w2' }), lease(), 'resolve'),
    );
    expect(theirs.message).toBe(
      'cannot resolve work item wi|1+é: the lease of w1 is gone (the item is now done, last held by w2)',
    );
    expect(theirs.details).toEqual({
      id: 'wi|1+é',
      status: 'done',
      worker: 'w1',
      lease_owner: 'w2',
      attempt: 2,
      current_attempt: 2,
    });
    const older = refusal(() =>
      explainLeaseFailure(item({ status: 'done' }), lease({ attempt: 1 }), 'resolve'),
    );
    expect(older.code).toBe('LEASE_LOST');
  });

  it('in flight under another worker, another attempt, or expired: LEASE_LOST saying which', () => {
    expect(refusal(() => explainLeaseFailure(item({ lease_owner: 'w2' }), lease(), 'resolve')).message).toBe(
      'cannot resolve work item wi|1+é: it is leased to w2, not w1',
    );
    expect(refusal(() => explainLeaseFailure(item({ attempts: 3 }), lease(), 'resolve')).message).toBe(
      'cannot resolve work item wi|1+é: your attempt 2 is not the current attempt 3',
    );
    const expired = refusal(() => explainLeaseFailure(item(), lease({ attempt: null }), 'heartbeat'));
    expect([expired.code, expired.message]).toEqual([
      'LEASE_LOST',
      'cannot heartbeat work item wi|1+é: the lease of w1 expired',
    ]);
    expect(expired.details).toMatchObject({ lease_expires_at: T, attempt: null });
  });
});

describe('isRepeatedResolve', () => {
  const q = {
    worker: 'w1',
    attempt: 2 as number | null,
    status: 'done' as const,
    error: null,
    retry_at: null,
  };

  it('a finished item: the same status by the same worker, on the same attempt or none named', () => {
    const done = item({ status: 'done' });
    expect(isRepeatedResolve(done, q)).toBe(true);
    expect(isRepeatedResolve(done, { ...q, attempt: null })).toBe(true);
    expect(isRepeatedResolve(done, { ...q, attempt: 1 })).toBe(false);
    expect(isRepeatedResolve(done, { ...q, worker: 'w2' })).toBe(false);
    expect(isRepeatedResolve(done, { ...q, status: 'failed' })).toBe(false);
    expect(isRepeatedResolve(null, q)).toBe(false);
  });

  it('a failure sent back to wait: only with its attempt, retry time and error all the same', () => {
    const retryAt = Date.parse('2027-01-01T00:00:05.000Z');
    const waiting = item({
      status: 'pending',
      lease_owner: null,
      not_before: new Date(retryAt).toISOString(),
      error: 'boom',
    });
    const f = { ...q, status: 'failed' as const, error: 'boom', retry_at: retryAt };
    expect(isRepeatedResolve(waiting, f)).toBe(true);
    expect(isRepeatedResolve(waiting, { ...f, status: 'done' })).toBe(false);
    expect(isRepeatedResolve(waiting, { ...f, attempt: null })).toBe(false);
    expect(isRepeatedResolve(waiting, { ...f, attempt: 1 })).toBe(false);
    expect(isRepeatedResolve(waiting, { ...f, retry_at: null })).toBe(false);
    expect(isRepeatedResolve(waiting, { ...f, retry_at: retryAt + 1 })).toBe(false);
    expect(isRepeatedResolve(waiting, { ...f, error: 'other' })).toBe(false);
  });
});

describe('isRepeatedHumanResolution', () => {
  const answered = item({ status: 'done', result: { answer: 'yes' }, lease_owner: null });
  const newest = { type: 'work_item_resolved', actor: 'ana', data: { status: 'done', actor_kind: 'human' } };
  const q = { worker: 'ana', status: 'done' as const, result: { answer: 'yes' }, error: null };

  it('the same answer by the same person, after a resolution outside a lease', () => {
    expect(isRepeatedHumanResolution(answered, newest, q)).toBe(true);
    expect(isRepeatedHumanResolution(answered, null, q)).toBe(false);
    expect(isRepeatedHumanResolution(answered, { ...newest, type: 'work_item_cancelled' }, q)).toBe(false);
    expect(isRepeatedHumanResolution(answered, { ...newest, actor: 'bo' }, q)).toBe(false);
    expect(isRepeatedHumanResolution(answered, { ...newest, data: null }, q)).toBe(false);
    expect(isRepeatedHumanResolution(answered, { ...newest, data: ['x'] }, q)).toBe(false);
    // A resolution inside a lease names its worker: a late worker is never taken for the person's retry.
    expect(isRepeatedHumanResolution(answered, { ...newest, data: { worker: 'ana' } }, q)).toBe(false);
    expect(isRepeatedHumanResolution(answered, newest, { ...q, result: { answer: 'no' } })).toBe(false);
    expect(isRepeatedHumanResolution(answered, newest, { ...q, error: 'x' })).toBe(false);
  });
});

describe('batch events read back per item', () => {
  const batch = (data: unknown, extra: object = {}) => ({
    type: 'work_items_claimed',
    data: data as never,
    actor: 'w1',
    work_item_id: null,
    ...extra,
  });

  it('each entry as its own event: the batch actor and actor kind unless the entry names its own', () => {
    expect(
      expandBatchEvent(
        batch({
          actor_kind: 'model',
          items: [
            { id: 'a', attempt: 1 },
            { id: 'b', actor: 'w2', attempt: 1 },
            { id: 'c', actor: null, actor_kind: 'tool' },
          ],
        }),
      ),
    ).toEqual([
      {
        work_item_id: 'a',
        type: 'work_item_claimed',
        data: { attempt: 1, actor_kind: 'model' },
        actor: 'w1',
      },
      {
        work_item_id: 'b',
        type: 'work_item_claimed',
        data: { attempt: 1, actor_kind: 'model' },
        actor: 'w2',
      },
      { work_item_id: 'c', type: 'work_item_claimed', data: { actor_kind: 'tool' }, actor: null },
    ]);
    expect(expandBatchEvent(batch({ items: [{ id: 'a' }] }))).toStrictEqual([
      { work_item_id: 'a', type: 'work_item_claimed', data: {}, actor: 'w1' },
    ]);
  });

  it('no batch event: null; a batch event that lists no items as batches do: malformed', () => {
    expect(expandBatchEvent(batch({ items: [{ id: 'a' }] }, { type: 'work_item_claimed' }))).toBeNull();
    expect(expandBatchEvent(batch({ items: [{ id: 'a' }] }, { work_item_id: 'a' }))).toBeNull();
    for (const data of [
      null,
      [],
      { items: [] },
      { items: {} },
      { items: [null] },
      { items: [['a']] },
      { items: [{ id: 1 }] },
      { items: [{ id: 'a' }, { id: 'a' }] },
      { items: [{ id: 'a', actor: 7 }] },
    ]) {
      expect(expandBatchEvent(batch(data)), JSON.stringify(data)).toBe('malformed');
    }
  });

  it('digested for an agent: the count, the first five ids and how to read one; anything else as it is', () => {
    const items = Array.from({ length: 7 }, (_, k) => ({ id: `id|${k}`, payload: 'x'.repeat(100) }));
    expect(digestBatchEvent(batch({ items: [{ no: 'id' }, null, ...items] })).data).toEqual({
      batch_of: 9,
      first_ids: ['id|0', 'id|1', 'id|2', 'id|3', 'id|4'],
      read: "one item's part: read the events of its work_item_id",
    });
    for (const e of [
      batch({ items }, { type: 'work_item_claimed' }),
      batch({ items }, { work_item_id: 'a' }),
      batch(['x']),
      batch({ items: 'x' }),
    ]) {
      expect(digestBatchEvent(e)).toBe(e);
    }
  });
});

describe('keys', () => {
  it('a run key names its parent, role, step and number; anything else is no run', () => {
    const key = (k: string | null) => runParentOf({ idempotency_key: k });
    expect(key('run:wi|p+é#ask#q 1#2')).toEqual({ parent: 'wi|p+é', role: 'ask', stepKey: 'q 1', n: 2 });
    expect(key('run:p#spawn#s#0')).toEqual({ parent: 'p', role: 'spawn', stepKey: 's', n: 0 });
    expect(key('run:p#spawn#s#12')).toMatchObject({ n: 12 });
    expect(key('run:p#spawn#s#1x')).toBeNull();
    for (const k of [
      null,
      'p#ask#s#1',
      'run:#ask#s#1',
      'run:p#other#s#1',
      'run:p#ask##1',
      'run:p#ask#s#',
      'run:p#ask#s#x1',
    ]) {
      expect(key(k), String(k)).toBeNull();
    }
  });

  it("a document's key names its kind and id (the id may hold # and /); anything else is no document", () => {
    expect(ownerOf({ idempotency_key: 'doc:plan/a/b#c#ask' })).toEqual({ kind: 'plan', id: 'a/b#c' });
    for (const k of [null, 'plan/a#k', 'doc:plan#k', 'doc:plan#x/y']) {
      expect(ownerOf({ idempotency_key: k }), String(k)).toBeNull();
    }
  });

  it('a human decision says who may end it and how', () => {
    const decision = item({ status: 'waiting_human', idempotency_key: 'doc:plan/p1#approve' });
    const cancel = humanDecisionRefusal(decision, 'cancel');
    expect(cancel.message).toBe(
      'cannot cancel work item wi|1+é: it is a human decision of plan/p1; only a human cancels it (actor_kind human and the name of who cancels; CLI: agentstate cancel wi|1+é --actor <name> --actor-kind human)',
    );
    expect(cancel.details).toEqual({ id: 'wi|1+é', owner: 'plan/p1', rule: 'human-decision' });
    expect(humanDecisionRefusal(decision, 'resolve').message).toBe(
      `cannot resolve work item wi|1+é: it is a human decision of plan/p1; a human answers it: resolve it done with the answer as a human (actor_kind human and the name of who answered; CLI: agentstate resolve wi|1+é done --result '{"answer":…}' --actor <name> --actor-kind human)`,
    );
  });
});

describe('explainRetryFailure', () => {
  it('NOT_FOUND; a human decision; a run question; anything not failed or cancelled', () => {
    const missing = refusal(() => explainRetryFailure(null, 'x|1'));
    expect([missing.code, missing.message, missing.details]).toEqual([
      'NOT_FOUND',
      'work item x|1 not found',
      { id: 'x|1' },
    ]);
    const decision = refusal(() =>
      explainRetryFailure(item({ status: 'cancelled', idempotency_key: 'doc:plan/p1#k' }), 'wi|1+é'),
    );
    expect([decision.code, decision.details?.rule]).toEqual(['PERMISSION_DENIED', 'human-decision']);
    expect(decision.message).toBe(
      'cannot retry work item wi|1+é: it is a human decision of plan/p1; a human asks it again, on its own: retry it with actor_kind human and the name of who asks (CLI: agentstate retry wi|1+é --actor <name> --actor-kind human)',
    );
    const question = refusal(() =>
      explainRetryFailure(item({ status: 'failed', idempotency_key: 'run:parent#ask#q#1' }), 'wi|1+é'),
    );
    expect([question.code, question.details]).toEqual([
      'INVALID_TRANSITION',
      { id: 'wi|1+é', from: 'failed', to: 'pending', rule: 'run-question' },
    ]);
    expect(question.message).toContain('the run of parent asked');
    // Unfinished, a decision or a question is refused as any item is.
    for (const key of [null, 'doc:plan/p1#k', 'run:parent#ask#q#1']) {
      const e = refusal(() =>
        explainRetryFailure(item({ status: 'pending', idempotency_key: key }), 'wi|1+é'),
      );
      expect([e.code, e.message, e.details]).toEqual([
        'INVALID_TRANSITION',
        'cannot retry work item wi|1+é: it is pending; only a failed or cancelled item can be retried',
        { id: 'wi|1+é', from: 'pending', to: 'pending' },
      ]);
    }
  });
});

describe('small rules', () => {
  it('the claimer of the n-th item, each taking up to its limit in turn; past them, the store', () => {
    const claimers = [
      { worker: 'a', actor_kind: 'model' as const, lease_ms: 1, limit: 2 },
      { worker: 'b', actor_kind: 'tool' as const, lease_ms: 1, limit: 1 },
    ];
    expect([1, 2, 3, 4].map((n) => claimerKind(claimers, n))).toEqual([
      'model',
      'model',
      'tool',
      STORE_ACTOR_KIND,
    ]);
  });

  it('history rows into spans: every count, unknown rows and spans ignored', () => {
    expect(
      historyBuckets(2, [
        { what: 'created', b: 0, n: 2 },
        { what: 'done', b: 1, n: 1 },
        { what: 'failed', b: 1, n: 3 },
        { what: 'cancelled', b: 0, n: 1 },
        { what: 'created', b: 0, n: 1 },
        { what: 'other', b: 0, n: 9 },
        { what: 'done', b: 5, n: 9 },
      ]),
    ).toEqual([
      { created: 3, done: 0, failed: 0, cancelled: 1 },
      { created: 0, done: 1, failed: 3, cancelled: 0 },
    ]);
  });
});

describe('events the rules build', () => {
  it('work_item_enqueued names only what is set, then what verify checks the row against', () => {
    const plain = enqueuedEvent(item({ status: 'pending', payload: { a: 1 } }), 'p', 'tool', 5);
    expect(Object.keys(plain.data as object)).toEqual([
      'title',
      'priority',
      'payload_hash',
      'max_attempts',
      'actor_kind',
    ]);
    const full = enqueuedEvent(
      item({
        status: 'waiting_human',
        kind: 'mail',
        blocked_by: ['b'],
        idempotency_key: 'k|1',
        on_blocker_failure: 'cascade',
        concurrency_key: 'ck',
        traceparent: '00-aa-bb-01',
        not_before: T,
      }),
      'p',
      'human',
      5,
    );
    expect(full.data).toMatchObject({
      kind: 'mail',
      blocked_by: ['b'],
      idempotency_key: 'k|1',
      status: 'waiting_human',
      on_blocker_failure: 'cascade',
      concurrency_key: 'ck',
      traceparent: '00-aa-bb-01',
      not_before: T,
      actor_kind: 'human',
    });
  });

  it('work_item_replayed and work_item_retried record what the item was', () => {
    expect(replayedEvent(item(), 'restarter', 9).data).toEqual({
      status: 'in_flight',
      attempts: 2,
      lease_owner: 'w1',
      actor_kind: STORE_ACTOR_KIND,
    });
    const previous = item({ status: 'cancelled', error: 'blocker b ended failed', cascaded_from: 'b' });
    const q = { id: 'wi|1+é', reason: null, actor: 'ana', actor_kind: 'human' as const, now: 9 };
    expect(retriedEvent(item({ status: 'pending' }), previous, q).data).toEqual({
      status: 'pending',
      max_attempts: 3,
      previous_status: 'cancelled',
      previous_error: 'blocker b ended failed',
      previous_attempts: 2,
      previous_blocker: 'b',
      actor_kind: 'human',
    });
    const plain = retriedEvent(item({ status: 'pending' }), item({ status: 'failed' }), {
      ...q,
      reason: 'again',
    });
    expect(plain.data).not.toHaveProperty('previous_blocker');
    expect(plain.data).toMatchObject({ reason: 'again' });
    expect(retriedEvent(item(), item({ status: 'failed' }), q).data).not.toHaveProperty('reason');
  });
});

describe('durable-run and signal rules', () => {
  const record = (over: object = {}) => ({
    id: 'wi|1+é',
    lease: { worker: 'w1', attempt: 2 },
    events: [],
    release: null,
    now: Date.parse(T) - 1,
    ...over,
  });

  it('a record under a lease needs the unexpired lease of that worker on that attempt', () => {
    expect(() => checkRecord(item(), record())).not.toThrow();
    expect(refusal(() => checkRecord(null, record())).code).toBe('NOT_FOUND');
    for (const current of [
      item({ status: 'pending' }),
      item({ lease_owner: 'w2' }),
      item({ attempts: 3 }),
      item({ lease_expires_at: null }),
    ]) {
      expect(refusal(() => checkRecord(current, record())).code, JSON.stringify(current)).toMatch(
        /LEASE_LOST|INVALID_TRANSITION/,
      );
    }
    // At the lease's end it has run out.
    const e = refusal(() => checkRecord(item(), record({ now: Date.parse(T) })));
    expect([e.code, e.message]).toEqual([
      'LEASE_LOST',
      'cannot record a step of work item wi|1+é: the lease of w1 expired',
    ]);
  });

  it("a person's reset (no lease) needs the item, not in flight", () => {
    const missing = refusal(() => checkRecord(null, record({ lease: null })));
    expect([missing.code, missing.message, missing.details]).toEqual([
      'NOT_FOUND',
      'work item wi|1+é not found',
      { id: 'wi|1+é' },
    ]);
    const busy = refusal(() => checkRecord(item(), record({ lease: null })));
    expect([busy.code, busy.details]).toEqual(['INVALID_TRANSITION', { id: 'wi|1+é', from: 'in_flight' }]);
    expect(busy.message).toBe(
      'cannot reset a step of work item wi|1+é: it is in flight (held by w1); reset it once that attempt has ended',
    );
    expect(() => checkRecord(item({ status: 'pending' }), record({ lease: null }))).not.toThrow();
  });

  it('a wait that a signal came for meanwhile is refused; a signal needs an unfinished item', () => {
    const q = record({ unless: { signal: 'go|1', count: 2 } });
    expect(() => checkUnless(q, 1)).not.toThrow();
    expect(() => checkUnless(record(), 5)).not.toThrow();
    const came = refusal(() => checkUnless(q, 2));
    expect([came.code, came.message, came.details]).toEqual([
      'STATE_CONFLICT',
      'work item wi|1+é was sent signal "go|1" meanwhile: the wait takes it instead of handing the item back',
      { id: 'wi|1+é', reason: 'signal_arrived', signal: 'go|1' },
    ]);
    const signal = { id: 'wi|1+é', name: 'go', build: () => ({}) as never, now: 0 };
    const gone = refusal(() => checkSignal(null, signal));
    expect([gone.code, gone.message, gone.details]).toEqual([
      'NOT_FOUND',
      'work item wi|1+é not found',
      { id: 'wi|1+é' },
    ]);
    const ended = refusal(() => checkSignal(item({ status: 'done' }), signal));
    expect([ended.code, ended.details]).toEqual(['INVALID_TRANSITION', { id: 'wi|1+é', from: 'done' }]);
    expect(ended.message).toBe(
      'cannot signal work item wi|1+é: it is done, and no run of it will wait again (retry it first)',
    );
    expect(() => checkSignal(item(), signal)).not.toThrow();
  });

  it('a signal wakes an item handed back by a wait for that name only', () => {
    const waiting = { type: 'waiting', name: 'go' };
    expect(wakesFor(item({ status: 'pending' }), waiting, 'go')).toBe(true);
    expect(wakesFor(item({ status: 'in_flight' }), waiting, 'go')).toBe(false);
    expect(wakesFor(item({ status: 'pending' }), waiting, 'stop')).toBe(false);
    expect(wakesFor(item({ status: 'pending' }), { type: 'step', name: 'go' }, 'go')).toBe(false);
    expect(wakesFor(item({ status: 'pending' }), null, 'go')).toBe(false);
  });

  it("a run's question: its signal, and who may end it", () => {
    expect([runSignalName('ask', 'q'), runSignalName('spawn', 's')]).toEqual(['answer:q', 'join:s']);
    const question = item({ status: 'waiting_human', idempotency_key: 'run:parent|1#ask#q#1' });
    const e = runQuestionRefusal(question, 'cancel');
    expect(e.message).toMatch(
      /^cannot cancel work item wi\|1\+é: it is a question the run of parent\|1 asked a person; a human answers it/,
    );
    expect(e.details).toEqual({ id: 'wi|1+é', run: 'parent|1', rule: 'human-decision' });
  });
});

describe('what a resolve that matched no row comes to', () => {
  const q = {
    id: 'wi|1+é',
    worker: 'w1',
    attempt: 2,
    actor_kind: 'model' as const,
    status: 'done' as const,
    result: { a: 1 },
    error: null,
    retry_at: null,
    now: 7,
  };
  it('a repeat: nothing; waiting for a human: the status change; else the refusal, naming the resolve', () => {
    expect(unmatchedResolve(item({ status: 'done' }), q)).toBeNull();
    expect(unmatchedResolve(item({ status: 'waiting_human', lease_owner: null }), q)).toMatchObject({
      from: ['waiting_human'],
      to: 'done',
      event: 'work_item_resolved',
      actor: 'w1',
    });
    expect(refusal(() => unmatchedResolve(item({ lease_owner: 'w2' }), q)).message).toBe(
      'cannot resolve work item wi|1+é: it is leased to w2, not w1',
    );
    const decision = refusal(() =>
      unmatchedResolve(item({ status: 'waiting_human', idempotency_key: 'doc:plan/p#k' }), q),
    );
    expect(decision.message).toMatch(
      /^cannot resolve work item wi\|1\+é: it is a human decision of plan\/p; a human answers it/,
    );
    const question = refusal(() =>
      unmatchedResolve(item({ status: 'waiting_human', idempotency_key: 'run:p#ask#q#1' }), q),
    );
    expect(question.message).toMatch(
      /^cannot resolve work item wi\|1\+é: it is a question the run of p asked/,
    );
    expect(
      unmatchedResolve(item({ status: 'waiting_human', idempotency_key: 'run:p#ask#q#1' }), {
        ...q,
        actor_kind: 'human',
      }),
    ).toMatchObject({ to: 'done' });
  });
});

describe('refusals and states', () => {
  it('a refusal is an item-level answer; a storage failure or a plain error is not', () => {
    const lost = refusal(() => explainLeaseFailure(item({ lease_owner: 'w2' }), lease(), 'resolve'));
    expect(isRefusal(lost)).toBe(true);
    expect(isRefusal(new Error('boom'))).toBe(false);
    expect(isRefusal(new StorageUnavailableError('down'))).toBe(false);
    expect(isRefusal(noLimit('k'))).toBe(true);
    expect([noLimit('k|1').message, noLimit('k|1').details]).toEqual([
      'concurrency key k|1 has no limit',
      { key: 'k|1' },
    ]);
  });

  it('the state machine: terminal states and one-step moves', () => {
    expect(['done', 'failed', 'cancelled', 'pending'].map((s) => isTerminal(s as never))).toEqual([
      true,
      true,
      true,
      false,
    ]);
    expect(canTransition('pending', 'in_flight')).toBe(true);
    expect(canTransition('done', 'pending')).toBe(false);
  });
});

describe('explainStatusFailure', () => {
  it('NOT_FOUND, or the move the state machine does not allow', () => {
    const missing = refusal(() => explainStatusFailure(null, 'x|1', 'cancelled'));
    expect([missing.code, missing.message, missing.details]).toEqual([
      'NOT_FOUND',
      'work item x|1 not found',
      { id: 'x|1' },
    ]);
    const e = refusal(() => explainStatusFailure(item({ status: 'done' }), 'wi|1+é', 'cancelled'));
    expect([e.code, e.message, e.details]).toEqual([
      'INVALID_TRANSITION',
      'work item wi|1+é cannot go from done to cancelled',
      { id: 'wi|1+é', from: 'done', to: 'cancelled' },
    ]);
  });
});
