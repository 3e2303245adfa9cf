// Issue 12, points 1 and 2, on every backend: "Ambiguity is represented explicitly. Unresolved ambiguity
// escalates instead of being guessed." A run proceeds (starts, resumes, succeeds) only while its TaskIR
// has no open or escalated ambiguity, and the refusal points at `escalate`, which moves the open ones to
// escalated and puts their questions to a human in one commit.
import { describe, expect, it } from 'vitest';
import type { CommitInput, JsonObject, WorkItem } from '../../src/core/types.js';
import type { Instance } from '../../src/instance/instance.js';
import { runOperation } from '../../src/service/invoke.js';
import { runWorkflow } from '../../src/workflows/registry.js';
import { backendsForThisFile } from '../helpers/backends.js';
import { runCli } from '../helpers/cli.js';

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

/** A task with two open ambiguities and a resolved one. */
const OPEN_TASK: JsonObject = {
  goal: 'Add login',
  acceptance_criteria: [{ id: 'ac1', text: 'users can log in' }],
  ambiguities: [
    { id: 'a1', question: 'OAuth or passwords?', status: 'open' },
    { id: 'a2', question: 'Remember me?', status: 'open' },
    { id: 'a3', question: 'Which Node?', status: 'resolved', resolution: '>=20' },
  ],
};

