// Store conformance, the kind contract: a kind with rules and effects (a small checklist registered here)
// enqueues work items and appends events in the same transaction as the commit, its decision items are
// answered only by a human, and retries, refusals and retention behave the same on every backend.
import { describe, expect } from 'vitest';
import { contentHash } from '../../src/core/json.js';
import type { CommitContext, CommitEffects, DocSnapshot, KindDefinition } from '../../src/core/kind.js';
import type { EnqueueInput, Json, JsonObject, WorkItem } from '../../src/core/types.js';
import {
  InvalidInputError,
  InvalidTransitionError,
  PermissionDeniedError,
  ValidationFailedError,
} from '../../src/errors.js';
import { registerKind } from '../../src/kinds/registry.js';
import { type ConformanceTest, type Ctx, eventCount, expectCode } from './setup.js';

/** Registry name of the test kind (unique: no built-in or other test kind uses it). */
const KIND = 'conformance-checklist';
/** Work-item kinds of its effects: work for a new step, and a question put to a human. */
const STEP_WORK = 'conformance.step';
const QUESTION_WORK = 'conformance.question';

type StepStatus = 'todo' | 'asked' | 'answered';
interface Step {
  id: string;
  status: StepStatus;
  /** A work item the step's work waits for (its effect item is enqueued blocked by it). */
  after?: string;
  answer?: Json;
  answered_by?: string;
}
interface Checklist {
  steps: Step[];
  /** Each new value enqueues one notification item without a key of its own. */
  notify?: string;
}

/** Which status may follow which (a withdrawn question goes back to todo; an answer is final). */
const NEXT: Record<StepStatus, StepStatus[]> = { todo: ['asked'], asked: ['todo', 'answered'], answered: [] };

const schema = {
  $id: 'https://agentstate.test/conformance-checklist.json',
  type: 'object',
  required: ['steps'],
  additionalProperties: false,
  properties: {
    notify: { type: 'string' },
    steps: {
      type: 'array',
      items: {
        type: 'object',
        required: ['id', 'status'],
        additionalProperties: false,
        properties: {
          id: { type: 'string', minLength: 1 },
          status: { enum: ['todo', 'asked', 'answered'] },
          after: { type: 'string' },
          answer: {},
          answered_by: { type: 'string' },
        },
      },
    },
  },
} as const;

const isQuestion = (item: WorkItem | null | undefined, docId: string, stepId: string): boolean => {
  const p = item?.payload as JsonObject | null | undefined;
  return item?.kind === QUESTION_WORK && p?.doc_id === docId && p?.step_id === stepId;
};

function check(
  nextBody: JsonObject,
  prevBody: JsonObject | null,
  ctx: CommitContext,
): CommitEffects | undefined {
  const next = nextBody as unknown as Checklist;
  const prev = prevBody as unknown as Checklist | null;
  const before = new Map((prev?.steps ?? []).map((s) => [s.id, s]));
  const seen = new Set<string>();
  const enqueue: EnqueueInput[] = [];
  const events: Array<{ type: string; data?: Json }> = [];
  next.steps.forEach((step, i) => {
    if (seen.has(step.id)) {
      throw new ValidationFailedError(`step ${step.id} appears twice`, {
        pointer: `/steps/${i}/id`,
        rule: 'unique-step-ids',
      });
    }
    seen.add(step.id);
    const old = before.get(step.id);
    if (old && old.status !== step.status && !NEXT[old.status].includes(step.status)) {
      throw new InvalidTransitionError(`step ${step.id} cannot go from ${old.status} to ${step.status}`, {
        pointer: `/steps/${i}/status`,
        rule: 'step-transition',
        from: old.status,
        to: step.status,
      });
    }
    if (
      step.status === 'answered' &&
      old?.status !== 'answered' &&
      !isQuestion(ctx.answering, ctx.id, step.id)
    ) {
      throw new PermissionDeniedError(
        `step ${step.id} is answered only by a human's answer to its question`,
        {
          pointer: `/steps/${i}/status`,
          rule: 'answered-by-human',
        },
      );
    }
    const data = { doc_id: ctx.id, step_id: step.id };
    if (!old) {
      enqueue.push({
        title: `do step ${step.id}`,
        kind: STEP_WORK,
        payload: data,
        idempotency_key: `step/${step.id}`,
        ...(step.after === undefined ? {} : { blocked_by: [step.after] }),
      });
      events.push({ type: 'step_added', data });
    }
    if (step.status === 'asked' && old?.status !== 'asked') {
      enqueue.push({
        title: `answer step ${step.id}`,
        kind: QUESTION_WORK,
        payload: data,
        waiting_human: true,
        idempotency_key: `ask/${step.id}`,
      });
      events.push({ type: 'step_asked', data });
    }
    if (step.status === 'answered' && old?.status === 'asked') {
      events.push({ type: 'step_answered', data: { ...data, answer: step.answer ?? null } });
    }
  });
  for (const old of before.values()) {
    if (!seen.has(old.id)) {
      throw new ValidationFailedError(`step ${old.id} was removed`, {
        pointer: '/steps',
        rule: 'step-not-removed',
      });
    }
  }
  if (next.notify !== undefined && next.notify !== prev?.notify) {
    enqueue.push({ title: `notify ${next.notify}`, kind: 'conformance.notify' });
  }
  return enqueue.length === 0 && events.length === 0 ? undefined : { enqueue, events };
}

