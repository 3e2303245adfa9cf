// Kind `agent-run` (AgentState): schema and every rule of `check`, each with an accepted write and a
// refused one (code, JSON pointer, rule).
import { describe, expect, it } from 'vitest';
import type { CommitContext } from '../../src/core/kind.js';
import type { JsonObject } from '../../src/core/types.js';
import { agentRunKind } from '../../src/kinds/agent-run/kind.js';
import type { AgentRun } from '../../src/kinds/agent-run/model.js';
import { RUN_TRANSITIONS } from '../../src/kinds/agent-run/rules.js';
import { RUN_STATUSES, type RunStatus } from '../../src/kinds/agent-run/schema.js';
import { validateSchema } from '../../src/kinds/registry.js';
import type { LockRecord } from '../../src/kinds/rules.js';
import { clone, example, makeCtx, NOW, refusal } from './ctx.js';
import { expectRefused } from './expect-refusal.js';

const AT = '2025-01-01T11:00:00Z';
const j = (b: AgentRun) => b as unknown as JsonObject;
const minimal = () => example('agent-run.minimal') as unknown as AgentRun;
const full = () => example('agent-run.full') as unknown as AgentRun;
const docs = { 'task-ir/task-example': example('task-ir.resolved') };
const ctxWith = (over: Partial<CommitContext> & { docs?: Record<string, JsonObject>; head?: number } = {}) =>
  makeCtx({ docs, ...over });

/** Runs schema validation then `check`, as the core does. */
async function commit(next: AgentRun, prev: AgentRun | null, ctx: CommitContext = ctxWith()) {
  validateSchema(agentRunKind, j(next));
  return agentRunKind.check!(j(next), prev ? j(prev) : null, ctx);
}

/** `b` finished successfully: a passed verification of ac1, the failure resolved, a completion record. */
function succeed(b: AgentRun, by = 'coder'): AgentRun {
  const n = clone(b);
  n.verifications = [
    ...(n.verifications ?? []),
    { id: 'v2', check: 'npm test', status: 'passed', at: AT, criteria: ['ac1'] },
  ];
  n.failures = (n.failures ?? []).map((f) => ({
    ...f,
    status: 'resolved' as const,
    resolution: 'offset kept',
  }));
  n.status = 'succeeded';
  n.completion = { status: 'succeeded', at: AT, by, verification_ids: ['v2'] };
  return n;
}

function withStatus(s: RunStatus): AgentRun {
  if (s === 'succeeded') return succeed(full());
  const b = full();
  b.status = s;
  if (s === 'failed' || s === 'cancelled')
    b.completion = { status: s, at: AT, by: 'coder', verification_ids: [] };
  return b;
}

describe('agent-run: schema', () => {
  it('accepts the minimal and the full example', () => {
    expect(() => validateSchema(agentRunKind, j(minimal()))).not.toThrow();
    expect(() => validateSchema(agentRunKind, j(full()))).not.toThrow();
    expect(() => validateSchema(agentRunKind, j(succeed(full())))).not.toThrow();
  });

  it('refuses a missing required field and an unknown one, naming the pointer', async () => {
    const b = minimal() as unknown as JsonObject;
    delete b.intent;
    await expectRefused(
      () => validateSchema(agentRunKind, b),
      'VALIDATION_FAILED',
      '/intent',
      'schema.required',
    );
    const c = { ...minimal(), transcript: [] } as unknown as JsonObject;
    await expectRefused(
      () => validateSchema(agentRunKind, c),
      'VALIDATION_FAILED',
      '/transcript',
      'schema.additionalProperties',
    );
  });

  it('refuses a bad enum value and an evidence reference naming two things', async () => {
    const b = full();
    (b as { status: string }).status = 'done';
    await expectRefused(
      () => validateSchema(agentRunKind, j(b)),
      'VALIDATION_FAILED',
      '/status',
      'schema.enum',
    );
    const c = full();
    c.facts![0]!.evidence = [{ receipt: 'r1', event: 17 }];
    await expectRefused(
      () => validateSchema(agentRunKind, j(c)),
      'VALIDATION_FAILED',
      '/facts/0/evidence/0',
      'schema.maxProperties',
    );
  });
});

