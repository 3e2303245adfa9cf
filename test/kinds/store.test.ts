// The kinds through the store, on every backend: every refusal writes nothing (no version, no history, no
// event), state_version follows the document version, and a TaskIR ambiguity escalates to a human and back.
import { readFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CommitInput, JsonObject } from '../../src/core/types.js';
import type { Instance } from '../../src/instance/instance.js';
import { backendsForThisFile } from '../helpers/backends.js';
import { appendUntil, FULL_EXAMPLE_EVENTS } from '../helpers/events.js';

let inst: Instance;
const T_START = Date.parse('2026-11-30T10:00:00.000Z');
let t = T_START;

const backends = await backendsForThisFile();

const example = (name: string): JsonObject =>
  JSON.parse(readFileSync(new URL(`./examples/${name}.json`, import.meta.url), 'utf8')) as JsonObject;
const clone = <T>(v: T): T => structuredClone(v);

/** Asserts the commit is refused with `code` (and rule), and that nothing at all was written. */
async function refusedWithoutWrite(input: CommitInput, code: string, rule?: string): Promise<void> {
  const before = {
    version: (await inst.docs.find(input.kind, input.id))?.version ?? 0,
    head: (await inst.events.head())?.position ?? 0,
    items: (await inst.work.list({ limit: 1000 })).length,
  };
  let err: { code?: string; details?: { rule?: string } } | undefined;
  try {
    await inst.docs.commit(input);
  } catch (e) {
    err = e as typeof err;
  }
  expect(err?.code, `expected ${code}`).toBe(code);
  if (rule) expect(err?.details?.rule).toBe(rule);
  expect({
    version: (await inst.docs.find(input.kind, input.id))?.version ?? 0,
    head: (await inst.events.head())?.position ?? 0,
    items: (await inst.work.list({ limit: 1000 })).length,
  }).toEqual(before);
}

async function seedRun(): Promise<JsonObject> {
  await inst.docs.commit({
    kind: 'task-ir',
    id: 'task-example',
    expected_version: 0,
    body: example('task-ir.resolved'),
  });
  await appendUntil(inst, FULL_EXAMPLE_EVENTS);
  const body = example('agent-run.full');
  await inst.docs.commit({ kind: 'agent-run', id: 'run', expected_version: 0, body, actor: 'coder' });
  return (await inst.docs.get({ kind: 'agent-run', id: 'run' })).body;
}

const run = (expected: number, body: JsonObject, extra: Partial<CommitInput> = {}): CommitInput => ({
  kind: 'agent-run',
  id: 'run',
  expected_version: expected,
  body,
  actor: 'coder',
  ...extra,
});

