// Kind `agent-run`'s rules: the check every commit of a run's canonical state passes (status transitions,
// ambiguities answered before a run may succeed or resume), refusing with the JSON pointer and the rule.
import type { CommitContext } from '../../core/kind.js';
import type { JsonObject } from '../../core/types.js';
import { AmbiguityUnresolvedError } from '../../errors.js';
import {
  checkAppendOnly,
  checkLocks,
  checkTransition,
  checkUniqueIds,
  deepEqual,
  fail,
  hasOverride,
  indexBy,
  isPlainObject,
  ptr,
  type TransitionTable,
} from '../rules.js';
import type { AgentRun, Fact, Failure, Hypothesis, Verification } from './model.js';
import { MODEL_FIELDS, type RunStatus } from './schema.js';

// Kind `agent-run` (AgentState): the canonical truth of one agent run. The schema checks structure;
// `check` enforces the kernel's rules, each refusal naming the JSON pointer and the rule:
//   identity-immutable, status-transition, task-ir-ref + AMBIGUITY_UNRESOLVED on every transition that
//   proceeds (start, resume, success),
//   model-changes-are-events, fact-needs-evidence (present in the state; a cited event in the log),
//   event-in-log, facts-append-only, hypothesis-promotion,
//   hypothesis-transition, hypothesis-not-removed, receipts-append-only, verifications-append-only,
//   failure-transition, failures-append-only, completion-recorded, completion-by-writer,
//   completion-final, completion-needs-verification, no-failed-verification, no-unresolved-failures,
//   acceptance-criteria-verified, budget-limit, budget-spend-monotonic, budget-not-removed,
//   lock-held / lock-holder / lock-release / lock-expiry / lock-unique, plan-position, plan-dependency,
//   unique-ids.

// ---------------------------------------------------------------------------------------------------
// Status transitions

/**
 * created → running | failed | cancelled; running → blocked | waiting | succeeded | failed | cancelled;
 * blocked, waiting → running | failed | cancelled; succeeded, failed, cancelled are final.
 * A new run starts as `created`, or directly as `running` (which is a start).
 */
export const RUN_TRANSITIONS: TransitionTable = {
  created: ['running', 'failed', 'cancelled'],
  running: ['blocked', 'waiting', 'succeeded', 'failed', 'cancelled'],
  blocked: ['running', 'failed', 'cancelled'],
  waiting: ['running', 'failed', 'cancelled'],
  succeeded: [],
  failed: [],
  cancelled: [],
};
export const RUN_INITIAL_STATUSES: readonly RunStatus[] = ['created', 'running'];
export const FINAL_RUN_STATUSES: readonly RunStatus[] = ['succeeded', 'failed', 'cancelled'];

const HYPOTHESIS_TRANSITIONS: TransitionTable = {
  open: ['promoted', 'rejected'],
  promoted: [],
  rejected: [],
};
const FAILURE_TRANSITIONS: TransitionTable = { unresolved: ['resolved'], resolved: [] };

const asItems = (v: unknown[] | undefined) => (v ?? []) as unknown as JsonObject[];

// ---------------------------------------------------------------------------------------------------
// Rules

function checkNoModelFields(body: JsonObject): void {
  const places: Array<[JsonObject, string]> = [[body, '']];
  if (isPlainObject(body.environment)) places.push([body.environment, '/environment']);
  for (const [obj, base] of places) {
    for (const f of MODEL_FIELDS) {
      if (Object.hasOwn(obj, f)) {
        fail(
          `${base}/${f}`,
          'model-changes-are-events',
          `${base}/${f}: AgentState has no field for the current model; loading, swapping or losing a model is an event (append it to the event log), never a state change`,
        );
      }
    }
  }
}

function checkIdentity(next: AgentRun, prev: AgentRun | null): void {
  if (!prev) return;
  for (const f of ['run_id', 'agent'] as const) {
    if (next[f] !== prev[f])
      fail(`/${f}`, 'identity-immutable', `/${f} cannot change (was ${JSON.stringify(prev[f])})`);
  }
  if (prev.status !== 'created' && !deepEqual(next.task_ir, prev.task_ir)) {
    fail('/task_ir', 'identity-immutable', '/task_ir cannot change once the run has started');
  }
}

/**
 * Statuses a run proceeds into: starting or resuming (`running`) and finishing as `succeeded`. Moving into
 * one of them rests on the task as asked, so its TaskIR must have no open or escalated ambiguity; stopping
 * (`blocked`, `waiting`, `failed`, `cancelled`) never does.
 */