describe('agent-run: model changes are events (model-changes-are-events)', () => {
  it('a run without a model field passes', async () => {
    await expect(commit(full(), null)).resolves.toBeUndefined();
  });

  it.each(['model', 'current_model', 'active_model'])('refuses a top-level %s field', async (f) => {
    const b = { ...full(), [f]: 'gpt-x' } as unknown as JsonObject;
    // The schema refuses it at the same pointer and names the rule (x-rule), as does the kind's own check.
    await expectRefused(
      () => validateSchema(agentRunKind, b),
      'VALIDATION_FAILED',
      `/${f}`,
      'model-changes-are-events',
    );
    await expectRefused(
      () => agentRunKind.check!(b, null, ctxWith()),
      'VALIDATION_FAILED',
      `/${f}`,
      'model-changes-are-events',
    );
  });

  it('refuses a model held in environment', async () => {
    const b = full();
    b.environment = { ...b.environment, model: 'gpt-x' };
    await expectRefused(
      () => agentRunKind.check!(j(b), null, ctxWith()),
      'VALIDATION_FAILED',
      '/environment/model',
      'model-changes-are-events',
    );
  });
});

describe('agent-run: status transitions (status-transition)', () => {
  const pairs = RUN_STATUSES.flatMap((from) => RUN_STATUSES.map((to) => [from, to] as const));
  it.each(pairs)('%s → %s follows the table', async (from, to) => {
    const allowed = from === to || (RUN_TRANSITIONS[from] ?? []).includes(to);
    const run = () => commit(withStatus(to), withStatus(from));
    if (allowed) await expect(run()).resolves.toBeUndefined();
    else {
      const d = await expectRefused(run, 'INVALID_TRANSITION', '/status', 'status-transition');
      expect(d).toMatchObject({ from, to });
    }
  });

  it('a new run starts as created or running, not later', async () => {
    await expect(commit(minimal(), null)).resolves.toBeUndefined();
    await expect(commit(full(), null)).resolves.toBeUndefined();
    const b = minimal();
    b.status = 'blocked';
    await expectRefused(() => commit(b, null), 'INVALID_TRANSITION', '/status', 'status-transition');
  });
});

describe('agent-run: identity (identity-immutable)', () => {
  it('run_id and agent never change; task_ir may change only before the start', async () => {
    const prev = minimal();
    const next = clone(prev);
    next.task_ir = { id: 'task-example' };
    await expect(commit(next, prev)).resolves.toBeUndefined();
    const renamed = clone(prev);
    renamed.run_id = 'other';
    await expectRefused(() => commit(renamed, prev), 'VALIDATION_FAILED', '/run_id', 'identity-immutable');
    const started = full();
    const retargeted = clone(started);
    retargeted.task_ir = { id: 'task-other' };
    await expectRefused(
      () => commit(retargeted, started),
      'VALIDATION_FAILED',
      '/task_ir',
      'identity-immutable',
    );
  });
});

