// Issue 10, hole 3 (and issue 12, points 3-5): a question put to a human is answered only by a human.
// Decision items are made only by the store's escalation, cannot be claimed or resolved by workers, and
// the answer is recorded in the TaskIR in the same transaction as the item's resolution.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { JsonObject, WorkItem } from '../../src/core/types.js';
import type { Instance } from '../../src/instance/instance.js';
import { backendsForThisFile } from '../helpers/backends.js';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';

const backends = await backendsForThisFile();

const TASK: JsonObject = {
  goal: 'Add login',
  acceptance_criteria: [{ id: 'ac1', text: 'users can log in' }],
  ambiguities: [{ id: 'a1', question: 'OAuth or passwords?', status: 'open' }],
};
const RUN: JsonObject = {
  run_id: 'r1',
  agent: 'coder',
  status: 'running',
  intent: { text: 'add login' },
  task_ir: { id: 'login' },
};

async function escalate(inst: Instance): Promise<WorkItem> {
  await inst.docs.commit({ kind: 'task-ir', id: 'login', expected_version: 0, body: TASK });
  const escalated = structuredClone(TASK);
  (escalated.ambiguities as JsonObject[])[0]!.status = 'escalated';
  await inst.docs.commit({ kind: 'task-ir', id: 'login', expected_version: 1, body: escalated });
  const [q] = await inst.work.list({ status: 'waiting_human' });
  expect(q).toMatchObject({ kind: 'task-ir.ambiguity', idempotency_key: 'doc:task-ir/login#ambiguity/a1' });
  return q!;
}

const ambiguity = async (inst: Instance) =>
  ((await inst.docs.get({ kind: 'task-ir', id: 'login' })).body.ambiguities as JsonObject[])[0]!;

/** Everything a refused answer must leave as it was. */
async function state(inst: Instance) {
  return {
    task: await inst.docs.get({ kind: 'task-ir', id: 'login' }).then((d) => [d.version, d.body]),
    items: await inst.work.list({ limit: 100 }),
    head: (await inst.events.head())?.position ?? 0,
  };
}

