// Human decisions a document asks for, run through the work queue: `escalate` puts a document's open
// questions to humans (its kind's operation enqueues a decision item per question), and a human's answer
// is recorded by the document and resolves its item in one transaction.
import { InvalidInputError, NotFoundError } from '../../errors.js';
import type { StatusChange } from '../backend.js';
import { checkInput } from '../input.js';
import type { CommitResult, DecisionAnswer, JsonObject, WorkItem } from '../types.js';
import { ownerOf } from '../work/owners.js';
import { explainStatusFailure, isRepeatedAnswer } from '../work/refusals.js';
import { commitDocument } from './commit.js';
import { type DocumentStoreState, loadKinds } from './context.js';
import { DOC_INPUTS, type KindCall } from './inputs.js';
import { applyOperation } from './operations.js';
import { isStaleVersion, RETRIES } from './retry.js';

/**
 * Puts a document's open questions to humans (e.g. a task-ir's ambiguities): runs its kind's `escalate`
 * operation as one CAS commit (re-run on conflict), whose effects enqueue a decision item per question
 * in the same transaction, and returns the commit with every decision item of the document still
 * waiting for a human. Escalating again writes nothing and asks nothing twice.
 * @example await inst.docs.escalate({ kind: 'task-ir', id: 'login' })
 */
export async function escalate(
  s: DocumentStoreState,
  input: KindCall,
): Promise<CommitResult & { decisions: WorkItem[] }> {
  const i = checkInput<KindCall>('escalate', input, DOC_INPUTS.escalate);
  const kind = (await loadKinds(s)).get(i.kind);
  if (!kind.operations?.some((o) => o.name === 'escalate')) {
    throw new InvalidInputError(`kind ${i.kind} puts no questions to humans: it has no escalate operation`, {
      field: 'kind',
      operation: 'escalate',
    });
  }
  const { args, ...rest } = i;
  const commit = await applyOperation(s, { ...rest, operation: 'escalate', args: args ?? {} });
  return { ...commit, decisions: await waitingDecisions(s, i.kind, i.id) };
}

/** The decision items document `kind`/`id` enqueued that are still waiting for a human, in claim order. */
async function waitingDecisions(s: DocumentStoreState, kind: string, id: string): Promise<WorkItem[]> {
  const waiting = await s.backend.work.list({
    statuses: ['waiting_human'],
    kind: null,
    now: s.ctx.clock(),
    limit: 100_000,
  });
  return waiting.filter((item) => {
    const owner = ownerOf(item);
    return owner?.kind === kind && owner.id === id;
  });
}

/**
 * A human's answer to a decision a document asked for (a work item the document enqueued, waiting for a
 * human): the document records the answer (its kind's `onWorkItemResolved`) and the item is resolved, in
 * one transaction, so a crash never leaves one without the other. A repeated identical answer returns the
 * item unchanged; any other answer to a finished item is INVALID_TRANSITION.
 */
export async function answerDecision(
  s: DocumentStoreState,
  item: WorkItem,
  a: DecisionAnswer,
): Promise<WorkItem> {
  const owner = ownerOf(item);
  if (!owner)
    throw new InvalidInputError(`work item ${item.id} is not a decision a document asked for`, {
      id: item.id,
    });
  const kind = (await loadKinds(s)).get(owner.kind);
  if (!kind.onWorkItemResolved) {
    throw new InvalidInputError(`kind ${owner.kind} takes no answers to its work items`, { id: item.id });
  }
  for (let attempt = 0; ; attempt++) {
    const current = (await s.backend.work.get(item.id)) ?? item;
    if (current.status !== 'waiting_human') {
      if (isRepeatedAnswer(current, a)) return current;
      explainStatusFailure(current, item.id, a.status);
    }
    const doc = await s.backend.docs.get(owner.kind, owner.id);
    if (!doc)
      throw new NotFoundError(`${owner.kind}/${owner.id} not found`, { kind: owner.kind, id: owner.id });
    const now = s.ctx.clock();
    const answered: WorkItem = {
      ...current,
      status: a.status,
      result: a.result,
      error: a.error,
      resolved_at: new Date(now).toISOString(),
      updated_at: new Date(now).toISOString(),
    };
    const change: StatusChange = {
      id: item.id,
      from: ['waiting_human'],
      to: a.status,
      event: 'work_item_resolved',
      result: a.result,
      error: a.error,
      actor: a.actor,
      actor_kind: 'human',
      ...(a.provenance === undefined ? {} : { data: { provenance: a.provenance as JsonObject } }),
      now,
    };
    const body = kind.onWorkItemResolved(
      answered,
      { kind: doc.kind, id: doc.id, version: doc.version, body: structuredClone(doc.body) },
      { actor: a.actor },
    );
    try {
      if (body === null) return (await s.backend.work.setStatus([change]))[0]!;
      await commitDocument(
        s,
        {
          kind: owner.kind,
          id: owner.id,
          expected_version: doc.version,
          body,
          actor: a.actor,
          actor_kind: 'human',
          ...(a.provenance === undefined ? {} : { provenance: a.provenance }),
          reason: `answer to work item ${item.id}`,
        },
        null,
        { item: answered, change },
      );
      return (await s.backend.work.get(item.id)) ?? answered;
    } catch (err) {
      // The document moved on, or the item was answered meanwhile: look again.
      if (attempt >= RETRIES - 1) throw err;
      if (isStaleVersion(err)) continue;
      if ((err as { code?: string }).code !== 'INVALID_TRANSITION') throw err;
      if ((await s.backend.work.get(item.id))?.status === 'waiting_human') throw err;
    }
  }
}