describe('agent-run: starting needs a TaskIR without unresolved ambiguity', () => {
  const created = () => ({ ...full(), status: 'created' as const });
  const running = () => full();

  it('starts when every ambiguity is resolved', async () => {
    await expect(commit(running(), created())).resolves.toBeUndefined();
  });

  it('refuses to start with an open ambiguity (AMBIGUITY_UNRESOLVED)', async () => {
    const ctx = ctxWith({ docs: { 'task-ir/task-example': example('task-ir.open') } });
    const d = await expectRefused(
      () => commit(running(), created(), ctx),
      'AMBIGUITY_UNRESOLVED',
      '/task_ir',
      'ambiguity-unresolved',
    );
    expect(d).toMatchObject({ task_ir: 'task-example', ambiguities: [{ id: 'q1', status: 'open' }] });
    // Created directly as running is a start too.
    await expectRefused(
      () => commit(running(), null, ctx),
      'AMBIGUITY_UNRESOLVED',
      '/task_ir',
      'ambiguity-unresolved',
    );
  });

  it('an escalated ambiguity (waiting for a human) also blocks the start', async () => {
    const t = example('task-ir.open') as { ambiguities: Array<{ status: string }> };
    t.ambiguities[0]!.status = 'escalated';
    const ctx = ctxWith({ docs: { 'task-ir/task-example': t as unknown as JsonObject } });
    const d = await expectRefused(
      () => commit(running(), created(), ctx),
      'AMBIGUITY_UNRESOLVED',
      '/task_ir',
      'ambiguity-unresolved',
    );
    expect(d.ambiguities).toEqual([{ id: 'q1', status: 'escalated' }]);
  });

  it('refuses a reference to a TaskIR that does not exist', async () => {
    await expectRefused(
      () => commit(running(), created(), ctxWith({ docs: {} })),
      'VALIDATION_FAILED',
      '/task_ir/id',
      'task-ir-ref',
    );
  });

  it('stopping does not need the TaskIR resolved: cancelling, failing, blocking or waiting', async () => {
    const ctx = ctxWith({ docs: { 'task-ir/task-example': example('task-ir.open') } });
    await expect(commit(withStatus('cancelled'), created(), ctx)).resolves.toBeUndefined();
    await expect(commit(withStatus('failed'), running(), ctx)).resolves.toBeUndefined();
    await expect(commit(withStatus('blocked'), running(), ctx)).resolves.toBeUndefined();
    await expect(commit(withStatus('waiting'), running(), ctx)).resolves.toBeUndefined();
    // Staying put is no transition, and a run without a TaskIR has nothing to check.
    await expect(commit(running(), running(), ctx)).resolves.toBeUndefined();
    const noTask = minimal();
    await expect(commit({ ...noTask, status: 'running' }, noTask, ctx)).resolves.toBeUndefined();
  });

  it('every transition that proceeds is gated (issue 12, point 1): resuming and succeeding too', async () => {
    const ctx = ctxWith({ docs: { 'task-ir/task-example': example('task-ir.open') } });
    for (const [from, verb] of [
      ['blocked', 'resume from blocked'],
      ['waiting', 'resume from waiting'],
    ] as const) {
      const d = await expectRefused(
        () => commit(running(), withStatus(from), ctx),
        'AMBIGUITY_UNRESOLVED',
        '/task_ir',
        'ambiguity-unresolved',
      );
      expect(d).toMatchObject({ from, to: 'running', escalate: ['q1'] });
      const err = await refusal(() => commit(running(), withStatus(from), ctx));
      expect(err.message).toContain(
        `run cannot ${verb}: task-ir task-example has unresolved ambiguities: q1 (open)`,
      );
      expect(err.message).toContain('agentstate escalate task-example');
    }
    const d = await expectRefused(
      () => commit(withStatus('succeeded'), running(), ctx),
      'AMBIGUITY_UNRESOLVED',
      '/task_ir',
      'ambiguity-unresolved',
    );
    expect(d).toMatchObject({
      from: 'running',
      to: 'succeeded',
      ambiguities: [{ id: 'q1', status: 'open' }],
    });
  });

  it('the refusal says what to do: escalate the open ones, wait for the escalated ones', async () => {
    const t = example('task-ir.open') as { ambiguities: Array<{ status: string }> };
    t.ambiguities[0]!.status = 'escalated';
    const ctx = ctxWith({ docs: { 'task-ir/task-example': t as unknown as JsonObject } });
    const err = await refusal(() => commit(withStatus('succeeded'), running(), ctx));
    expect(err.code).toBe('AMBIGUITY_UNRESOLVED');
    expect(err.message).toMatch(/q1 \(escalated\)\. They are escalated: wait for a human/);
    expect(err.details.escalate).toEqual([]);
    // An id that is not one shell word is quoted in the suggested command.
    const odd = { ...running(), task_ir: { id: "it's a task" } };
    const oddCtx = ctxWith({ docs: { "task-ir/it's a task": example('task-ir.open') } });
    const e2 = await refusal(() => commit(odd, { ...odd, status: 'created' }, oddCtx));
    expect(e2.message).toContain(`agentstate escalate 'it'\\''s a task'`);
  });
});

