// Issue 12, points 1 and 2, on every backend: "Ambiguity is represented explicitly. Unresolved ambiguity
// escalates instead of being guessed." A run proceeds (starts, resumes, succeeds) only while its TaskIR
// has no open or escalated ambiguity, and the refusal points at `escalate`, which moves the open ones to
// escalated and puts their questions to a human in one commit.
import { describe, expect, it } from 'vitest';
import type { CommitInput, JsonObject } from '../../src/core/types.js';
import type { Instance } from '../../src/instance/instance.js';
import { backendsForThisFile } from '../helpers/backends.js';

const backends = await backendsForThisFile();

const AT = '2026-01-01T00:00:00.000Z';
const TASK: JsonObject = {
  goal: 'Add login',
  acceptance_criteria: [{ id: 'ac1', text: 'users can log in' }],
  ambiguities: [{ id: 'a1', question: 'OAuth or passwords?', status: 'resolved', resolution: 'OAuth' }],
};
const RUN: JsonObject = {
  run_id: 'r1',
  agent: 'coder',
  status: 'running',
  intent: { text: 'add login' },
  task_ir: { id: 'login' },
};

/** Everything a refused write must leave as it was. */
async function snapshot(inst: Instance) {
  return {
    docs: await Promise.all(
      (await inst.docs.list()).map(async (d) => [d.kind, d.id, d.version, d.content_hash]),
    ),
    items: await inst.work.list({ limit: 1000 }),
    head: (await inst.events.head())?.position ?? 0,
  };
}

async function refusedWithoutWrite(inst: Instance, input: CommitInput) {
  const before = await snapshot(inst);
  const err = await inst.docs.commit(input).then(
    () => null,
    (e: unknown) => e as { code: string; message: string; details: Record<string, unknown> },
  );
  expect(err, 'the write must be refused').not.toBeNull();
  expect(await snapshot(inst)).toEqual(before);
  return err!;
}

/** The run as it is now, with `status` (and for `succeeded` a passed verification and a completion record). */
async function runAs(inst: Instance, status: string): Promise<CommitInput> {
  const cur = await inst.docs.get({ kind: 'agent-run', id: 'r1' });
  const body: JsonObject = { ...cur.body, status };
  if (status === 'succeeded') {
    body.verifications = [{ id: 'v1', check: 'npm test', status: 'passed', at: AT }];
    body.completion = { status: 'succeeded', at: AT, by: 'coder', verification_ids: ['v1'] };
  }
  return { kind: 'agent-run', id: 'r1', expected_version: cur.version, body, actor: 'coder' };
}

/** Adds ambiguity `a2` (open) to the task after the run started. */
async function addOpenAmbiguity(inst: Instance): Promise<void> {
  const task = await inst.docs.get({ kind: 'task-ir', id: 'login' });
  const next = structuredClone(task.body);
  (next.ambiguities as JsonObject[]).push({ id: 'a2', question: 'Remember me?', status: 'open' });
  await inst.docs.commit({ kind: 'task-ir', id: 'login', expected_version: task.version, body: next });
}

async function startedRun(inst: Instance): Promise<void> {
  await inst.docs.commit({ kind: 'task-ir', id: 'login', expected_version: 0, body: TASK });
  await inst.docs.commit({ kind: 'agent-run', id: 'r1', expected_version: 0, body: RUN, actor: 'coder' });
}

for (const b of backends) {
  describe(`ambiguity escalates on ${b.name}`, () => {
    it('point 1: with an open ambiguity a run can stop but not succeed or resume; once answered it can', async () => {
      const inst = await b.open();
      try {
        await startedRun(inst);
        await addOpenAmbiguity(inst);

        // Succeeding is refused, and writes nothing.
        const success = await refusedWithoutWrite(inst, await runAs(inst, 'succeeded'));
        expect(success).toMatchObject({
          code: 'AMBIGUITY_UNRESOLVED',
          details: {
            rule: 'ambiguity-unresolved',
            from: 'running',
            to: 'succeeded',
            ambiguities: [{ id: 'a2', status: 'open' }],
          },
        });
        expect(success.message).toContain('agentstate escalate login');

        // Stopping is allowed; resuming from blocked or waiting is not.
        await inst.docs.commit(await runAs(inst, 'blocked'));
        const resume = await refusedWithoutWrite(inst, await runAs(inst, 'running'));
        expect(resume).toMatchObject({
          code: 'AMBIGUITY_UNRESOLVED',
          details: { from: 'blocked', to: 'running' },
        });
        expect(resume.message).toMatch(/^run cannot resume from blocked: task-ir login has unresolved/);

        // Escalated is not resolved either: still refused, until a human answers.
        const task = await inst.docs.get({ kind: 'task-ir', id: 'login' });
        const escalated = structuredClone(task.body);
        (escalated.ambiguities as JsonObject[])[1]!.status = 'escalated';
        await inst.docs.commit({
          kind: 'task-ir',
          id: 'login',
          expected_version: task.version,
          body: escalated,
        });
        expect(await refusedWithoutWrite(inst, await runAs(inst, 'running'))).toMatchObject({
          code: 'AMBIGUITY_UNRESOLVED',
          details: { ambiguities: [{ id: 'a2', status: 'escalated' }] },
        });
        const [q] = await inst.work.list({ status: 'waiting_human' });
        await inst.work.resolve({
          id: q!.id,
          status: 'done',
          result: { answer: 'no' },
          actor: 'ana',
          actor_kind: 'human',
        });
        await inst.docs.commit(await runAs(inst, 'running'));
        const done = await inst.docs.commit(await runAs(inst, 'succeeded'));
        expect(done.body).toMatchObject({ status: 'succeeded' });
        expect((await inst.events.verify()).ok).toBe(true);
      } finally {
        await inst.close();
      }
    });
  });
}