/** A human's answer records itself in the step; a declined question (failed) leaves the document as it is. */
function onWorkItemResolved(item: WorkItem, doc: DocSnapshot, answer: { actor: string }): JsonObject | null {
  const p = item.payload as JsonObject | null;
  if (item.kind !== QUESTION_WORK || typeof p?.step_id !== 'string') return null;
  if (item.status === 'failed') return null;
  if (item.result === null) {
    throw new InvalidInputError(`step ${p.step_id} is answered without an answer`, {
      field: 'result',
      rule: 'answer-required',
    });
  }
  const body = structuredClone(doc.body) as unknown as Checklist;
  const step = body.steps.find((s) => s.id === p.step_id);
  if (step?.status !== 'asked') return null;
  Object.assign(step, { status: 'answered', answer: item.result, answered_by: answer.actor });
  return body as unknown as JsonObject;
}

const checklistKind: KindDefinition = {
  name: KIND,
  description: 'Conformance test kind: steps that enqueue work, and questions a human answers.',
  schema,
  check,
  onWorkItemResolved,
};
registerKind(checklistKind);

const ID = 'list';
const doc = { kind: KIND, id: ID };
const stream = `doc:${KIND}/${ID}`;
const owned = (key: string) => `doc:${KIND}/${ID}#${key}`;
const steps = (...s: Step[]): JsonObject => ({ steps: s }) as unknown as JsonObject;

/** Everything a refused commit or answer must leave as it was. */
async function snapshot(c: Pick<Ctx, 'docs' | 'work' | 'events'>) {
  const d = await c.docs.find(KIND, ID);
  return {
    doc: d && [d.version, d.body, d.content_hash],
    history: d ? (await c.docs.history({ ...doc, limit: 1000 })).entries : [],
    items: await c.work.list({ limit: 1000 }),
    head: await c.events.head(),
  };
}

/** The question item of `stepId`, waiting for a human. */
async function questionOf(c: Pick<Ctx, 'work'>, stepId: string): Promise<WorkItem> {
  const [q] = (await c.work.list({ status: 'waiting_human', kind: QUESTION_WORK, limit: 100 })).filter(
    (i) => (i.payload as JsonObject).step_id === stepId,
  );
  expect(q, `a question for step ${stepId}`).toBeDefined();
  return q!;
}