describe('agent-run: facts need evidence (fact-needs-evidence)', () => {
  it('accepts receipt, verification and event evidence present in the state', async () => {
    const b = full();
    b.facts!.push({ id: 'f3', statement: 'npm test fails', evidence: [{ verification: 'v1' }] });
    b.facts!.push({
      id: 'f4',
      statement: 'the shell run was event 21',
      evidence: [{ event: 21 }],
    });
    await expect(commit(b, full())).resolves.toBeUndefined();
  });

  it('refuses a fact without evidence', async () => {
    const b = full();
    b.facts!.push({ id: 'f3', statement: 'it is the parser', evidence: [] });
    await expectRefused(
      () => commit(b, full()),
      'VALIDATION_FAILED',
      '/facts/2/evidence',
      'fact-needs-evidence',
    );
  });

  it.each([[{ receipt: 'r9' }], [{ verification: 'v9' }], [{ event: 99 }]])(
    'refuses evidence that is not in the state: %j',
    async (e) => {
      const b = full();
      b.facts!.push({ id: 'f3', statement: 'it is the parser', evidence: [{ receipt: 'r1' }, e] });
      await expectRefused(
        () => commit(b, full()),
        'VALIDATION_FAILED',
        '/facts/2/evidence/1',
        'fact-needs-evidence',
      );
    },
  );

  it('refuses an event a new fact, event reference, receipt or verification cites that is not in the log (issue 12, point 6)', async () => {
    // The log of this context ends at 20: the full example's event 17 is there, its receipt's event 21 is not.
    const short = ctxWith({ head: 20 });
    const b = full();
    b.facts!.push({ id: 'f3', statement: 'it failed again', evidence: [{ event: 17 }] });
    await expect(commit(b, full(), short)).resolves.toBeUndefined();
    const d = await expectRefused(
      () => commit(full(), null, short),
      'VALIDATION_FAILED',
      '/receipts/0/event_position',
      'event-in-log',
    );
    expect(d.position).toBe(21);
    // Already stored, it was checked when it was added: an unchanged record is not checked again.
    await expect(commit(full(), full(), short)).resolves.toBeUndefined();
    const c = full();
    c.event_refs!.push({ position: 30 });
    c.facts!.push({ id: 'f3', statement: 'deployed', evidence: [{ event: 30 }] });
    await expectRefused(
      () => commit(c, full(), short),
      'VALIDATION_FAILED',
      '/facts/2/evidence/0',
      'fact-needs-evidence',
    );
    const e = full();
    e.event_refs!.push({ position: 30 });
    await expectRefused(
      () => commit(e, full(), short),
      'VALIDATION_FAILED',
      '/event_refs/1/position',
      'event-in-log',
    );
    const v = full();
    v.verifications!.push({ id: 'v2', check: 'lint', status: 'passed', at: AT, event_position: 30 });
    await expectRefused(
      () => commit(v, full(), short),
      'VALIDATION_FAILED',
      '/verifications/1/event_position',
      'event-in-log',
    );
  });

  it('refuses dropping the event reference a fact rests on', async () => {
    const b = full();
    b.event_refs = [];
    await expectRefused(
      () => commit(b, full()),
      'VALIDATION_FAILED',
      '/facts/1/evidence/0',
      'fact-needs-evidence',
    );
  });
});

describe('agent-run: facts are append-only (facts-append-only)', () => {
  it('a fact may be retracted with a reason, once', async () => {
    const b = full();
    b.facts![1]!.retracted = { reason: 'wrong commit', at: AT, by: 'coder' };
    await expect(commit(b, full())).resolves.toBeUndefined();
    const again = clone(b);
    again.facts![1]!.retracted = { reason: 'changed my mind', at: AT, by: 'coder' };
    await expectRefused(() => commit(again, b), 'VALIDATION_FAILED', '/facts/1', 'facts-append-only');
  });

  it('refuses removing a fact', async () => {
    const b = full();
    b.facts!.pop();
    const d = await expectRefused(
      () => commit(b, full()),
      'VALIDATION_FAILED',
      '/facts',
      'facts-append-only',
    );
    expect(d.id).toBe('f2');
  });

  it('refuses editing a fact', async () => {
    const b = full();
    b.facts![1]!.statement = 'The failure started earlier';
    await expectRefused(() => commit(b, full()), 'VALIDATION_FAILED', '/facts/1', 'facts-append-only');
  });
});

