// Operations on a `task-ir`: `escalate` puts open ambiguities to a human. It only moves them to
// `escalated`; the kind's `check` turns that move into the decision items and `ambiguity_escalated` events,
// written in the same transaction as the commit (the store runs an operation as one CAS commit). The
// service table's `escalate` (every edge's, and the EscalateAmbiguities workflow's) runs it on a task-ir.

import { DOC_INPUTS, type KindCall } from '../../core/documents/inputs.js';
import { derivedCommand } from '../../core/input.js';
import { inputSchema } from '../../core/json-schema.js';
import type { KindOperation } from '../../core/kind.js';
import { ESCALATE_RESULT } from '../../core/output-schemas.js';
import { serviceOperation } from '../../core/services.js';
import type { CommitInput, JsonObject, Provenance } from '../../core/types.js';
import { ACTOR_KINDS } from '../../core/types.js';
import { InvalidInputError, InvalidTransitionError, NotFoundError } from '../../errors.js';
import type { Ambiguity, TaskIr } from './model.js';

const KIND = 'task-ir';

const ESCALATE_INPUT = { ambiguities: { type: 'names' } } as const;

/**
 * Moves the named ambiguities (default: every open one) from `open` to `escalated`. One already escalated
 * stays as it is, so escalating again changes nothing and asks nothing twice. Naming an ambiguity the task
 * does not have is INVALID_INPUT; naming a resolved one is INVALID_TRANSITION (it has its answer).
 */
export const escalateOperation: KindOperation = {
  name: 'escalate',
  summary:
    'Put open ambiguities (all, or those named) to a human: each becomes escalated and gets a decision item, in one commit.',
  input: ESCALATE_INPUT,
  apply(body: JsonObject | null, raw: Record<string, unknown>): JsonObject {
    // The store checked `raw` against ESCALATE_INPUT before calling (every kind operation's contract).
    const args = raw as { ambiguities?: string[] };
    if (body === null) {
      throw new NotFoundError('escalate: there is no such task-ir document', { operation: 'escalate' });
    }
    const next = structuredClone(body) as unknown as TaskIr;
    const all: Ambiguity[] = Array.isArray(next.ambiguities) ? next.ambiguities : [];
    const byId = new Map(all.map((a) => [a.id, a]));
    let chosen: Ambiguity[];
    if (args.ambiguities === undefined) {
      chosen = all.filter((a) => a.status === 'open');
    } else {
      chosen = [];
      for (const [i, id] of args.ambiguities.entries()) {
        const a = byId.get(id);
        if (!a) {
          const known = all.map((x) => x.id).join(', ') || 'none';
          throw new InvalidInputError(
            `escalate: the task has no ambiguity ${JSON.stringify(id)} (it has: ${known})`,
            { field: `ambiguities[${i}]`, operation: 'escalate' },
          );
        }
        if (a.status === 'resolved') {
          throw new InvalidTransitionError(
            `escalate: ambiguity ${id} is resolved already; there is nothing to ask`,
            { field: `ambiguities[${i}]`, from: 'resolved', to: 'escalated', rule: 'ambiguity-transition' },
          );
        }
        chosen.push(a);
      }
    }
    for (const a of chosen) if (a.status === 'open') a.status = 'escalated';
    return next as unknown as JsonObject;
  },
};

export const taskIrOperations: KindOperation[] = [escalateOperation];

/** The service table's `escalate`: which task-ir, which of its ambiguities (the operation's args) and who asks. */
const ESCALATE_CALL = {
  id: { type: 'name', required: true },
  ...ESCALATE_INPUT,
  actor: { type: 'name' },
  actor_kind: { type: 'string', enum: ACTOR_KINDS },
  provenance: { type: 'object' },
  reason: { type: 'text' },
} as const;

/** The operations of the service table this kind brings. */
export const taskIrServiceOperations = [
  serviceOperation({
    name: 'escalate',
    group: 'documents',
    description:
      "Put a task-ir's open ambiguities (all, or those named) to a human: escalated with their decision items in one commit; again, nothing changes.",
    input: inputSchema(ESCALATE_CALL, {
      id: 'the task-ir document',
      ambiguities: 'only these ambiguity ids (default: every open one)',
    }),
    output: ESCALATE_RESULT,
    writes: true,
    idempotent: true,
    run: (
      inst,
      i: {
        id: string;
        ambiguities?: string[];
        actor?: string;
        actor_kind?: CommitInput['actor_kind'];
        provenance?: Provenance;
        reason?: string;
      },
    ) => {
      const { ambiguities, ...rest } = i;
      // The store's kind call, made of the checked command: only what is new in it is checked.
      return inst.docs.escalate(
        derivedCommand<KindCall>(
          'escalate',
          i,
          { ...rest, kind: KIND, args: ambiguities === undefined ? {} : { ambiguities } },
          DOC_INPUTS.escalate,
        ),
      );
    },
  }),
] as const;