for (const backend of backends) {
  describe(`on ${backend.name}`, () => {
    beforeEach(async () => {
      // Each test on its own instance, from the same moment.
      t = T_START;
      inst = await backend.open(undefined, { clock: () => t });
    });
    afterEach(async () => {
      await inst.close();
    });

    describe('agent-run through the store', () => {
      it('state_version always equals the document version, whatever the writer sends', async () => {
        const r1 = await inst.docs.commit({
          kind: 'agent-run',
          id: 'm',
          expected_version: 0,
          body: example('agent-run.minimal'),
        });
        expect(r1.body.state_version).toBe(1);
        const forged = { ...r1.body, state_version: 99, intent: { text: 'changed' } };
        const r2 = await inst.docs.commit({ kind: 'agent-run', id: 'm', expected_version: 1, body: forged });
        expect([r2.version, r2.body.state_version]).toEqual([2, 2]);
      });

      it('a fact without evidence is refused and writes nothing; one citing a receipt is accepted', async () => {
        const b = await seedRun();
        const bad = clone(b);
        (bad.facts as JsonObject[]).push({ id: 'f9', statement: 'unproven', evidence: [] });
        await refusedWithoutWrite(run(1, bad), 'VALIDATION_FAILED');
        const good = clone(b);
        (good.facts as JsonObject[]).push({
          id: 'f9',
          statement: 'the edit applied',
          evidence: [{ receipt: 'r2' }],
        });
        expect((await inst.docs.commit(run(1, good))).version).toBe(2);
      });

      it('a run cannot be recorded as succeeded without a completion record or with failures open', async () => {
        const b = await seedRun();
        const noRecord = { ...clone(b), status: 'succeeded' };
        await refusedWithoutWrite(run(1, noRecord), 'VALIDATION_FAILED', 'completion-recorded');
        const at = new Date(t).toISOString();
        const withOpenFailure = clone(b);
        (withOpenFailure.verifications as JsonObject[]).push({
          id: 'v2',
          check: 'npm test',
          status: 'passed',
          at,
          criteria: ['ac1'],
        });
        withOpenFailure.status = 'succeeded';
        withOpenFailure.completion = { status: 'succeeded', at, by: 'coder', verification_ids: ['v2'] };
        await refusedWithoutWrite(run(1, withOpenFailure), 'VALIDATION_FAILED');
        const done = clone(withOpenFailure);
        done.failures = (done.failures as JsonObject[]).map((f) => ({
          ...f,
          status: 'resolved',
          resolution: 'fixed',
        }));
        const r = await inst.docs.commit(run(1, done));
        expect(r.body).toMatchObject({ status: 'succeeded', completion: { by: 'coder' } });
      });

      it('a model write needs provenance; with it the provenance is in the history', async () => {
        const b = await seedRun();
        const next = { ...clone(b), diagnostics: [] };
        await refusedWithoutWrite(
          run(1, next, { actor_kind: 'model', actor: 'coder' }),
          'PROVENANCE_REQUIRED',
        );
        const provenance = {
          model_id: 'model-a',
          prompt_ref: 'prompts/fix.md#3',
          run_id: 'run-full',
          step_id: 'n2',
        };
        await inst.docs.commit(run(1, next, { actor_kind: 'model', provenance }));
        const [, second] = (await inst.docs.history({ kind: 'agent-run', id: 'run' })).entries;
        expect(second).toMatchObject({ actor_kind: 'model', provenance });
      });

      it('swapping a model is an event, never a state change; a body holding a model is refused', async () => {
        const b = await seedRun();
        await refusedWithoutWrite(
          run(1, { ...clone(b), current_model: 'model-b' }),
          'VALIDATION_FAILED',
          'model-changes-are-events',
        );
        await inst.events.append({
          type: 'model_swapped',
          stream: 'model:run',
          data: { from: 'model-a', to: 'model-b' },
        });
        expect((await inst.docs.get({ kind: 'agent-run', id: 'run' })).version).toBe(1);
      });

      it('spend over a budget limit needs an explicit override, which is recorded', async () => {
        const b = await seedRun();
        const over = clone(b);
        (over.budgets as { tokens: { spent: number } }).tokens.spent = 250_000;
        await refusedWithoutWrite(run(1, over), 'VALIDATION_FAILED', 'budget-limit');
        const override = { rules: ['budget-limit'], reason: 'approved by the lead for the flaky retry' };
        await inst.docs.commit(run(1, over, { override }));
        const [, second] = (await inst.docs.history({ kind: 'agent-run', id: 'run' })).entries;
        expect(second!.override).toEqual(override);
      });

      it('locks: held by one actor until expiry; others get a conflict, cannot release it, and may take it after expiry', async () => {
        const b = await seedRun();
        const lock = (holder: string, ms: number) => ({
          resource: 'src/date.ts',
          holder,
          acquired_at: new Date(t).toISOString(),
          expires_at: new Date(t + ms).toISOString(),
        });
        await inst.docs.commit(run(1, { ...clone(b), locks: [lock('coder', 60_000)] }));
        const held = (await inst.docs.get({ kind: 'agent-run', id: 'run' })).body;
        await refusedWithoutWrite(
          run(2, { ...clone(held), locks: [lock('reviewer', 60_000)] }, { actor: 'reviewer' }),
          'STATE_CONFLICT',
        );
        await refusedWithoutWrite(
          run(2, { ...clone(held), locks: [] }, { actor: 'reviewer' }),
          'PERMISSION_DENIED',
        );
        t += 61_000;
        const taken = await inst.docs.commit(
          run(2, { ...clone(held), locks: [lock('reviewer', 60_000)] }, { actor: 'reviewer' }),
        );
        expect((taken.body.locks as Array<{ holder: string }>)[0]!.holder).toBe('reviewer');
      });

      it('status transitions follow the table', async () => {
        const b = await seedRun();
        await refusedWithoutWrite(run(1, { ...clone(b), status: 'created' }), 'INVALID_TRANSITION');
      });
    });

    describe('task-ir through the store', () => {
      const startRun = (expected: number, status = 'running'): CommitInput => ({
        kind: 'agent-run',
        id: 'r',
        expected_version: expected,
        body: { run_id: 'r', agent: 'coder', status, intent: { text: 'fix it' }, task_ir: { id: 'task' } },
        actor: 'coder',
      });

      it('an open ambiguity blocks the start of a run; escalation parks a work item for a human, whose answer resolves it', async () => {
        await inst.docs.commit({
          kind: 'task-ir',
          id: 'task',
          expected_version: 0,
          body: example('task-ir.open'),
        });
        await inst.docs.commit(startRun(0, 'created'));
        await refusedWithoutWrite(startRun(1), 'AMBIGUITY_UNRESOLVED');

        // Escalate q1: a waiting_human work item and an ambiguity_escalated event, in the same commit.
        const task = (await inst.docs.get({ kind: 'task-ir', id: 'task' })).body;
        const escalated = clone(task);
        (escalated.ambiguities as JsonObject[])[0]!.status = 'escalated';
        const r = await inst.docs.commit({
          kind: 'task-ir',
          id: 'task',
          expected_version: 1,
          body: escalated,
        });
        expect(r.version).toBe(2);
        const [item] = await inst.work.list({ status: 'waiting_human' });
        expect(item).toMatchObject({
          kind: 'task-ir.ambiguity',
          payload: { doc_id: 'task', ambiguity_id: 'q1' },
        });
        expect((await inst.events.read({ type: 'ambiguity_escalated' })).length).toBe(1);
        // Escalated but unanswered still blocks the start.
        await refusedWithoutWrite(startRun(1), 'AMBIGUITY_UNRESOLVED');

        // A worker cannot answer it: not by resolving it, not by unparking it to claim it.
        await expect(
          inst.work.resolve({
            id: item!.id,
            status: 'done',
            worker: 'alice',
            result: { answer: 'preserve' },
          }),
        ).rejects.toMatchObject({ code: 'PERMISSION_DENIED', details: { rule: 'human-decision' } });
        await expect(inst.work.unpark({ id: item!.id })).rejects.toMatchObject({ code: 'PERMISSION_DENIED' });
        // The human answers by resolving the work item; the ambiguity becomes resolved in the same commit.
        await inst.work.resolve({
          id: item!.id,
          status: 'done',
          actor: 'alice',
          actor_kind: 'human',
          result: { answer: 'preserve' },
        });
        const after = await inst.docs.get({ kind: 'task-ir', id: 'task' });
        expect(after.version).toBe(3);
        expect((after.body.ambiguities as JsonObject[])[0]).toMatchObject({
          id: 'q1',
          status: 'resolved',
          resolution: 'preserve',
          resolved_by: 'alice',
        });
        expect((await inst.docs.commit(startRun(1))).body.status).toBe('running');
      });

      it('resolved is final: reopening an ambiguity is refused and writes nothing', async () => {
        await inst.docs.commit({
          kind: 'task-ir',
          id: 'task',
          expected_version: 0,
          body: example('task-ir.resolved'),
        });
        const body = clone((await inst.docs.get({ kind: 'task-ir', id: 'task' })).body);
        (body.ambiguities as JsonObject[])[0]!.status = 'open';
        await refusedWithoutWrite(
          { kind: 'task-ir', id: 'task', expected_version: 1, body },
          'INVALID_TRANSITION',
        );
      });
    });
  });
}