describe('agent-run: hypotheses become facts only by promotion', () => {
  const promote = () => {
    const b = full();
    b.hypotheses![1]!.status = 'promoted';
    b.hypotheses![1]!.promoted_to = 'f3';
    b.facts!.push({
      id: 'f3',
      statement: 'The test fixture is stale',
      evidence: [{ receipt: 'r2' }],
      promoted_from: 'h2',
    });
    return b;
  };

  it('promotes open → promoted with a fact that cites evidence', async () => {
    await expect(commit(promote(), full())).resolves.toBeUndefined();
  });

  it('refuses a promotion whose fact cites no evidence', async () => {
    const b = promote();
    b.facts![2]!.evidence = [];
    await expectRefused(
      () => commit(b, full()),
      'VALIDATION_FAILED',
      '/facts/2/evidence',
      'fact-needs-evidence',
    );
  });

  it('refuses marking a hypothesis promoted without its fact (hypothesis-promotion)', async () => {
    const b = promote();
    b.facts!.pop();
    await expectRefused(
      () => commit(b, full()),
      'VALIDATION_FAILED',
      '/hypotheses/1/promoted_to',
      'hypothesis-promotion',
    );
  });

  it('refuses a fact claiming promotion from a hypothesis still open (hypothesis-promotion)', async () => {
    const b = promote();
    b.hypotheses![1]!.status = 'open';
    delete b.hypotheses![1]!.promoted_to;
    await expectRefused(
      () => commit(b, full()),
      'VALIDATION_FAILED',
      '/facts/2/promoted_from',
      'hypothesis-promotion',
    );
  });

  it('a hypothesis may be rejected, but a closed one does not reopen (hypothesis-transition)', async () => {
    const b = full();
    b.hypotheses![1]!.status = 'rejected';
    await expect(commit(b, full())).resolves.toBeUndefined();
    const reopened = clone(b);
    reopened.hypotheses![1]!.status = 'open';
    const d = await expectRefused(
      () => commit(reopened, b),
      'INVALID_TRANSITION',
      '/hypotheses/1/status',
      'hypothesis-transition',
    );
    expect(d).toMatchObject({ from: 'rejected', to: 'open' });
  });

  it('refuses removing a hypothesis (hypothesis-not-removed)', async () => {
    const b = full();
    b.hypotheses!.pop();
    await expectRefused(
      () => commit(b, full()),
      'VALIDATION_FAILED',
      '/hypotheses',
      'hypothesis-not-removed',
    );
  });
});

describe('agent-run: receipts and verification results are append-only', () => {
  it('appending passes; editing or removing is refused', async () => {
    const b = full();
    b.receipts!.push({ id: 'r3', type: 'tool', name: 'shell', status: 'ok', at: AT });
    await expect(commit(b, full())).resolves.toBeUndefined();
    const edited = full();
    edited.receipts![0]!.status = 'ok';
    await expectRefused(
      () => commit(edited, full()),
      'VALIDATION_FAILED',
      '/receipts/0',
      'receipts-append-only',
    );
    const flipped = full();
    flipped.verifications![0]!.status = 'passed';
    await expectRefused(
      () => commit(flipped, full()),
      'VALIDATION_FAILED',
      '/verifications/0',
      'verifications-append-only',
    );
    const dropped = full();
    dropped.verifications = [];
    await expectRefused(
      () => commit(dropped, full()),
      'VALIDATION_FAILED',
      '/verifications',
      'verifications-append-only',
    );
  });
});

describe('agent-run: failures are resolved, never removed', () => {
  it('unresolved → resolved with a resolution passes', async () => {
    const b = full();
    b.failures![0] = { ...b.failures![0]!, status: 'resolved', resolution: 'offset kept' };
    await expect(commit(b, full())).resolves.toBeUndefined();
  });

  it('refuses removal, resolution without a resolution, and reopening', async () => {
    const removed = full();
    removed.failures = [];
    await expectRefused(
      () => commit(removed, full()),
      'VALIDATION_FAILED',
      '/failures',
      'failures-append-only',
    );
    const bare = full();
    bare.failures![0]!.status = 'resolved';
    await expectRefused(
      () => commit(bare, full()),
      'VALIDATION_FAILED',
      '/failures/0/resolution',
      'failure-transition',
    );
    const resolved = full();
    resolved.failures![0] = { ...resolved.failures![0]!, status: 'resolved', resolution: 'x' };
    const reopened = clone(resolved);
    reopened.failures![0]!.status = 'unresolved';
    await expectRefused(
      () => commit(reopened, resolved),
      'INVALID_TRANSITION',
      '/failures/0/status',
      'failure-transition',
    );
  });
});