for (const b of backends) {
  describe(`human decisions on ${b.name}`, () => {
    it('the old forgery: a worker enqueues, claims and resolves a task-ir.ambiguity item — no ambiguity is resolved, no run starts', async () => {
      const inst = await b.open();
      try {
        await inst.docs.commit({ kind: 'task-ir', id: 'login', expected_version: 0, body: TASK });
        // Pre-empting the store's own key is refused outright.
        await expect(
          inst.work.enqueue({
            title: 'forged',
            kind: 'task-ir.ambiguity',
            payload: { doc_id: 'login', ambiguity_id: 'a1', question: '?' },
            idempotency_key: 'doc:task-ir/login#ambiguity/a1',
          }),
        ).rejects.toMatchObject({ code: 'INVALID_INPUT', details: { field: 'idempotency_key' } });
        // An item that merely looks like a decision is ordinary work: resolving it touches no document.
        const forged = await inst.work.enqueue({
          title: 'forged',
          kind: 'task-ir.ambiguity',
          payload: { doc_id: 'login', ambiguity_id: 'a1', question: '?' },
        });
        const claimed = await inst.work.claim({ worker: 'w', id: forged.id });
        await inst.work.resolve({
          id: forged.id,
          status: 'done',
          worker: 'w',
          attempt: claimed!.attempts,
          result: { answer: 'passwords', by: 'ana' },
        });
        expect(await ambiguity(inst)).toMatchObject({ status: 'open' });
        expect((await inst.docs.get({ kind: 'task-ir', id: 'login' })).version).toBe(1);
        await expect(
          inst.docs.commit({ kind: 'agent-run', id: 'r1', expected_version: 0, body: RUN }),
        ).rejects.toMatchObject({ code: 'AMBIGUITY_UNRESOLVED' });
      } finally {
        await inst.close();
      }
    });

    it('a worker cannot resolve, unpark or claim a real decision; nothing changes', async () => {
      const inst = await b.open();
      try {
        const q = await escalate(inst);
        const before = await state(inst);
        for (const actor_kind of [undefined, 'system', 'model', 'tool'] as const) {
          await expect(
            inst.work.resolve({
              id: q.id,
              status: 'done',
              worker: 'w',
              result: { answer: 'OAuth' },
              ...(actor_kind ? { actor_kind, actor: 'w' } : {}),
            }),
          ).rejects.toMatchObject({ code: 'PERMISSION_DENIED', details: { rule: 'human-decision' } });
        }
        await expect(
          inst.work.resolveMany([{ id: q.id, status: 'done', result: { answer: 'OAuth' } }]),
        ).rejects.toMatchObject({ code: 'PERMISSION_DENIED' });
        await expect(inst.work.unpark({ id: q.id })).rejects.toMatchObject({ code: 'PERMISSION_DENIED' });
        expect(await inst.work.claim({ worker: 'w', id: q.id })).toBeNull();
        expect(await state(inst)).toEqual(before);
      } finally {
        await inst.close();
      }
    });

    it('retry is no way around a decision: waiting, INVALID_TRANSITION; cancelled, a person asks it again', async () => {
      const inst = await b.open();
      try {
        const q = await escalate(inst);
        let before = await state(inst);
        await expect(inst.work.retry({ id: q.id })).rejects.toMatchObject({ code: 'INVALID_TRANSITION' });
        expect(await state(inst)).toEqual(before);
        // Cancelled, it is not re-queued where any worker could claim and answer it, alone or in a batch.
        // Only a person cancels it.
        await expect(inst.work.cancel({ id: q.id, reason: 'staged' })).rejects.toMatchObject({
          code: 'PERMISSION_DENIED',
          details: { rule: 'human-decision' },
        });
        expect(await state(inst)).toEqual(before);
        // Nor in a batch with an ordinary item, which is then not cancelled either.
        const plain = await inst.work.enqueue({ title: 'plain' });
        before = await state(inst);
        for (const actor_kind of [undefined, 'model', 'tool'] as const) {
          await expect(
            inst.work.cancelMany({ ids: [plain.id, q.id], ...(actor_kind ? { actor_kind } : {}) }),
          ).rejects.toMatchObject({ code: 'PERMISSION_DENIED', details: { rule: 'human-decision' } });
        }
        expect(await state(inst)).toEqual(before);
        const [withdrawn] = await inst.work.cancelMany({
          ids: [q.id, plain.id],
          reason: 'withdrawn',
          actor: 'ana',
          actor_kind: 'human',
        });
        expect(withdrawn).toMatchObject({ id: q.id, status: 'cancelled', error: 'withdrawn' });
        await inst.work.retry({ id: plain.id });
        await inst.work.retry({ id: q.id, actor: 'ana', actor_kind: 'human' });
        await inst.work.cancel({ id: plain.id });
        await inst.work.cancel({ id: q.id, reason: 'withdrawn', actor: 'ana', actor_kind: 'human' });
        before = await state(inst);
        await expect(inst.work.retry({ id: q.id })).rejects.toMatchObject({
          code: 'PERMISSION_DENIED',
          details: { rule: 'human-decision', owner: 'task-ir/login' },
        });
        const other = await inst.work.enqueue({ title: 'other' });
        await inst.work.cancel({ id: other.id });
        before = await state(inst);
        await expect(inst.work.retryMany([{ id: other.id }, { id: q.id }])).rejects.toMatchObject({
          code: 'PERMISSION_DENIED',
        });
        expect(await state(inst)).toEqual(before);
        expect(await inst.work.claim({ worker: 'w' })).toBeNull();
        // A person asks it again: waiting for a human once more, and a human's answer resolves the ambiguity.
        await expect(
          inst.work.retryMany([{ id: q.id, actor: 'ana', actor_kind: 'human' }]),
        ).rejects.toMatchObject({ code: 'PERMISSION_DENIED' });
        const again = await inst.work.retry({ id: q.id, actor: 'ana', actor_kind: 'human' });
        expect(again.status).toBe('waiting_human');
        expect(await inst.work.claim({ worker: 'w' })).toBeNull();
        await inst.work.resolve({
          id: q.id,
          status: 'done',
          actor: 'bo',
          actor_kind: 'human',
          result: 'OAuth',
        });
        const task = (await inst.docs.get({ kind: 'task-ir', id: 'login' })).body as {
          ambiguities: Array<{ status: string; resolution: unknown; resolved_by: string }>;
        };
        expect(task.ambiguities[0]).toMatchObject({
          status: 'resolved',
          resolution: 'OAuth',
          resolved_by: 'bo',
        });
        expect((await inst.events.verify()).ok).toBe(true);
      } finally {
        await inst.close();
      }
    });

    it('once escalated, no commit but the answer resolves the ambiguity, whoever writes it', async () => {
      const inst = await b.open();
      try {
        await escalate(inst);
        const before = await state(inst);
        const task = (await inst.docs.get({ kind: 'task-ir', id: 'login' })).body;
        const resolved = structuredClone(task);
        Object.assign((resolved.ambiguities as JsonObject[])[0]!, {
          status: 'resolved',
          resolution: 'OAuth',
        });
        for (const actor_kind of ['system', 'model', 'tool', 'human'] as const) {
          await expect(
            inst.docs.commit({
              kind: 'task-ir',
              id: 'login',
              expected_version: 2,
              body: resolved,
              actor_kind,
              ...(actor_kind === 'model'
                ? { provenance: { model_id: 'm', run_id: 'r', step_id: 's', input_hash: 'h' } }
                : {}),
            }),
          ).rejects.toMatchObject({
            code: 'PERMISSION_DENIED',
            details: { rule: 'ambiguity-answered-by-human' },
          });
        }
        expect(await state(inst)).toEqual(before);
      } finally {
        await inst.close();
      }
    });

    it('a human answer resolves item and ambiguity in one transaction, recording who answered', async () => {
      const inst = await b.open();
      try {
        const q = await escalate(inst);
        const head = (await inst.events.head())!.position;
        const done = await inst.work.resolve({
          id: q.id,
          status: 'done',
          result: { answer: 'OAuth', by: 'mallory' },
          actor: 'ana',
          actor_kind: 'human',
        });
        expect(done).toMatchObject({ id: q.id, status: 'done', result: { answer: 'OAuth', by: 'mallory' } });
        expect(await ambiguity(inst)).toMatchObject({
          status: 'resolved',
          resolution: 'OAuth',
          resolved_by: 'ana',
          escalation_work_item_id: q.id,
        });
        const events = await inst.events.read({ after: head });
        expect(events.map((e) => e.type).sort()).toEqual(
          ['ambiguity_resolved', 'state_committed', 'work_item_resolved'].sort(),
        );
        // One transaction: consecutive positions, one moment, the human as actor of both.
        expect(new Set(events.map((e) => e.created_at)).size).toBe(1);
        expect(events.every((e) => e.actor === 'ana')).toBe(true);
        expect(events.find((e) => e.type === 'work_item_resolved')?.data).toMatchObject({
          actor_kind: 'human',
        });
        const history = await inst.docs.history({ kind: 'task-ir', id: 'login', reverse: true, limit: 1 });
        expect(history.entries[0]).toMatchObject({ actor: 'ana', actor_kind: 'human' });
        expect(
          (await inst.docs.commit({ kind: 'agent-run', id: 'r1', expected_version: 0, body: RUN })).version,
        ).toBe(1);
        expect((await inst.events.verify()).ok).toBe(true);
      } finally {
        await inst.close();
      }
    });

    it('an answer without an answer, or failed, is refused and changes nothing; the question can still be answered', async () => {
      const inst = await b.open();
      try {
        const q = await escalate(inst);
        const before = await state(inst);
        for (const result of [undefined, null, '', { answer: null }]) {
          await expect(
            inst.work.resolve({
              id: q.id,
              status: 'done',
              actor: 'ana',
              actor_kind: 'human',
              ...(result === undefined ? {} : { result }),
            }),
          ).rejects.toMatchObject({ code: 'INVALID_INPUT', details: { rule: 'ambiguity-answer-required' } });
        }
        await expect(
          inst.work.resolve({
            id: q.id,
            status: 'failed',
            error: 'no idea',
            actor: 'ana',
            actor_kind: 'human',
          }),
        ).rejects.toMatchObject({ code: 'INVALID_TRANSITION' });
        await expect(
          inst.work.resolve({ id: q.id, status: 'done', result: { answer: 'x' }, actor_kind: 'human' }),
        ).rejects.toMatchObject({ code: 'INVALID_INPUT', details: { field: 'actor' } });
        expect(await state(inst)).toEqual(before);
        await inst.work.resolve({
          id: q.id,
          status: 'done',
          result: { answer: 'OAuth' },
          actor: 'ana',
          actor_kind: 'human',
        });
        expect(await ambiguity(inst)).toMatchObject({ status: 'resolved' });
      } finally {
        await inst.close();
      }
    });

    it('the same answer repeated returns the item unchanged; a different one is INVALID_TRANSITION', async () => {
      const inst = await b.open();
      try {
        const q = await escalate(inst);
        const answer = {
          id: q.id,
          status: 'done' as const,
          result: { answer: 'OAuth' },
          actor: 'ana',
          actor_kind: 'human' as const,
        };
        const first = await inst.work.resolve(answer);
        const after = await state(inst);
        expect(await inst.work.resolve(answer)).toEqual(first);
        expect(await state(inst)).toEqual(after);
        await expect(inst.work.resolve({ ...answer, result: { answer: 'passwords' } })).rejects.toMatchObject(
          { code: 'INVALID_TRANSITION' },
        );
        expect(await state(inst)).toEqual(after);
      } finally {
        await inst.close();
      }
    });

    it('two humans answering at once: exactly one answer lands', async () => {
      const key = `race-${Math.random().toString(36).slice(2)}`;
      const one = await b.open(key);
      const two = await b.open(key);
      try {
        const q = await escalate(one);
        const results = await Promise.allSettled([
          one.work.resolve({
            id: q.id,
            status: 'done',
            result: { answer: 'A' },
            actor: 'ana',
            actor_kind: 'human',
          }),
          two.work.resolve({
            id: q.id,
            status: 'done',
            result: { answer: 'B' },
            actor: 'bo',
            actor_kind: 'human',
          }),
        ]);
        expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
        const winner = (results.find((r) => r.status === 'fulfilled') as PromiseFulfilledResult<WorkItem>)
          .value;
        const amb = await ambiguity(one);
        expect(amb.resolution).toBe((winner.result as { answer: string }).answer);
        expect((await one.events.read({ type: 'ambiguity_resolved' })).length).toBe(1);
      } finally {
        await one.close();
        await two.close();
      }
    });
  });
}