const PROCEEDING: readonly RunStatus[] = ['running', 'succeeded'];

/** A document id as one shell word, for the commands an error message suggests. */
function shellWord(s: string): string {
  return /^[A-Za-z0-9._:@/+=,-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/**
 * Every transition that proceeds (see PROCEEDING) — a start, a resume from `blocked` or `waiting`, a
 * success — needs the run's TaskIR with every ambiguity resolved. The refusal names the ambiguities and
 * says how to escalate them: the guess is never made for the human.
 */
async function checkAmbiguities(next: AgentRun, prev: AgentRun | null, ctx: CommitContext): Promise<void> {
  const moving = prev === null || prev.status !== next.status;
  if (!moving || !PROCEEDING.includes(next.status) || !next.task_ir) return;
  const { id } = next.task_ir;
  const doc = await ctx.read('task-ir', id);
  if (!doc) fail('/task_ir/id', 'task-ir-ref', `/task_ir/id: no task-ir document ${JSON.stringify(id)}`);
  const ambiguities = Array.isArray(doc.body.ambiguities) ? doc.body.ambiguities : [];
  const pending = ambiguities.filter(
    (a): a is JsonObject => isPlainObject(a) && (a.status === 'open' || a.status === 'escalated'),
  );
  if (pending.length === 0) return;
  const verb =
    next.status === 'succeeded'
      ? 'succeed'
      : prev === null || prev.status === 'created'
        ? 'start'
        : `resume from ${prev.status}`;
  const list = pending.map((a) => `${String(a.id)} (${String(a.status)})`).join(', ');
  const open = pending.filter((a) => a.status === 'open');
  const what =
    open.length > 0
      ? `Do not guess: escalate ${open.length === pending.length ? 'them' : 'the open ones'} to a human with \`agentstate escalate ${shellWord(id)}\` (library: inst.docs.escalate({ kind: 'task-ir', id: ${JSON.stringify(id)} })), then wait for the answers`
      : 'They are escalated: wait for a human to answer their decision items (`agentstate list --status waiting_human`)';
  throw new AmbiguityUnresolvedError(
    `run cannot ${verb}: task-ir ${id} has unresolved ambiguities: ${list}. ${what}.`,
    {
      pointer: '/task_ir',
      rule: 'ambiguity-unresolved',
      task_ir: id,
      task_ir_version: doc.version,
      from: prev?.status ?? null,
      to: next.status,
      ambiguities: pending.map((a) => ({ id: a.id ?? null, status: a.status ?? null })),
      escalate: open.map((a) => a.id ?? null),
    },
  );
}

function checkPlan(next: AgentRun): void {
  if (!next.plan) return;
  const nodes = asItems(next.plan.nodes);
  checkUniqueIds(nodes, '/plan/nodes');
  const ids = indexBy(nodes);
  next.plan.nodes.forEach((n, i) => {
    (n.depends_on ?? []).forEach((d, j) => {
      if (!ids.has(d))
        fail(
          ptr('plan', 'nodes', i, 'depends_on', j),
          'plan-dependency',
          `plan node ${n.id} depends on unknown node ${d}`,
        );
    });
  });
  const pos = next.plan.position;
  if (typeof pos === 'string' && !ids.has(pos)) {
    fail(
      '/plan/position',
      'plan-position',
      `/plan/position names no node of the plan: ${JSON.stringify(pos)}`,
    );
  }
}

/** Event positions present in the state: event_refs, and those recorded on receipts and verifications. */
function knownPositions(next: AgentRun): Set<number> {
  const s = new Set<number>();
  for (const e of next.event_refs ?? []) s.add(e.position);
  for (const r of next.receipts ?? []) if (r.event_position !== undefined) s.add(r.event_position);
  for (const v of next.verifications ?? []) if (v.event_position !== undefined) s.add(v.event_position);
  return s;
}

function checkKnowledge(next: AgentRun, prev: AgentRun | null): void {
  const facts = next.facts ?? [];
  const hyps = next.hypotheses ?? [];
  for (const [list, p] of [
    [facts, '/facts'],
    [hyps, '/hypotheses'],
    [next.receipts, '/receipts'],
    [next.verifications, '/verifications'],
    [next.failures, '/failures'],
    [next.acceptance_criteria, '/acceptance_criteria'],
    [next.constraints, '/constraints'],
    [next.context, '/context'],
    [next.artifacts, '/artifacts'],
    [next.subgoals, '/subgoals'],
  ] as const) {
    checkUniqueIds(asItems(list), p);
  }

  // Receipts and verification results are evidence: never removed or edited.
  checkAppendOnly(asItems(prev?.receipts), asItems(next.receipts), '/receipts', 'receipts-append-only');
  checkAppendOnly(
    asItems(prev?.verifications),
    asItems(next.verifications),
    '/verifications',
    'verifications-append-only',
  );

  // Facts: never removed or edited; the only change allowed is adding a retraction record.
  checkAppendOnly(asItems(prev?.facts), asItems(facts), '/facts', 'facts-append-only', {
    mayChange: (before, after) => {
      if (before.retracted !== undefined || after.retracted === undefined) return false;
      const { retracted: _r, ...rest } = after;
      return deepEqual(before, rest);
    },
  });

  // Every fact cites evidence that is present in this state.
  const receipts = indexBy(asItems(next.receipts));
  const verifications = indexBy(asItems(next.verifications));
  const positions = knownPositions(next);
  facts.forEach((f, i) => {
    if (f.evidence.length === 0) {
      fail(
        ptr('facts', i, 'evidence'),
        'fact-needs-evidence',
        `fact ${f.id} has no evidence; cite a receipt id, a verification result id or an event position present in the state (or keep it a hypothesis)`,
      );
    }
    f.evidence.forEach((e, j) => {
      const found =
        e.receipt !== undefined
          ? receipts.has(e.receipt)
          : e.verification !== undefined
            ? verifications.has(e.verification)
            : e.event !== undefined && positions.has(e.event);
      if (!found) {
        const what = Object.entries(e)
          .map(([k, v]) => `${k} ${JSON.stringify(v)}`)
          .join(', ');
        fail(
          ptr('facts', i, 'evidence', j),
          'fact-needs-evidence',
          `fact ${f.id} cites ${what}, which is not in the state`,
        );
      }
    });
  });

  // Hypotheses: never removed; open → promoted | rejected; promotion pairs with a fact that cites evidence.
  checkAppendOnly(asItems(prev?.hypotheses), asItems(hyps), '/hypotheses', 'hypothesis-not-removed', {
    frozen: false,
  });
  const before = indexBy(asItems(prev?.hypotheses));
  const factById = indexBy(asItems(facts));
  const hypById = indexBy(asItems(hyps));
  hyps.forEach((h, i) => {
    const old = before.get(h.id)?.item as Hypothesis | undefined;
    checkTransition(HYPOTHESIS_TRANSITIONS, old ? old.status : null, h.status, {
      pointer: ptr('hypotheses', i, 'status'),
      rule: 'hypothesis-transition',
      subject: `hypothesis ${h.id}`,
    });
    if (h.status === 'promoted') {
      const fact =
        h.promoted_to === undefined ? undefined : (factById.get(h.promoted_to)?.item as Fact | undefined);
      if (!fact || fact.promoted_from !== h.id) {
        fail(
          ptr('hypotheses', i, 'promoted_to'),
          'hypothesis-promotion',
          `hypothesis ${h.id} is promoted but names no fact promoted from it; promote by adding a fact with promoted_from ${JSON.stringify(h.id)} and evidence`,
        );
      }
    }
  });
  facts.forEach((f, i) => {
    if (f.promoted_from === undefined) return;
    const h = hypById.get(f.promoted_from)?.item as Hypothesis | undefined;
    if (h?.status !== 'promoted' || h.promoted_to !== f.id) {
      fail(
        ptr('facts', i, 'promoted_from'),
        'hypothesis-promotion',
        `fact ${f.id} claims promotion from hypothesis ${f.promoted_from}, which is not marked promoted to it`,
      );
    }
  });

  // Failures: never removed; unresolved → resolved (with a resolution), resolved is final.
  checkAppendOnly(asItems(prev?.failures), asItems(next.failures), '/failures', 'failures-append-only', {
    frozen: false,
  });
  const oldFailures = indexBy(asItems(prev?.failures));
  (next.failures ?? []).forEach((f, i) => {
    const old = oldFailures.get(f.id)?.item as Failure | undefined;
    checkTransition(FAILURE_TRANSITIONS, old ? old.status : null, f.status, {
      pointer: ptr('failures', i, 'status'),
      rule: 'failure-transition',
      subject: `failure ${f.id}`,
    });
    if (old?.status === 'resolved' && !deepEqual(old, f)) {
      fail(ptr('failures', i), 'failures-append-only', `failure ${f.id} is resolved and cannot change`);
    }
    if (f.status === 'resolved' && !f.resolution) {
      fail(
        ptr('failures', i, 'resolution'),
        'failure-transition',
        `failure ${f.id} is resolved without a resolution`,
      );
    }
  });
}

/** An event position the state records as evidence, where, and under which rule a missing one is refused. */
interface CitedEvent {
  position: number;
  pointer: string;
  rule: string;
  what: string;
}

/**
 * Evidence must exist: an event position a new fact cites (rule fact-needs-evidence), and one that a new
 * event reference, receipt or verification records (rule event-in-log), must name an event in this
 * instance's log. Records already stored were checked when they were added (and the log only grows).
 */
async function checkEventsInLog(next: AgentRun, prev: AgentRun | null, ctx: CommitContext): Promise<void> {
  const cited: CitedEvent[] = [];
  const oldFacts = new Set((prev?.facts ?? []).map((f) => f.id));
  (next.facts ?? []).forEach((f, i) => {
    if (oldFacts.has(f.id)) return;
    f.evidence.forEach((e, j) => {
      if (e.event === undefined) return;
      cited.push({
        position: e.event,
        pointer: ptr('facts', i, 'evidence', j),
        rule: 'fact-needs-evidence',
        what: `fact ${f.id} cites event ${e.event}`,
      });
    });
  });
  const oldRefs = new Set((prev?.event_refs ?? []).map((e) => e.position));
  (next.event_refs ?? []).forEach((e, i) => {
    if (oldRefs.has(e.position)) return;
    cited.push({
      position: e.position,
      pointer: ptr('event_refs', i, 'position'),
      rule: 'event-in-log',
      what: `event reference ${i} names position ${e.position}`,
    });
  });
  for (const [list, old, field, label] of [
    [next.receipts, prev?.receipts, 'receipts', 'receipt'],
    [next.verifications, prev?.verifications, 'verifications', 'verification'],
  ] as const) {
    const before = new Set((old ?? []).map((r) => r.id));
    (list ?? []).forEach((r, i) => {
      if (before.has(r.id) || r.event_position === undefined) return;
      cited.push({
        position: r.event_position,
        pointer: ptr(field, i, 'event_position'),
        rule: 'event-in-log',
        what: `${label} ${r.id} records event ${r.event_position}`,
      });
    });
  }
  if (cited.length === 0) return;
  const missing = new Set(await ctx.missingEvents([...new Set(cited.map((c) => c.position))]));
  const first = cited.find((c) => missing.has(c.position));
  if (first) {
    fail(
      first.pointer,
      first.rule,
      `${first.what}, which is not in the event log: evidence must be an event that was recorded (append it first, then cite its position)`,
      { position: first.position },
    );
  }
}

/** The latest verification result of each check (later entries supersede earlier ones; `skipped` never does). */
function latestByCheck(
  verifications: readonly Verification[],
): Map<string, { index: number; v: Verification }> {
  const m = new Map<string, { index: number; v: Verification }>();
  verifications.forEach((v, index) => {
    if (v.status !== 'skipped') m.set(v.check, { index, v });
  });
  return m;
}

function checkCompletion(next: AgentRun, prev: AgentRun | null, ctx: CommitContext): void {
  const final = FINAL_RUN_STATUSES.includes(next.status);
  const c = next.completion;
  if (final && !c) {
    fail(
      '/completion',
      'completion-recorded',
      `status ${next.status} needs an explicit completion record (status, at, by, verification_ids); completion is recorded, never inferred`,
    );
  }
  if (!final && c)
    fail(
      '/completion',
      'completion-recorded',
      `a completion record needs a final status; status is ${next.status}`,
    );
  if (!c) return;
  if (c.status !== next.status) {
    fail(
      '/completion/status',
      'completion-recorded',
      `completion.status ${c.status} does not match status ${next.status}`,
    );
  }
  if (prev?.completion) {
    if (!deepEqual(prev.completion, c))
      fail('/completion', 'completion-final', 'the completion record cannot change once written');
  } else if (c.by !== ctx.actor) {
    fail(
      '/completion/by',
      'completion-by-writer',
      `completion.by must be the writer (${ctx.actor}), not ${c.by}`,
    );
  }

  if (next.status !== 'succeeded') return;
  // Success rests on cited passed verifications, with nothing failed or unresolved left behind.
  const verifications = next.verifications ?? [];
  if (c.verification_ids.length === 0) {
    fail(
      '/completion/verification_ids',
      'completion-needs-verification',
      'a succeeded run must cite the verification results it rests on',
    );
  }
  const byId = indexBy(asItems(verifications));
  const cited: Verification[] = [];
  c.verification_ids.forEach((vid, k) => {
    const v = byId.get(vid)?.item as Verification | undefined;
    if (v?.status !== 'passed') {
      fail(
        ptr('completion', 'verification_ids', k),
        'completion-needs-verification',
        v
          ? `verification ${vid} has status ${v.status}, not passed`
          : `verification ${vid} is not in the state`,
      );
    }
    cited.push(v);
  });
  for (const { index, v } of latestByCheck(verifications).values()) {
    if (v.status === 'failed' || v.status === 'error') {
      fail(
        ptr('verifications', index),
        'no-failed-verification',
        `run cannot succeed: the latest result of check ${JSON.stringify(v.check)} (${v.id}) is ${v.status}`,
      );
    }
  }
  (next.failures ?? []).forEach((f, i) => {
    if (f.status === 'unresolved') {
      fail(
        ptr('failures', i),
        'no-unresolved-failures',
        `run cannot succeed with unresolved failure ${f.id}`,
      );
    }
  });
  const covered = new Set(cited.flatMap((v) => v.criteria ?? []));
  (next.acceptance_criteria ?? []).forEach((a, i) => {
    if (!covered.has(a.id)) {
      fail(
        ptr('acceptance_criteria', i),
        'acceptance-criteria-verified',
        `acceptance criterion ${a.id} is covered by none of the cited passed verifications`,
      );
    }
  });
}

/**
 * Spend may not exceed a limit unless the write carries an override of `budget-limit`; raising a limit
 * is an override too. Spend never decreases and budgets are never removed. A budget already over its
 * limit (recorded earlier with an override) may be left as is; raising its spend again needs a new one.
 */
function checkBudgets(next: AgentRun, prev: AgentRun | null, ctx: CommitContext): void {
  const after = next.budgets ?? {};
  const before = prev?.budgets ?? {};
  const overridden = hasOverride(ctx, 'budget-limit');
  for (const name of Object.keys(before)) {
    if (!Object.hasOwn(after, name))
      fail(ptr('budgets', name), 'budget-not-removed', `budget ${name} cannot be removed`);
  }
  for (const [name, b] of Object.entries(after)) {
    const p = before[name];
    if (p && b.spent < p.spent) {
      fail(
        ptr('budgets', name, 'spent'),
        'budget-spend-monotonic',
        `budget ${name}: spend cannot decrease (${p.spent} → ${b.spent})`,
      );
    }
    if (overridden) continue;
    if (p && b.limit > p.limit) {
      fail(
        ptr('budgets', name, 'limit'),
        'budget-limit',
        `budget ${name}: raising the limit (${p.limit} → ${b.limit}) needs an explicit override of rule budget-limit`,
      );
    }
    const worse = !p || p.spent <= p.limit || b.spent > p.spent || b.limit < p.limit;
    if (b.spent > b.limit && worse) {
      fail(
        ptr('budgets', name, 'spent'),
        'budget-limit',
        `budget ${name}: spend ${b.spent} exceeds the limit ${b.limit}; record an explicit override of rule budget-limit to allow it`,
        { limit: b.limit, spent: b.spent },
      );
    }
  }
}

export async function check(
  nextBody: JsonObject,
  prevBody: JsonObject | null,
  ctx: CommitContext,
): Promise<undefined> {
  checkNoModelFields(nextBody);
  const next = nextBody as unknown as AgentRun;
  const prev = prevBody as unknown as AgentRun | null;
  checkIdentity(next, prev);
  checkTransition(RUN_TRANSITIONS, prev ? prev.status : null, next.status, {
    pointer: '/status',
    rule: 'status-transition',
    subject: 'run',
    initial: RUN_INITIAL_STATUSES,
  });
  checkPlan(next);
  checkKnowledge(next, prev);
  checkCompletion(next, prev, ctx);
  checkBudgets(next, prev, ctx);
  checkLocks(prev?.locks, next.locks, ctx);
  await checkEventsInLog(next, prev, ctx);
  await checkAmbiguities(next, prev, ctx);
  return undefined;
}