export function kindEffectConformance(name: string, t: ConformanceTest): void {
  describe(`${name}: a kind's effects`, () => {
    t(
      'effects land with the commit: items owned by the document, events on its stream, attributed to the writer',
      async (c) => {
        const r = await c.docs.commit({
          ...doc,
          expected_version: 0,
          body: { ...steps({ id: 's1', status: 'todo' }), notify: 'ops' },
          actor: 'planner',
          actor_kind: 'tool',
        });
        const items = await c.work.list({ limit: 100 });
        expect(items.map((i) => [i.kind, i.status, i.idempotency_key, i.payload])).toEqual([
          [STEP_WORK, 'pending', owned('step/s1'), { doc_id: ID, step_id: 's1' }],
          // An effect without a key of its own is keyed by its item id, still under the document.
          ['conformance.notify', 'pending', owned(items[1]!.id), null],
        ]);
        const events = await c.events.read({ limit: 100 });
        expect(events.map((e) => [e.type, e.stream, e.actor, e.work_item_id])).toEqual([
          ['work_item_enqueued', `work_item:${items[0]!.id}`, 'planner', items[0]!.id],
          ['work_item_enqueued', `work_item:${items[1]!.id}`, 'planner', items[1]!.id],
          ['state_committed', stream, 'planner', null],
          ['step_added', stream, 'planner', null],
        ]);
        expect(events[0]!.data).toMatchObject({ kind: STEP_WORK, idempotency_key: owned('step/s1') });
        expect(events[3]!.data).toEqual({ doc_id: ID, step_id: 's1' });
        // One commit, one moment.
        expect(new Set(events.map((e) => e.created_at))).toEqual(new Set([r.committed_at]));

        // The next commit asks step s1 and adds s2: a question for a human, work for s2.
        c.advance(10);
        await c.docs.commit({
          ...doc,
          expected_version: 1,
          body: { ...steps({ id: 's1', status: 'asked' }, { id: 's2', status: 'todo' }), notify: 'ops' },
          actor: 'planner',
        });
        const q = await questionOf(c, 's1');
        expect(q).toMatchObject({ idempotency_key: owned('ask/s1'), status: 'waiting_human' });
        expect((await c.work.list({ kind: STEP_WORK })).map((i) => i.idempotency_key)).toEqual([
          owned('step/s1'),
          owned('step/s2'),
        ]);
        expect((await c.events.read({ stream })).map((e) => e.type)).toEqual([
          'state_committed',
          'step_added',
          'state_committed',
          'step_asked',
          'step_added',
        ]);
        // An ordinary enqueue cannot take a document's key, so it cannot pass for the document's item.
        const details = await expectCode(
          c.work.enqueue({ title: 'forged', kind: QUESTION_WORK, idempotency_key: owned('ask/s9') }),
          'INVALID_INPUT',
        );
        expect(details.field).toBe('idempotency_key');
      },
    );

    t('a refused commit leaves no item and no event, whatever refuses it', async (c) => {
      await c.docs.commit({ ...doc, expected_version: 0, body: steps({ id: 's1', status: 'todo' }) });
      const before = await snapshot(c);
      const added = (s: Step) => steps({ id: 's1', status: 'todo' }, s);
      // The kind's rules (each of these would enqueue and append if it were accepted).
      const dup = steps({ id: 's1', status: 'asked' }, { id: 's1', status: 'todo' });
      expect(
        await expectCode(c.docs.commit({ ...doc, expected_version: 1, body: dup }), 'VALIDATION_FAILED'),
      ).toMatchObject({
        pointer: '/steps/1/id',
        rule: 'unique-step-ids',
      });
      expect(
        await expectCode(
          c.docs.commit({ ...doc, expected_version: 1, body: steps({ id: 's1', status: 'answered' }) }),
          'INVALID_TRANSITION',
        ),
      ).toMatchObject({ rule: 'step-transition', from: 'todo', to: 'answered' });
      await expectCode(
        c.docs.commit({ ...doc, expected_version: 1, body: steps({ id: 's2', status: 'todo' }) }),
        'VALIDATION_FAILED',
      );
      // The kind's schema.
      await expectCode(
        c.docs.commit({
          ...doc,
          expected_version: 1,
          body: { ...added({ id: 's2', status: 'todo' }), extra: 1 },
        }),
        'VALIDATION_FAILED',
      );
      // A stale version: the rules ran on another version, nothing of theirs lands.
      await expectCode(
        c.docs.commit({ ...doc, expected_version: 0, body: added({ id: 's2', status: 'todo' }) }),
        'STATE_CONFLICT',
      );
      // The backend, inside the transaction after the conditional write: an effect item blocked by an item
      // that does not exist. The document's new version, its history entry and its events roll back.
      const missing = await expectCode(
        c.docs.commit({
          ...doc,
          expected_version: 1,
          body: added({ id: 's2', status: 'todo', after: 'wi_missing' }),
        }),
        'INVALID_INPUT',
      );
      expect(missing).toMatchObject({ field: 'blocked_by' });
      expect(await snapshot(c)).toEqual(before);
      // The same commit with a real blocker lands, effects and all.
      const first = (await c.work.list({ kind: STEP_WORK }))[0]!;
      const r = await c.docs.commit({
        ...doc,
        expected_version: 1,
        body: added({ id: 's2', status: 'todo', after: first.id }),
      });
      expect(r.version).toBe(2);
      const s2 = (await c.work.list({ kind: STEP_WORK, ready: false }))[0]!;
      expect(s2).toMatchObject({ idempotency_key: owned('step/s2'), blocked_by: [first.id] });
    });

    t('a retry with the same write id does not enqueue twice, even racing its original', async (c) => {
      const create = {
        ...doc,
        expected_version: 0,
        body: steps({ id: 's1', status: 'todo' }),
        write_id: 'w-1',
      };
      const first = await c.docs.commit(create);
      const head = await eventCount(c);
      const retry = await c.docs.commit(create);
      expect(retry).toMatchObject({ version: 1, replayed: true, content_hash: first.content_hash });
      expect(await eventCount(c)).toBe(head);
      expect((await c.work.list()).length).toBe(1);

      // Two stores (each with its own remembered copies) send the same write at once: one lands, one replays.
      const other = c.docsKeeping(1_000_000);
      const ask = {
        ...doc,
        expected_version: 1,
        body: steps({ id: 's1', status: 'asked' }),
        write_id: 'w-2',
      };
      const both = await Promise.all([c.docs.commit(ask), other.commit(ask)]);
      expect(both.map((b) => b.version)).toEqual([2, 2]);
      expect(both.filter((b) => b.replayed).length).toBe(1);
      expect((await c.work.list({ kind: QUESTION_WORK })).length).toBe(1);
      expect((await c.events.read({ type: 'step_asked' })).length).toBe(1);

      // A later commit asking for the same effect again gets the item already there: no second item, no event.
      await c.docs.commit({ ...doc, expected_version: 2, body: steps({ id: 's1', status: 'todo' }) });
      const before = (await c.events.read({ type: 'work_item_enqueued' })).length;
      await c.docs.commit({ ...doc, expected_version: 3, body: steps({ id: 's1', status: 'asked' }) });
      expect((await c.work.list({ kind: QUESTION_WORK })).length).toBe(1);
      expect((await c.events.read({ type: 'work_item_enqueued' })).length).toBe(before);
      expect((await c.events.read({ type: 'step_asked' })).length).toBe(2);
    });

    t('retention and prune remove old versions, never the effects they wrote', async (c) => {
      const docs = c.docsKeeping(2);
      const list: Step[] = [];
      for (let v = 0; v < 5; v++) {
        list.push({ id: `s${v + 1}`, status: 'todo' });
        await docs.commit({ ...doc, expected_version: v, body: steps(...list) });
      }
      expect((await docs.history(doc)).entries.map((e) => e.version)).toEqual([4, 5]);
      expect((await expectCode(docs.get({ ...doc, version: 1 }), 'NOT_FOUND')).pruned).toBe(true);
      expect(await c.docs.prune({ ...doc, keep: 1 })).toEqual({ removed: 1 });
      expect((await c.docs.history(doc)).entries.map((e) => e.version)).toEqual([5]);
      expect((await c.work.list({ kind: STEP_WORK })).map((i) => i.idempotency_key)).toEqual(
        list.map((s) => owned(`step/${s.id}`)),
      );
      expect((await c.events.read({ stream })).map((e) => e.type)).toEqual(
        list.flatMap(() => ['state_committed', 'step_added']),
      );
      // The kind still sees the newest body as the previous one.
      await expectCode(
        c.docs.commit({ ...doc, expected_version: 5, body: steps(...list.slice(1)) }),
        'VALIDATION_FAILED',
      );
    });
  });

  describe(`${name}: a kind's decisions, answered by a human`, () => {
    /** A checklist whose step s1 waits for a human; returns the question. */
    const ask = async (c: Ctx): Promise<WorkItem> => {
      await c.docs.commit({ ...doc, expected_version: 0, body: steps({ id: 's1', status: 'todo' }) });
      await c.docs.commit({ ...doc, expected_version: 1, body: steps({ id: 's1', status: 'asked' }) });
      return questionOf(c, 's1');
    };

    t('a worker cannot answer, unpark or claim the question; nothing changes', async (c) => {
      const q = await ask(c);
      const before = await snapshot(c);
      for (const actor_kind of [undefined, 'system', 'model', 'tool'] as const) {
        const details = await expectCode(
          c.work.resolve({
            id: q.id,
            status: 'done',
            worker: 'w',
            result: { answer: 'yes' },
            ...(actor_kind ? { actor_kind, actor: 'w' } : {}),
          }),
          'PERMISSION_DENIED',
        );
        expect(details).toMatchObject({ rule: 'human-decision', owner: `${KIND}/${ID}` });
      }
      await expectCode(c.work.resolveMany([{ id: q.id, status: 'done', worker: 'w' }]), 'PERMISSION_DENIED');
      await expectCode(c.work.unpark({ id: q.id }), 'PERMISSION_DENIED');
      expect(await c.work.claim({ worker: 'w', id: q.id })).toBeNull();
      // Nor can any commit: only the answer to the question (ctx.answering) marks the step answered.
      for (const actor_kind of ['system', 'human'] as const) {
        const refused = await expectCode(
          c.docs.commit({
            ...doc,
            expected_version: 2,
            body: steps({ id: 's1', status: 'answered', answer: 'yes', answered_by: 'ana' }),
            actor: 'ana',
            actor_kind,
          }),
          'PERMISSION_DENIED',
        );
        expect(refused).toMatchObject({ rule: 'answered-by-human' });
      }
      // A human answer must say who answered.
      await expectCode(
        c.work.resolve({ id: q.id, status: 'done', actor_kind: 'human', result: { answer: 'yes' } }),
        'INVALID_INPUT',
      );
      expect(await snapshot(c)).toEqual(before);
    });

    t(
      'only a human cancels the question, and a human asks it again; it never goes where a worker takes it',
      async (c) => {
        const q = await ask(c);
        const before = await snapshot(c);
        for (const actor_kind of [undefined, 'system', 'model', 'tool'] as const) {
          const details = await expectCode(
            c.work.cancel({ id: q.id, actor: 'w', reason: 'staged', ...(actor_kind ? { actor_kind } : {}) }),
            'PERMISSION_DENIED',
          );
          expect(details).toMatchObject({ rule: 'human-decision', owner: `${KIND}/${ID}` });
          await expectCode(
            c.work.retry({ id: q.id, actor: 'w', ...(actor_kind ? { actor_kind } : {}) }),
            'INVALID_TRANSITION',
          );
        }
        expect(await snapshot(c)).toEqual(before);

        c.advance(1000);
        const cancelled = await c.work.cancel({
          id: q.id,
          actor: 'ana',
          actor_kind: 'human',
          reason: 'wrong question',
        });
        expect(cancelled).toMatchObject({ status: 'cancelled', error: 'wrong question' });
        // Cancelled, it is asked again only by a human, and only back to waiting for a human.
        for (const actor_kind of [undefined, 'system', 'model', 'tool'] as const) {
          const details = await expectCode(
            c.work.retry({ id: q.id, actor: 'w', ...(actor_kind ? { actor_kind } : {}) }),
            'PERMISSION_DENIED',
          );
          expect(details).toMatchObject({ rule: 'human-decision' });
        }
        await expectCode(
          c.work.retryMany([{ id: q.id, actor: 'bo', actor_kind: 'human' }]),
          'PERMISSION_DENIED',
        );
        const again = await c.work.retry({
          id: q.id,
          actor: 'bo',
          actor_kind: 'human',
          reason: 'ask it better',
        });
        expect(again).toMatchObject({ id: q.id, status: 'waiting_human', error: null, resolved_at: null });
        expect(await c.work.claim({ worker: 'w', id: q.id })).toBeNull();
        const history = (await c.events.read({ work_item_id: q.id })).map((e) => [e.type, e.actor, e.data]);
        expect(history.slice(-2)).toEqual([
          [
            'work_item_cancelled',
            'ana',
            { status: 'cancelled', error: 'wrong question', actor_kind: 'human' },
          ],
          [
            'work_item_retried',
            'bo',
            {
              status: 'waiting_human',
              previous_status: 'cancelled',
              previous_error: 'wrong question',
              previous_attempts: 0,
              reason: 'ask it better',
              actor_kind: 'human',
            },
          ],
        ]);
        // Asked again, a human's answer lands in the document as the first one would have.
        await c.work.resolve({ id: q.id, status: 'done', actor: 'cy', actor_kind: 'human', result: 'yes' });
        expect((await c.docs.get(doc)).body).toEqual(
          steps({ id: 's1', status: 'answered', answer: 'yes', answered_by: 'cy' }),
        );
      },
    );

    t(
      "a human's answer resolves the item and records itself in the document in one transaction, attributed to the human",
      async (c) => {
        const q = await ask(c);
        const head = await eventCount(c);
        c.advance(1000);
        const answered = await c.work.resolve({
          id: q.id,
          status: 'done',
          actor: 'ana',
          actor_kind: 'human',
          result: { answer: 'yes' },
        });
        expect(answered).toMatchObject({ id: q.id, status: 'done', result: { answer: 'yes' } });
        const d = await c.docs.get(doc);
        expect(d.version).toBe(3);
        expect(d.body).toEqual(
          steps({ id: 's1', status: 'answered', answer: { answer: 'yes' }, answered_by: 'ana' }),
        );
        const last = (await c.docs.history({ ...doc, reverse: true, limit: 1 })).entries[0]!;
        expect(last).toMatchObject({
          version: 3,
          actor: 'ana',
          actor_kind: 'human',
          reason: `answer to work item ${q.id}`,
        });
        const events = await c.events.read({ after: head });
        expect(events.map((e) => [e.type, e.actor])).toEqual([
          ['state_committed', 'ana'],
          ['step_answered', 'ana'],
          ['work_item_resolved', 'ana'],
        ]);
        expect(events[0]!.data).toMatchObject({ version: 3, actor_kind: 'human' });
        expect(events[2]!.data).toMatchObject({
          status: 'done',
          actor_kind: 'human',
          // The answer is on the row; the event records its content hash.
          result_hash: contentHash({ answer: 'yes' }),
        });
        expect(events[2]!.data).not.toHaveProperty('result');
        expect(new Set(events.map((e) => e.created_at)).size).toBe(1);

        // The same answer again (a retry after a lost reply) returns the item; nothing is written.
        const n = await eventCount(c);
        expect(
          await c.work.resolve({
            id: q.id,
            status: 'done',
            actor: 'ana',
            actor_kind: 'human',
            result: { answer: 'yes' },
          }),
        ).toMatchObject({ status: 'done', result: { answer: 'yes' } });
        expect(await eventCount(c)).toBe(n);
        // Another answer to a question already answered is refused.
        await expectCode(
          c.work.resolve({
            id: q.id,
            status: 'done',
            actor: 'bo',
            actor_kind: 'human',
            result: { answer: 'no' },
          }),
          'INVALID_TRANSITION',
        );
        expect((await c.docs.get(doc)).version).toBe(3);
      },
    );

    t('the answer lands on the newest version when the document moved on after the question', async (c) => {
      const q = await ask(c);
      // Another writer (a store with its own remembered copies) adds a step meanwhile.
      await c.docsKeeping(1_000_000).commit({
        ...doc,
        expected_version: 2,
        body: steps({ id: 's1', status: 'asked' }, { id: 's2', status: 'todo' }),
      });
      await c.work.resolve({ id: q.id, status: 'done', actor: 'ana', actor_kind: 'human', result: 'yes' });
      const d = await c.docs.get(doc);
      expect(d.version).toBe(4);
      expect(d.body).toEqual(
        steps(
          { id: 's1', status: 'answered', answer: 'yes', answered_by: 'ana' },
          { id: 's2', status: 'todo' },
        ),
      );
    });

    t(
      'an answer the kind refuses changes nothing; one the document has nothing to record resolves only the item',
      async (c) => {
        const q = await ask(c);
        const before = await snapshot(c);
        const details = await expectCode(
          c.work.resolve({ id: q.id, status: 'done', actor: 'ana', actor_kind: 'human' }),
          'INVALID_INPUT',
        );
        expect(details).toMatchObject({ rule: 'answer-required' });
        expect(await snapshot(c)).toEqual(before);
        // Declined: the kind records nothing (onWorkItemResolved returns null), the item is resolved alone.
        const declined = await c.work.resolve({
          id: q.id,
          status: 'failed',
          actor: 'ana',
          actor_kind: 'human',
          error: 'not mine to decide',
        });
        expect(declined).toMatchObject({ status: 'failed', error: 'not mine to decide' });
        expect((await c.docs.get(doc)).version).toBe(2);
        const events = await c.events.read({ after: before.head?.position ?? 0 });
        expect(events.map((e) => [e.type, e.actor, e.work_item_id])).toEqual([
          ['work_item_resolved', 'ana', q.id],
        ]);
        expect(events[0]!.data).toMatchObject({ status: 'failed', actor_kind: 'human' });
      },
    );
  });
}