describe('agent-run: completion is recorded, never inferred', () => {
  it('a succeeded run with a completion record resting on passed verifications passes', async () => {
    await expect(commit(succeed(full()), full())).resolves.toBeUndefined();
  });

  it('refuses a final status without a completion record (completion-recorded)', async () => {
    const b = succeed(full());
    delete b.completion;
    await expectRefused(() => commit(b, full()), 'VALIDATION_FAILED', '/completion', 'completion-recorded');
    const failed = full();
    failed.status = 'failed';
    await expectRefused(
      () => commit(failed, full()),
      'VALIDATION_FAILED',
      '/completion',
      'completion-recorded',
    );
  });

  it('refuses a completion record on a run that is not finished, or with another status', async () => {
    const b = full();
    b.completion = { status: 'succeeded', at: AT, by: 'coder', verification_ids: [] };
    await expectRefused(() => commit(b, full()), 'VALIDATION_FAILED', '/completion', 'completion-recorded');
    const mismatch = succeed(full());
    mismatch.completion!.status = 'failed';
    await expectRefused(
      () => commit(mismatch, full()),
      'VALIDATION_FAILED',
      '/completion/status',
      'completion-recorded',
    );
  });

  it('completion.by is the writer (completion-by-writer)', async () => {
    await expectRefused(
      () => commit(succeed(full(), 'someone-else'), full()),
      'VALIDATION_FAILED',
      '/completion/by',
      'completion-by-writer',
    );
  });

  it('the completion record cannot change afterwards (completion-final)', async () => {
    const done = succeed(full());
    const later = clone(done);
    later.diagnostics!.push({ severity: 'info', message: 'post-run note' });
    await expect(commit(later, done, ctxWith({ actor: 'reviewer' }))).resolves.toBeUndefined();
    const rewritten = clone(done);
    rewritten.completion!.summary = 'actually fine';
    await expectRefused(
      () => commit(rewritten, done),
      'VALIDATION_FAILED',
      '/completion',
      'completion-final',
    );
  });

  it('success cites at least one passed verification (completion-needs-verification)', async () => {
    const none = succeed(full());
    none.completion!.verification_ids = [];
    await expectRefused(
      () => commit(none, full()),
      'VALIDATION_FAILED',
      '/completion/verification_ids',
      'completion-needs-verification',
    );
    const failedOne = succeed(full());
    failedOne.completion!.verification_ids = ['v2', 'v1'];
    await expectRefused(
      () => commit(failedOne, full()),
      'VALIDATION_FAILED',
      '/completion/verification_ids/1',
      'completion-needs-verification',
    );
  });

  it('a failed verification not superseded by a later pass blocks success (no-failed-verification)', async () => {
    const b = succeed(full());
    b.verifications!.push({ id: 'v3', check: 'lint', status: 'failed', at: AT });
    await expectRefused(
      () => commit(b, full()),
      'VALIDATION_FAILED',
      '/verifications/2',
      'no-failed-verification',
    );
    // v1 (npm test, failed) is superseded by v2 (npm test, passed) in succeed(); a skipped run supersedes nothing.
    const skipped = succeed(full());
    skipped.verifications!.push(
      { id: 'v3', check: 'lint', status: 'failed', at: AT },
      { id: 'v4', check: 'lint', status: 'skipped', at: AT },
    );
    await expectRefused(
      () => commit(skipped, full()),
      'VALIDATION_FAILED',
      '/verifications/2',
      'no-failed-verification',
    );
    skipped.verifications!.push({ id: 'v5', check: 'lint', status: 'passed', at: AT });
    await expect(commit(skipped, full())).resolves.toBeUndefined();
  });

  it('an unresolved failure blocks success (no-unresolved-failures)', async () => {
    const b = succeed(full());
    b.failures![0] = {
      id: 'x1',
      summary: 'date parser test fails',
      status: 'unresolved',
      since: '2025-01-01T10:00:00Z',
    };
    await expectRefused(
      () => commit(b, full()),
      'VALIDATION_FAILED',
      '/failures/0',
      'no-unresolved-failures',
    );
  });

  it('every acceptance criterion is covered by a cited passed verification (acceptance-criteria-verified)', async () => {
    const b = succeed(full());
    b.acceptance_criteria!.push({ id: 'ac2', text: 'lint is clean' });
    await expectRefused(
      () => commit(b, full()),
      'VALIDATION_FAILED',
      '/acceptance_criteria/1',
      'acceptance-criteria-verified',
    );
  });
});

