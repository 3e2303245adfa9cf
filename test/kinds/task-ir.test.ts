// Kind `task-ir` (TaskIR): schema, ambiguity transitions, escalation effects and resolution by work item.
import { describe, expect, it } from 'vitest';
import type { DocSnapshot } from '../../src/core/kind.js';
import type { Json, JsonObject, WorkItem } from '../../src/core/types.js';
import { validateSchema } from '../../src/kinds/registry.js';
import { type TaskIr, taskIrKind } from '../../src/kinds/task-ir/kind.js';
import { AMBIGUITY_WORK_KIND } from '../../src/kinds/task-ir/rules.js';
import { clone, example, makeCtx } from './ctx.js';
import { expectRefused } from './expect-refusal.js';

const j = (b: TaskIr) => b as unknown as JsonObject;
const open = () => example('task-ir.open') as unknown as TaskIr;
const ctx = makeCtx({ kind: 'task-ir', id: 'task-example', actor: 'compiler' });

async function commit(next: TaskIr, prev: TaskIr | null, answering: WorkItem | null = null) {
  validateSchema(taskIrKind, j(next));
  return taskIrKind.check!(j(next), prev ? j(prev) : null, { ...ctx, answering });
}

function with1(status: 'open' | 'escalated' | 'resolved', resolution?: Json): TaskIr {
  const b = open();
  const a = b.ambiguities[0]!;
  a.status = status;
  if (resolution !== undefined) a.resolution = resolution;
  return b;
}

const escalationEffects = {
  enqueue: [
    {
      title: 'Resolve ambiguity q1 of task task-example: Should offsets be preserved or normalized to UTC?',
      kind: 'task-ir.ambiguity',
      payload: {
        doc_id: 'task-example',
        ambiguity_id: 'q1',
        question: 'Should offsets be preserved or normalized to UTC?',
      },
      waiting_human: true,
      idempotency_key: 'ambiguity/q1',
      actor: 'compiler',
    },
  ],
  events: [
    {
      type: 'ambiguity_escalated',
      data: {
        doc_id: 'task-example',
        ambiguity_id: 'q1',
        question: 'Should offsets be preserved or normalized to UTC?',
      },
    },
  ],
};

function item(over: Partial<WorkItem> = {}): WorkItem {
  return {
    id: 'wi-7',
    title: 'Resolve ambiguity q1',
    kind: AMBIGUITY_WORK_KIND,
    status: 'done',
    priority: 0,
    payload: { doc_id: 'task-example', ambiguity_id: 'q1', question: '?' },
    notes: {},
    result: { answer: 'preserve' },
    error: null,
    attempts: 0,
    max_attempts: 3,
    lease_owner: null,
    lease_expires_at: null,
    claimed_at: null,
    blocked_by: [],
    not_before: null,
    idempotency_key: 'doc:task-ir/task-example#ambiguity/q1',
    created_at: '2025-01-01T10:00:00.000Z',
    updated_at: '2025-01-01T11:00:00.000Z',
    resolved_at: '2025-01-01T11:00:00.000Z',
    on_blocker_failure: 'wait',
    cascaded_from: null,
    concurrency_key: null,
    traceparent: null,
    ...over,
  };
}
const snapshot = (body: TaskIr): DocSnapshot => ({
  kind: 'task-ir',
  id: 'task-example',
  version: 2,
  body: j(body),
});

describe('task-ir: schema', () => {
  it('accepts the examples', () => {
    for (const name of ['task-ir.minimal', 'task-ir.resolved', 'task-ir.open']) {
      expect(() => validateSchema(taskIrKind, example(name))).not.toThrow();
    }
  });

  it('refuses a missing ambiguities list and an unknown ambiguity status', async () => {
    const b = example('task-ir.minimal');
    delete b.ambiguities;
    await expectRefused(
      () => validateSchema(taskIrKind, b),
      'VALIDATION_FAILED',
      '/ambiguities',
      'schema.required',
    );
    const c = open() as unknown as { ambiguities: Array<{ status: string }> };
    c.ambiguities[0]!.status = 'guessed';
    await expectRefused(
      () => validateSchema(taskIrKind, c as unknown as JsonObject),
      'VALIDATION_FAILED',
      '/ambiguities/0/status',
      'schema.enum',
    );
  });
});

