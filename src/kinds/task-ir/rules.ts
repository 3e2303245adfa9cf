// Kind `task-ir`'s rules: unique ids, the ambiguity transitions (open → resolved | escalated, escalated →
// resolved, resolved final), answers required, and the decision items an escalation enqueues as effects.
import type { CommitContext, CommitEffects, DocSnapshot } from '../../core/kind.js';
import type { EnqueueInput, Json, JsonObject, WorkItem } from '../../core/types.js';
import { InvalidInputError, InvalidTransitionError, PermissionDeniedError } from '../../errors.js';
import {
  checkAppendOnly,
  checkTransition,
  checkUniqueIds,
  deepEqual,
  fail,
  indexBy,
  isPlainObject,
  ptr,
  type TransitionTable,
} from '../rules.js';
import type { Ambiguity, TaskIr } from './model.js';

// Kind `task-ir` (TaskIR): the compiled task with explicit ambiguities. Rules (each refusal names the
// JSON pointer and the rule): unique-ids, ambiguity-transition (open → resolved | escalated,
// escalated → resolved, resolved final), ambiguity-not-removed, ambiguity-resolution-required,
// ambiguity-resolved-final. Escalating an ambiguity enqueues a waiting_human work item and appends an
// `ambiguity_escalated` event; resolving that item resolves the ambiguity (onWorkItemResolved). The
// `escalate` operation (./operations.ts) makes that move for every open ambiguity, or those named.

/** Work-item kind of the question put to a human when an ambiguity is escalated. */
export const AMBIGUITY_WORK_KIND = 'task-ir.ambiguity';

export const AMBIGUITY_TRANSITIONS: TransitionTable = {
  open: ['resolved', 'escalated'],
  escalated: ['resolved'],
  resolved: [],
};

/**
 * The escalation work item's key within its document (the store makes it `doc:task-ir/<id>#ambiguity/<a>`),
 * so a retried escalation never asks twice.
 */
export function escalationKey(ambiguityId: string): string {
  return `ambiguity/${ambiguityId}`;
}

/** Whether `item` is the decision that answers ambiguity `ambiguityId` of document `docId`. */
function answers(item: WorkItem | null | undefined, docId: string, ambiguityId: string): boolean {
  const p = item?.payload;
  return (
    item?.kind === AMBIGUITY_WORK_KIND &&
    isPlainObject(p) &&
    p.ambiguity_id === ambiguityId &&
    (p.doc_id === undefined || p.doc_id === docId)
  );
}

const asItems = (v: unknown[] | undefined) => (v ?? []) as unknown as JsonObject[];