describe('agent-run: budgets (budget-limit)', () => {
  const over = () => {
    const b = full();
    b.budgets!.tokens!.spent = 250000;
    return b;
  };

  it('spend within the limit passes', async () => {
    const b = full();
    b.budgets!.tokens!.spent = 200000;
    await expect(commit(b, full())).resolves.toBeUndefined();
  });

  it('refuses spend over the limit without an override', async () => {
    const d = await expectRefused(
      () => commit(over(), full()),
      'VALIDATION_FAILED',
      '/budgets/tokens/spent',
      'budget-limit',
    );
    expect(d).toMatchObject({ limit: 200000, spent: 250000 });
    await expectRefused(
      () => commit(over(), null),
      'VALIDATION_FAILED',
      '/budgets/tokens/spent',
      'budget-limit',
    );
    const other = ctxWith({ override: { rules: ['something-else'], reason: 'x' } });
    await expectRefused(
      () => commit(over(), full(), other),
      'VALIDATION_FAILED',
      '/budgets/tokens/spent',
      'budget-limit',
    );
  });

  it('accepts it with an explicit override; later writes leaving it unchanged need none, more spend does', async () => {
    const ctx = ctxWith({ override: { rules: ['budget-limit'], reason: 'user approved 50k more' } });
    await expect(commit(over(), full(), ctx)).resolves.toBeUndefined();
    const later = over();
    later.diagnostics!.push({ severity: 'info', message: 'still going' });
    await expect(commit(later, over())).resolves.toBeUndefined();
    const more = over();
    more.budgets!.tokens!.spent = 260000;
    await expectRefused(
      () => commit(more, over()),
      'VALIDATION_FAILED',
      '/budgets/tokens/spent',
      'budget-limit',
    );
  });

  it('raising a limit is an override too', async () => {
    const b = full();
    b.budgets!.usd!.limit = 50;
    await expectRefused(() => commit(b, full()), 'VALIDATION_FAILED', '/budgets/usd/limit', 'budget-limit');
    const ctx = ctxWith({ override: { rules: ['budget-limit'], reason: 'approved' } });
    await expect(commit(b, full(), ctx)).resolves.toBeUndefined();
  });

  it('spend never decreases and budgets are never removed', async () => {
    const b = full();
    b.budgets!.tokens!.spent = 1;
    await expectRefused(
      () => commit(b, full()),
      'VALIDATION_FAILED',
      '/budgets/tokens/spent',
      'budget-spend-monotonic',
    );
    const removed = full();
    delete removed.budgets!.usd;
    await expectRefused(
      () => commit(removed, full()),
      'VALIDATION_FAILED',
      '/budgets/usd',
      'budget-not-removed',
    );
  });
});

