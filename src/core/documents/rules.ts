// A body checked against its kind, the one step every such check goes through (a commit, `validate` of a
// body, `validate` of a state file): the kind's size limit, JSON Schema and rules, with what its rules see
// of the write (the commit context) — and `docs.validate`, that check without a write.
import { ValidationFailedError } from '../../errors.js';
import type { StoreBackend } from '../backend.js';
import { checkInput, LIMITS } from '../input.js';
import { canonicalJson } from '../json.js';
import type { CommitContext, CommitEffects, KindDefinition } from '../kind.js';
import type { JsonObject } from '../types.js';
import { type DocumentStoreState, type KindResolver, loadKinds } from './context.js';
import { DOC_INPUTS, type ValidateDocumentInput } from './inputs.js';

/** What a kind without rules of its own asks for. */
const NO_EFFECTS: CommitEffects = Object.freeze({});

/** A body a kind accepted: the effects its rules ask for, and the canonical text (and size) to store. */
export interface PreparedCommit {
  effects: CommitEffects;
  text: string;
  bytes: number;
}

/**
 * The one step every check of a body against its kind goes through — a commit, `validate` of a body, and
 * `validate` of a state file: the kind's version field set to the version being written, the kind's size
 * limit, its JSON Schema, then its rules (which may fill in fields of `next`, so the text is taken after
 * them). Throws the refusal a commit would throw, having written nothing. Synchronous for a kind without
 * rules, so a plain commit pays no await and builds no context (`context` is called only for rules);
 * `knownText` is the canonical text of `next` when the caller has it already (without a version field).
 */
export function prepareCommit(
  kinds: KindResolver,
  kind: KindDefinition,
  next: JsonObject,
  prev: JsonObject | null,
  toVersion: number,
  context: () => CommitContext,
  knownText?: string,
): PreparedCommit | Promise<PreparedCommit> {
  if (kind.versionField) next[kind.versionField] = toVersion;
  const text = kind.versionField || knownText === undefined ? canonicalJson(next) : knownText;
  const bytes = Buffer.byteLength(text);
  const limit = kind.maxBytes ?? LIMITS.jsonBytes;
  if (bytes > limit) {
    throw new ValidationFailedError(`the body is larger than the ${limit} byte limit of kind ${kind.name}`, {
      pointer: '/',
      rule: 'max-bytes',
    });
  }
  kinds.validateSchema(kind, next);
  if (!kind.check) return { effects: NO_EFFECTS, text, bytes };
  const check = kind.check;
  return (async () => {
    const effects = (await check(next, prev, context())) ?? NO_EFFECTS;
    const after = canonicalJson(next);
    return { effects, text: after, bytes: after === text ? bytes : Buffer.byteLength(after) };
  })();
}

/** What a kind's rules see about a write (`backend`'s), with reads of the other documents of this instance. */
export function commitContext(
  backend: StoreBackend,
  c: Omit<CommitContext, 'read' | 'missingEvents'>,
): CommitContext {
  return {
    ...c,
    read: async (k, id) => {
      const d = await backend.docs.get(k, id);
      return d && { kind: d.kind, id: d.id, version: d.version, body: d.body };
    },
    missingEvents: async (positions) => {
      if (positions.length === 0) return [];
      // Positions are gapless (1 … head, never skipped), so the head alone says which exist.
      const head = (await backend.events.head())?.position ?? 0;
      return positions.filter((p) => !(Number.isSafeInteger(p) && p >= 1 && p <= head));
    },
  };
}

/**
 * Checks a body against its kind (schema and rules, with the stored document as the previous
 * version) without writing anything. Throws the error a commit would throw.
 */
export async function validate(
  s: DocumentStoreState,
  input: ValidateDocumentInput,
): Promise<{ kind: string; id: string; ok: true; checked_against: number }> {
  const i = checkInput<ValidateDocumentInput>('validate', input, DOC_INPUTS.validate);
  const kinds = await loadKinds(s);
  const kind = kinds.get(i.kind);
  kind.checkId?.(i.id);
  const current = await s.backend.docs.get(i.kind, i.id);
  const version = current?.version ?? 0;
  await prepareCommit(kinds, kind, structuredClone(i.body), current?.body ?? null, version + 1, () =>
    commitContext(s.backend, {
      kind: i.kind,
      id: i.id,
      fromVersion: version,
      toVersion: version + 1,
      actor: i.actor ?? s.ctx.actor,
      actor_kind: i.actor_kind ?? 'system',
      role: i.role ?? null,
      provenance: null,
      override: null,
      reason: null,
      now: s.ctx.clock(),
    }),
  );
  return { kind: i.kind, id: i.id, ok: true, checked_against: version };
}
