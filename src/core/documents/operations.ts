// Writes computed from a read: one of a kind's named operations run on a document's latest version
// (`docs.apply`, re-run when the document moves on under it) and a fork of a version into a new document.
import { InvalidInputError } from '../../errors.js';
import { checkInput, storedObject } from '../input.js';
import type { CommitResult, JsonObject } from '../types.js';
import { commitDocument } from './commit.js';
import { type DocumentStoreState, loadKinds } from './context.js';
import { type ApplyInput, DOC_INPUTS, type ForkDocumentInput } from './inputs.js';
import { readDocument } from './reads.js';
import { retryOnStaleVersion } from './retry.js';

/** `docs.apply`: the input checked, then the operation (see `DocumentStore.apply`). */
export async function apply(s: DocumentStoreState, input: ApplyInput): Promise<CommitResult> {
  return applyOperation(s, checkInput<ApplyInput>('apply', input, DOC_INPUTS.apply));
}

/**
 * Runs the kind's operation `input.operation` (input checked) as a CAS commit on the latest version, again
 * on a fresh read while it loses to a newer version.
 */
export async function applyOperation(s: DocumentStoreState, input: ApplyInput): Promise<CommitResult> {
  const kind = (await loadKinds(s)).get(input.kind);
  const op = kind.operations?.find((o) => o.name === input.operation);
  if (!op) {
    const known = (kind.operations ?? []).map((o) => o.name);
    throw new InvalidInputError(
      `kind ${input.kind} has no operation ${JSON.stringify(input.operation)}${known.length ? `; known: ${known.join(', ')}` : ''}`,
      { field: 'operation' },
    );
  }
  // The kind operation's own arguments, which only the kind knows: checked here, once, under its name.
  const args = checkInput<Record<string, unknown>>(
    op.name,
    input.args ?? {},
    op.input,
    `${input.kind}.${op.name}`,
  );
  const actor = input.actor ?? s.ctx.actor;
  return retryOnStaleVersion(async () => {
    const current = await s.backend.docs.get(input.kind, input.id);
    const next = op.apply(current ? structuredClone(current.body) : null, args, {
      now: s.ctx.clock(),
      actor,
      role: input.role ?? null,
    });
    // The caller's fields were checked; the body is the kind's, held to the store's JSON rule as written.
    return commitDocument(
      s,
      {
        kind: input.kind,
        id: input.id,
        expected_version: current?.version ?? 0,
        body: storedObject(op.name, 'body', next) as JsonObject,
        actor,
        ...(input.actor_kind === undefined ? {} : { actor_kind: input.actor_kind }),
        ...(input.role === undefined ? {} : { role: input.role }),
        ...(input.provenance === undefined ? {} : { provenance: input.provenance }),
        reason: input.reason ?? `${op.name}`,
      },
      null,
    );
  });
}

/** Copies a version into a new document (version 1), recording where it came from. */
export async function fork(s: DocumentStoreState, input: ForkDocumentInput): Promise<CommitResult> {
  const i = checkInput<ForkDocumentInput>('fork', input, DOC_INPUTS.fork);
  const src = await readDocument(s.backend, {
    kind: i.kind,
    id: i.id,
    ...(i.version === undefined ? {} : { version: i.version }),
  });
  const { kind, id, version, new_id, ...rest } = i;
  return commitDocument(
    s,
    {
      ...rest,
      kind,
      id: new_id,
      expected_version: 0,
      body: src.body,
      reason: i.reason ?? `forked from ${kind}/${id}@${src.version}`,
    },
    { kind, id, version: src.version },
  );
}