describe('agent-run: locks', () => {
  const lock = (holder: string, expires: number, resource = 'src/date.ts'): LockRecord => ({
    resource,
    holder,
    acquired_at: new Date(NOW - 60_000).toISOString(),
    expires_at: new Date(expires).toISOString(),
  });
  const withLocks = (...locks: LockRecord[]) => ({ ...full(), locks });
  const as = (actor: string) => ctxWith({ actor });

  it('an actor acquires, renews and releases its own lock', async () => {
    await expect(
      commit(withLocks(lock('coder', NOW + 60_000)), full(), as('coder')),
    ).resolves.toBeUndefined();
    await expect(
      commit(withLocks(lock('coder', NOW + 120_000)), withLocks(lock('coder', NOW + 60_000)), as('coder')),
    ).resolves.toBeUndefined();
    await expect(
      commit(withLocks(), withLocks(lock('coder', NOW + 60_000)), as('coder')),
    ).resolves.toBeUndefined();
  });

  it('other fields can be written while someone else holds a lock', async () => {
    const prev = withLocks(lock('coder', NOW + 60_000));
    const next = clone(prev);
    next.diagnostics!.push({ severity: 'info', message: 'review note' });
    await expect(commit(next, prev, as('reviewer'))).resolves.toBeUndefined();
  });

  it('acquiring a lock another actor holds and that has not expired is STATE_CONFLICT (lock-held)', async () => {
    const d = await expectRefused(
      () =>
        commit(
          withLocks(lock('reviewer', NOW + 60_000)),
          withLocks(lock('coder', NOW + 60_000)),
          as('reviewer'),
        ),
      'STATE_CONFLICT',
      '/locks/0/holder',
      'lock-held',
    );
    expect(d).toMatchObject({ resource: 'src/date.ts', holder: 'coder' });
  });

  it('an expired lock may be taken over', async () => {
    await expect(
      commit(withLocks(lock('reviewer', NOW + 60_000)), withLocks(lock('coder', NOW - 1)), as('reviewer')),
    ).resolves.toBeUndefined();
  });

  it("releasing someone else's live lock is PERMISSION_DENIED (lock-release); an expired one may be cleared", async () => {
    await expectRefused(
      () => commit(withLocks(), withLocks(lock('coder', NOW + 60_000)), as('reviewer')),
      'PERMISSION_DENIED',
      '/locks',
      'lock-release',
    );
    await expect(
      commit(withLocks(), withLocks(lock('coder', NOW - 1)), as('reviewer')),
    ).resolves.toBeUndefined();
  });

  it("acquiring for another actor, or renewing someone else's lock, is PERMISSION_DENIED (lock-holder)", async () => {
    await expectRefused(
      () => commit(withLocks(lock('coder', NOW + 60_000)), full(), as('reviewer')),
      'PERMISSION_DENIED',
      '/locks/0/holder',
      'lock-holder',
    );
    await expectRefused(
      () =>
        commit(
          withLocks(lock('coder', NOW + 120_000)),
          withLocks(lock('coder', NOW + 60_000)),
          as('reviewer'),
        ),
      'PERMISSION_DENIED',
      '/locks/0',
      'lock-holder',
    );
  });

  it('refuses duplicate resources and an expiry before acquisition', async () => {
    await expectRefused(
      () => commit(withLocks(lock('coder', NOW + 60_000), lock('coder', NOW + 60_000)), full(), as('coder')),
      'VALIDATION_FAILED',
      '/locks/1/resource',
      'lock-unique',
    );
    await expectRefused(
      () => commit(withLocks(lock('coder', NOW - 120_000)), full(), as('coder')),
      'VALIDATION_FAILED',
      '/locks/0/expires_at',
      'lock-expiry',
    );
  });
});

describe('agent-run: plan and ids', () => {
  it('the position names a node of the plan (plan-position), dependencies too (plan-dependency)', async () => {
    const b = full();
    b.plan!.position = 'n9';
    await expectRefused(() => commit(b, full()), 'VALIDATION_FAILED', '/plan/position', 'plan-position');
    const dep = full();
    dep.plan!.nodes[2]!.depends_on = ['n7'];
    await expectRefused(
      () => commit(dep, full()),
      'VALIDATION_FAILED',
      '/plan/nodes/2/depends_on/0',
      'plan-dependency',
    );
    const moved = full();
    moved.plan!.position = 'n3';
    await expect(commit(moved, full())).resolves.toBeUndefined();
  });

  it('ids are unique within each list (unique-ids)', async () => {
    const b = full();
    b.receipts!.push({ ...b.receipts![1]! });
    await expectRefused(() => commit(b, full()), 'VALIDATION_FAILED', '/receipts/2/id', 'unique-ids');
  });
});