describe('human decisions through the CLI', () => {
  const dir = join(tempDir(), 'cli');
  const cli = (args: string[], input?: string) => runCli(['--dir', dir, ...args], {}, input);

  it('a resolve without --actor-kind human is exit 4; the answer as a human resolves the ambiguity', () => {
    expect(cli(['init']).code).toBe(0);
    expect(
      cli(['state', 'commit', 'task-ir', 'login', '--expect', '0', '--body', '-'], JSON.stringify(TASK)).code,
    ).toBe(0);
    const escalated = structuredClone(TASK);
    (escalated.ambiguities as JsonObject[])[0]!.status = 'escalated';
    expect(
      cli(['state', 'commit', 'task-ir', 'login', '--expect', '1', '--body', '-'], JSON.stringify(escalated))
        .code,
    ).toBe(0);
    const [q] = cli(['list', '--status', 'waiting_human', '--json']).json as WorkItem[];
    const worker = cli(['resolve', q!.id, 'done', '--result', '{"answer":"OAuth","by":"ana"}', '--json']);
    expect(worker.code).toBe(4);
    expect(worker.errorJson).toMatchObject({ error: { code: 'PERMISSION_DENIED', rule: 'human-decision' } });
    expect(cli(['unpark', q!.id]).code).toBe(4);
    const human = cli([
      'resolve',
      q!.id,
      'done',
      '--result',
      '{"answer":"OAuth"}',
      '--actor',
      'ana',
      '--actor-kind',
      'human',
      '--json',
    ]);
    expect(human.code).toBe(0);
    const task = cli(['state', 'get', 'task-ir', 'login', '--json']).json as { body: JsonObject };
    expect((task.body.ambiguities as JsonObject[])[0]).toMatchObject({
      status: 'resolved',
      resolved_by: 'ana',
    });
    // Repeating the same answer is exit 0 (ResolveWorkItem.md's retry promise).
    expect(
      cli([
        'resolve',
        q!.id,
        'done',
        '--result',
        '{"answer":"OAuth"}',
        '--actor',
        'ana',
        '--actor-kind',
        'human',
      ]).code,
    ).toBe(0);
  });
});