describe('task-ir: ambiguity transitions (ambiguity-transition)', () => {
  it('open → resolved passes and records an ambiguity_resolved event', async () => {
    const effects = await commit(with1('resolved', 'preserve'), open());
    expect(effects).toEqual({
      events: [
        {
          type: 'ambiguity_resolved',
          data: {
            doc_id: 'task-example',
            ambiguity_id: 'q1',
            question: 'Should offsets be preserved or normalized to UTC?',
            resolution: 'preserve',
          },
        },
      ],
    });
  });

  it('open → escalated enqueues a waiting_human work item and an ambiguity_escalated event', async () => {
    await expect(commit(with1('escalated'), open())).resolves.toEqual(escalationEffects);
  });

  it('a new document with an escalated ambiguity escalates it too; an unchanged one asks nothing', async () => {
    await expect(commit(with1('escalated'), null)).resolves.toEqual(escalationEffects);
    await expect(commit(with1('escalated'), with1('escalated'))).resolves.toBeUndefined();
    await expect(commit(open(), open())).resolves.toBeUndefined();
  });

  it('escalated → resolved passes as the answer to its decision item', async () => {
    const effects = await commit(with1('resolved', 'utc'), with1('escalated'), item());
    expect(effects?.events?.[0]?.type).toBe('ambiguity_resolved');
    expect(effects?.enqueue).toBeUndefined();
  });

  it('escalated → resolved by any other write is refused (ambiguity-answered-by-human)', async () => {
    for (const actor_kind of ['system', 'model', 'tool', 'human'] as const) {
      await expectRefused(
        () => taskIrKind.check!(j(with1('resolved', 'utc')), j(with1('escalated')), { ...ctx, actor_kind }),
        'PERMISSION_DENIED',
        '/ambiguities/0/status',
        'ambiguity-answered-by-human',
      );
    }
    // The answer to another ambiguity's item does not resolve this one.
    await expectRefused(
      () =>
        commit(
          with1('resolved', 'utc'),
          with1('escalated'),
          item({ payload: { doc_id: 'task-example', ambiguity_id: 'q2' } }),
        ),
      'PERMISSION_DENIED',
      '/ambiguities/0/status',
      'ambiguity-answered-by-human',
    );
  });

  it.each([
    ['resolved', 'open'],
    ['resolved', 'escalated'],
    ['escalated', 'open'],
  ] as const)('refuses %s → %s', async (from, to) => {
    const prev = with1(from, from === 'resolved' ? 'preserve' : undefined);
    const next = with1(to);
    const d = await expectRefused(
      () => commit(next, prev),
      'INVALID_TRANSITION',
      '/ambiguities/0/status',
      'ambiguity-transition',
    );
    expect(d).toMatchObject({ from, to });
  });

  it('a resolved ambiguity is final (ambiguity-resolved-final)', async () => {
    const prev = with1('resolved', 'preserve');
    await expectRefused(
      () => commit(with1('resolved', 'utc'), prev),
      'VALIDATION_FAILED',
      '/ambiguities/0',
      'ambiguity-resolved-final',
    );
  });

  it('resolved needs a resolution (ambiguity-resolution-required)', async () => {
    await expectRefused(
      () => commit(with1('resolved'), open()),
      'VALIDATION_FAILED',
      '/ambiguities/0/resolution',
      'ambiguity-resolution-required',
    );
    await expectRefused(
      () => commit(with1('resolved', null), open()),
      'VALIDATION_FAILED',
      '/ambiguities/0/resolution',
      'ambiguity-resolution-required',
    );
  });

  it('an ambiguity is never removed (ambiguity-not-removed), ids are unique (unique-ids)', async () => {
    const b = open();
    b.ambiguities.shift();
    await expectRefused(
      () => commit(b, open()),
      'VALIDATION_FAILED',
      '/ambiguities',
      'ambiguity-not-removed',
    );
    const dup = open();
    dup.ambiguities.push({ ...dup.ambiguities[0]! });
    await expectRefused(() => commit(dup, null), 'VALIDATION_FAILED', '/ambiguities/2/id', 'unique-ids');
    const added = open();
    added.ambiguities.push({ id: 'q3', question: 'Which locale?', status: 'open' });
    await expect(commit(added, open())).resolves.toBeUndefined();
  });
});

describe('task-ir: onWorkItemResolved', () => {
  const by = { actor: 'ana' };
  it('resolves the escalated ambiguity with result.answer by the human who answered, and the new body passes check', async () => {
    const doc = snapshot(with1('escalated'));
    const before = clone(doc.body);
    const body = taskIrKind.onWorkItemResolved!(item(), doc, by);
    expect(doc.body).toEqual(before); // not mutated
    const a = (body as unknown as TaskIr).ambiguities[0];
    expect(a).toMatchObject({
      id: 'q1',
      status: 'resolved',
      resolution: 'preserve',
      escalation_work_item_id: 'wi-7',
      resolved_at: '2025-01-01T11:00:00.000Z',
      resolved_by: 'ana',
    });
    await expect(commit(body as unknown as TaskIr, with1('escalated'), item())).resolves.toMatchObject({
      events: [{ type: 'ambiguity_resolved' }],
    });
  });

  it('uses the whole result when it has no answer; resolved_by is the answering human, never result.by', () => {
    const body = taskIrKind.onWorkItemResolved!(item({ result: 'utc' }), snapshot(with1('escalated')), by);
    expect((body as unknown as TaskIr).ambiguities[0]?.resolution).toBe('utc');
    const obj = taskIrKind.onWorkItemResolved!(
      item({ result: { choice: 'utc', by: 'mallory' } }),
      snapshot(with1('escalated')),
      by,
    );
    expect((obj as unknown as TaskIr).ambiguities[0]).toMatchObject({
      resolution: { choice: 'utc', by: 'mallory' },
      resolved_by: 'ana',
    });
  });

  it('refuses an answer without an answer, and a failed decision', async () => {
    const on = taskIrKind.onWorkItemResolved!;
    for (const result of [null, '', { answer: null }, { answer: '' }]) {
      await expectRefused(
        async () => on(item({ result }), snapshot(with1('escalated')), by),
        'INVALID_INPUT',
        undefined,
        'ambiguity-answer-required',
      );
    }
    await expectRefused(
      async () => on(item({ status: 'failed' }), snapshot(with1('escalated')), by),
      'INVALID_TRANSITION',
      undefined,
      'ambiguity-answer-required',
    );
  });

  it('returns null when there is nothing to record', () => {
    const on = taskIrKind.onWorkItemResolved!;
    expect(on(item(), snapshot(with1('resolved', 'utc')), by)).toBeNull(); // already resolved
    expect(on(item({ kind: 'other' }), snapshot(with1('escalated')), by)).toBeNull();
    expect(
      on(item({ payload: { doc_id: 'task-example', ambiguity_id: 'q9' } }), snapshot(with1('escalated')), by),
    ).toBeNull();
    expect(
      on(item({ payload: { doc_id: 'other-doc', ambiguity_id: 'q1' } }), snapshot(with1('escalated')), by),
    ).toBeNull();
  });
});