const statuses = async (inst: Instance) =>
  ((await inst.docs.get({ kind: 'task-ir', id: 'login' })).body.ambiguities as JsonObject[]).map(
    (a) => `${String(a.id)}:${String(a.status)}`,
  );

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

    it('point 2: a refused run says to escalate; escalate asks every open question in one commit, and only once', async () => {
      const key = `esc-${Math.random().toString(36).slice(2)}`;
      const inst = await b.open(key);
      const other = await b.open(key);
      try {
        await inst.docs.commit({ kind: 'task-ir', id: 'login', expected_version: 0, body: OPEN_TASK });
        const refused = await refusedWithoutWrite(inst, {
          kind: 'agent-run',
          id: 'r1',
          expected_version: 0,
          body: RUN,
          actor: 'coder',
        });
        expect(refused).toMatchObject({
          code: 'AMBIGUITY_UNRESOLVED',
          details: {
            task_ir: 'login',
            ambiguities: [
              { id: 'a1', status: 'open' },
              { id: 'a2', status: 'open' },
            ],
            escalate: ['a1', 'a2'],
          },
        });
        expect(refused.message).toContain('a1 (open), a2 (open)');
        expect(refused.message).toContain('`agentstate escalate login`');

        const head = (await inst.events.head())!.position;
        // Two handles escalate at once: one commit lands, the other finds nothing left to ask.
        const raced = await Promise.all([
          inst.docs.escalate({ kind: 'task-ir', id: 'login', actor: 'coder' }),
          other.docs.escalate({ kind: 'task-ir', id: 'login', actor: 'coder' }),
        ]);
        expect(raced.map((x) => x.changed).sort()).toEqual([false, true]);
        const r = raced.find((x) => x.changed)!;
        expect(raced.find((x) => !x.changed)!.decisions).toEqual(r.decisions);
        expect(r).toMatchObject({
          kind: 'task-ir',
          id: 'login',
          version: 2,
          previous_version: 1,
          changed: true,
        });
        expect(await statuses(inst)).toEqual(['a1:escalated', 'a2:escalated', 'a3:resolved']);
        expect(
          r.decisions.map((d) => [
            d.kind,
            d.status,
            d.idempotency_key,
            (d.payload as JsonObject).ambiguity_id,
          ]),
        ).toEqual([
          ['task-ir.ambiguity', 'waiting_human', 'doc:task-ir/login#ambiguity/a1', 'a1'],
          ['task-ir.ambiguity', 'waiting_human', 'doc:task-ir/login#ambiguity/a2', 'a2'],
        ]);
        // One commit: the new version, both items and their events are one transaction, one moment.
        const events = await inst.events.read({ after: head });
        expect(events.map((e) => e.type).filter((t) => t !== 'work_item_enqueued')).toEqual([
          'state_committed',
          'ambiguity_escalated',
          'ambiguity_escalated',
        ]);
        expect(events.filter((e) => e.type === 'work_item_enqueued').length).toBeGreaterThanOrEqual(1);
        expect(new Set(events.map((e) => e.created_at)).size).toBe(1);
        expect(events.map((e) => e.position)).toEqual(events.map((_, i) => head + 1 + i));
        const history = await inst.docs.history({ kind: 'task-ir', id: 'login' });
        expect(history.entries.map((e) => e.version)).toEqual([1, 2]);

        // Idempotent: again, through the library, the service and the workflow, on both handles at once,
        // nothing is written and nothing is asked twice.
        const after = await snapshot(inst);
        const again = await Promise.all([
          inst.docs.escalate({ kind: 'task-ir', id: 'login' }),
          other.docs.escalate({ kind: 'task-ir', id: 'login' }),
          runOperation(inst, 'escalate', { id: 'login' }) as Promise<typeof r>,
          runWorkflow(other, 'EscalateAmbiguities', { id: 'login', ambiguities: ['a1', 'a2'] }) as Promise<
            typeof r
          >,
        ]);
        for (const x of again) {
          expect(x).toMatchObject({ version: 2, changed: false });
          expect(x.decisions.map((d) => d.id)).toEqual(r.decisions.map((d) => d.id));
        }
        expect(await snapshot(inst)).toEqual(after);

        // Once the humans answer, nothing is left waiting and the run starts.
        for (const d of r.decisions) {
          await inst.work.resolve({
            id: d.id,
            status: 'done',
            result: { answer: 'yes' },
            actor: 'ana',
            actor_kind: 'human',
          });
        }
        expect((await inst.docs.escalate({ kind: 'task-ir', id: 'login' })).decisions).toEqual([]);
        expect(
          (
            await inst.docs.commit({
              kind: 'agent-run',
              id: 'r1',
              expected_version: 0,
              body: RUN,
              actor: 'coder',
            })
          ).version,
        ).toBe(1);
        expect((await inst.events.verify()).ok).toBe(true);
      } finally {
        await inst.close();
        await other.close();
      }
    });

    it('point 2: escalating only the named ones; bad input is refused and writes nothing', async () => {
      const inst = await b.open();
      try {
        await inst.docs.commit({ kind: 'task-ir', id: 'login', expected_version: 0, body: OPEN_TASK });
        const before = await snapshot(inst);
        const bad: Array<[Record<string, unknown>, string, Record<string, unknown>?]> = [
          [{ id: 'login', ambiguities: ['nope'] }, 'INVALID_INPUT', { field: 'ambiguities[0]' }],
          [{ id: 'login', ambiguities: ['a1', 'a3'] }, 'INVALID_TRANSITION', { field: 'ambiguities[1]' }],
          [{ id: 'missing' }, 'NOT_FOUND'],
          [{}, 'INVALID_INPUT', { field: 'id' }],
          [{ id: 5 }, 'INVALID_INPUT', { field: 'id' }],
          [{ id: 'login', ambiguities: 'a1' }, 'INVALID_INPUT', { field: 'ambiguities' }],
          [{ id: 'login', ambiguities: [7] }, 'INVALID_INPUT'],
          [{ id: 'login', ambiguities: ['a\u0000'] }, 'INVALID_INPUT'],
          [{ id: 'login', kind: 'json' }, 'INVALID_INPUT', { field: 'kind' }],
          [{ id: 'login', bogus: true }, 'INVALID_INPUT', { field: 'bogus' }],
          [{ id: 'login', actor_kind: 'robot' }, 'INVALID_INPUT', { field: 'actor_kind' }],
          [{ id: 'login', actor_kind: 'model' }, 'PROVENANCE_REQUIRED'],
        ];
        for (const [input, code, details] of bad) {
          await expect(runOperation(inst, 'escalate', input), JSON.stringify(input)).rejects.toMatchObject({
            code,
            ...(details ? { details } : {}),
          });
        }
        // The library refuses a kind that asks no questions, and hostile args, the same way.
        await inst.docs.commit({ kind: 'json', id: 'login', expected_version: 0, body: {} });
        const withJson = await snapshot(inst);
        await expect(inst.docs.escalate({ kind: 'json', id: 'login' })).rejects.toMatchObject({
          code: 'INVALID_INPUT',
          details: { field: 'kind' },
        });
        await expect(
          inst.docs.escalate({ kind: 'task-ir', id: 'login', args: { ambiguities: ['a1'], extra: 1 } }),
        ).rejects.toMatchObject({ code: 'INVALID_INPUT', details: { field: 'extra' } });
        await expect(
          inst.docs.escalate({ kind: 'task-ir', id: 'login', args: 'a1' as never }),
        ).rejects.toMatchObject({ code: 'INVALID_INPUT', details: { field: 'args' } });
        expect(await snapshot(inst)).toEqual(withJson);
        expect(before.head).toBeLessThan(withJson.head);

        const r = (await runOperation(inst, 'escalate', { id: 'login', ambiguities: ['a2', 'a2'] })) as {
          changed: boolean;
          decisions: WorkItem[];
        };
        expect(r.changed).toBe(true);
        expect(await statuses(inst)).toEqual(['a1:open', 'a2:escalated', 'a3:resolved']);
        expect(r.decisions.map((d) => (d.payload as JsonObject).ambiguity_id)).toEqual(['a2']);
      } finally {
        await inst.close();
      }
    });

    // The CLI and the workflow are views of the escalate operation whose store behaviour the tests above check
    // on every backend: their exit codes and messages are checked once, on the embedded store.
    const itEmbedded = (b.name === 'sqlite' ? it : it.skip) as typeof it;
    itEmbedded(
      'point 2 through the CLI and the workflow: exit 4 says to escalate, `agentstate escalate` does, exit codes map',
      () => {
        const key = `cli-${Math.random().toString(36).slice(2)}`;
        const flags = b.cliArgs(key);
        const cli = (args: string[], input?: string, env: Record<string, string> = {}) =>
          runCli([...flags, ...args], env, input);
        expect(cli(['init']).code).toBe(0);
        expect(
          cli(
            ['state', 'commit', 'task-ir', 'login', '--expect', '0', '--body', '-'],
            JSON.stringify(OPEN_TASK),
          ).code,
        ).toBe(0);
        const start = cli(
          ['state', 'commit', 'agent-run', 'r1', '--expect', '0', '--body', '-', '--json'],
          JSON.stringify(RUN),
        );
        expect(start.code).toBe(4);
        expect(start.errorJson).toMatchObject({
          error: { code: 'AMBIGUITY_UNRESOLVED', task_ir: 'login', escalate: ['a1', 'a2'] },
        });
        expect((start.errorJson as { error: { message: string } }).error.message).toContain(
          'agentstate escalate login',
        );

        expect(cli(['escalate', 'login', 'nope']).code).toBe(2);
        expect(cli(['escalate', 'login', 'a3']).code).toBe(3);
        expect(cli(['escalate', 'login', '--actor-kind', 'model']).code).toBe(4);
        expect(cli(['escalate', 'missing']).code).toBe(1);
        const human = cli(['escalate', 'login', 'a1']);
        expect(human.code, human.stderr).toBe(0);
        expect(human.stdout).toMatch(
          /task-ir\/login v1 → v2: escalated\nwaiting for a human:\n {2}wi_\w+ {2}a1 {2}OAuth or passwords\?/,
        );
        const json = cli(['escalate', 'login', '--json']);
        expect(json.code).toBe(0);
        expect(json.json).toMatchObject({ version: 3, changed: true });
        expect((json.json as { decisions: WorkItem[] }).decisions).toHaveLength(2);

        // The workflow: same result, and the MF_* contract for bad payloads.
        const wf = cli(['EscalateAmbiguities'], undefined, { MF_TRIGGER_PAYLOAD_JSON: '{"id":"login"}' });
        expect(wf.code, wf.stderr).toBe(0);
        expect(wf.json).toMatchObject({ version: 3, changed: false });
        expect((wf.json as { decisions: WorkItem[] }).decisions.map((d) => d.id)).toEqual(
          (json.json as { decisions: WorkItem[] }).decisions.map((d) => d.id),
        );
        const badWf = cli(['EscalateAmbiguities'], undefined, {
          MF_TRIGGER_PAYLOAD_JSON: '{"id":"login","x":1}',
        });
        expect(badWf.code).toBe(2);
        expect(badWf.errorJson).toMatchObject({ error: { code: 'INVALID_INPUT', field: 'x' } });
        const list = cli(['list', '--status', 'waiting_human', '--json']).json as WorkItem[];
        expect(list).toHaveLength(2);
      },
    );
  });
}