export function check(
  nextBody: JsonObject,
  prevBody: JsonObject | null,
  ctx: CommitContext,
): CommitEffects | undefined {
  const next = nextBody as unknown as TaskIr;
  const prev = prevBody as unknown as TaskIr | null;
  checkUniqueIds(asItems(next.ambiguities), '/ambiguities');
  checkUniqueIds(asItems(next.acceptance_criteria), '/acceptance_criteria');
  checkUniqueIds(asItems(next.constraints), '/constraints');
  checkUniqueIds(asItems(next.inputs), '/inputs', 'name');
  checkAppendOnly(
    asItems(prev?.ambiguities),
    asItems(next.ambiguities),
    '/ambiguities',
    'ambiguity-not-removed',
    {
      frozen: false,
    },
  );

  const before = indexBy(asItems(prev?.ambiguities));
  const enqueue: EnqueueInput[] = [];
  const events: Array<{ type: string; data?: Json }> = [];
  next.ambiguities.forEach((a, i) => {
    const old = before.get(a.id)?.item as Ambiguity | undefined;
    checkTransition(AMBIGUITY_TRANSITIONS, old ? old.status : null, a.status, {
      pointer: ptr('ambiguities', i, 'status'),
      rule: 'ambiguity-transition',
      subject: `ambiguity ${a.id}`,
    });
    if (old?.status === 'escalated' && a.status === 'resolved' && !answers(ctx.answering, ctx.id, a.id)) {
      throw new PermissionDeniedError(
        `ambiguity ${a.id} was escalated to a human: only the human's answer to its decision item (kind ${AMBIGUITY_WORK_KIND}) resolves it`,
        {
          pointer: ptr('ambiguities', i, 'status'),
          rule: 'ambiguity-answered-by-human',
          actor_kind: ctx.actor_kind,
        },
      );
    }
    if (old?.status === 'resolved' && !deepEqual(old, a)) {
      fail(
        ptr('ambiguities', i),
        'ambiguity-resolved-final',
        `ambiguity ${a.id} is resolved and cannot change`,
      );
    }
    if (a.status === 'resolved' && (a.resolution === undefined || a.resolution === null)) {
      fail(
        ptr('ambiguities', i, 'resolution'),
        'ambiguity-resolution-required',
        `ambiguity ${a.id} is resolved without a resolution`,
      );
    }
    const data = { doc_id: ctx.id, ambiguity_id: a.id, question: a.question };
    if (a.status === 'escalated' && old?.status !== 'escalated') {
      enqueue.push({
        title: `Resolve ambiguity ${a.id} of task ${ctx.id}: ${a.question}`.slice(0, 200),
        kind: AMBIGUITY_WORK_KIND,
        payload: data,
        waiting_human: true,
        idempotency_key: escalationKey(a.id),
        actor: ctx.actor,
      });
      events.push({ type: 'ambiguity_escalated', data });
    }
    // A resolution is an event when it happens to an ambiguity already recorded, not for new documents.
    if (a.status === 'resolved' && old && old.status !== 'resolved') {
      events.push({ type: 'ambiguity_resolved', data: { ...data, resolution: a.resolution ?? null } });
    }
  });
  if (enqueue.length === 0 && events.length === 0) return undefined;
  return enqueue.length > 0 ? { enqueue, events } : { events };
}

/**
 * A human's answer to a `task-ir.ambiguity` decision resolves its ambiguity: the resolution is
 * `result.answer` when the result is an object with an `answer`, else the whole result; `resolved_by` is
 * the human who answered. An answer must say something: `done` without one is refused (the ambiguity
 * would stay escalated with its question spent), and so is `failed` (a decision has no failure; cancel
 * the run instead). Null when there is nothing to record (another document, the ambiguity gone).
 */
export function onWorkItemResolved(
  item: WorkItem,
  doc: DocSnapshot,
  answer: { actor: string },
): JsonObject | null {
  const payload = item.payload;
  if (
    item.kind !== AMBIGUITY_WORK_KIND ||
    !isPlainObject(payload) ||
    typeof payload.ambiguity_id !== 'string'
  )
    return null;
  if (payload.doc_id !== undefined && payload.doc_id !== doc.id) return null;
  const hint = `resolve it done with the answer, e.g. --result '{"answer":"…"}'`;
  if (item.status !== 'done') {
    throw new InvalidTransitionError(
      `ambiguity ${payload.ambiguity_id} of task ${doc.id} needs an answer, not ${item.status}: ${hint}, or cancel the run`,
      { id: item.id, from: 'waiting_human', to: item.status, rule: 'ambiguity-answer-required' },
    );
  }
  const result = item.result;
  const resolution = isPlainObject(result) && result.answer !== undefined ? result.answer : result;
  if (resolution === null || resolution === undefined || resolution === '') {
    throw new InvalidInputError(
      `ambiguity ${payload.ambiguity_id} of task ${doc.id} is answered without an answer: ${hint}`,
      { field: 'result', id: item.id, rule: 'ambiguity-answer-required' },
    );
  }

  const body = structuredClone(doc.body) as unknown as TaskIr;
  const amb = (Array.isArray(body.ambiguities) ? body.ambiguities : []).find(
    (a) => a.id === payload.ambiguity_id,
  );
  if (!amb || amb.status === 'resolved') return null;
  amb.status = 'resolved';
  amb.resolution = resolution;
  amb.resolved_at = item.resolved_at ?? item.updated_at;
  amb.escalation_work_item_id = item.id;
  amb.resolved_by = answer.actor;
  return body as unknown as JsonObject;
}
