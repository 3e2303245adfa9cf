// Versioned-document operations: compare-and-swap commits, reads at any version, history, diff, fork, and
// a kind's named operations (a kind's own operations of the table, e.g. task-ir's `escalate`, are its).
import { type ApplyInput, DOC_INPUTS, type ListDocumentsInput } from '../../core/documents/inputs.js';
import { derivedCommand } from '../../core/input.js';
import { type OutlinePart, outlineOf } from '../../core/json.js';
import { inputSchema } from '../../core/json-schema.js';
import {
  COMMIT_RESULT,
  DIFF,
  DOCUMENT,
  DOCUMENT_OUTLINE,
  DOCUMENT_SUMMARIES,
  HISTORY,
  OBJECT,
  PROJECTION,
  PROJECTION_OUTLINE,
  PRUNED,
} from '../../core/output-schemas.js';
import type { CommitInput, DocumentRecord, Json } from '../../core/types.js';
import { InvalidInputError } from '../../errors.js';
import type { Instance } from '../../instance/instance.js';
import { operation } from '../operation.js';

/** GetState: the latest version, or `version`, or only `paths` (a projection), within `max_chars`. */
export const GET_DOCUMENT_INPUT = {
  ...DOC_INPUTS.get,
  // One JSON Pointer, or a list of them.
  paths: { type: 'name', many: 100 },
  max_chars: { type: 'int', min: 200, max: 100_000_000 },
} as const;

type Projection = Awaited<ReturnType<Instance['docs']['project']>>;

/** The note on a read whose value was over max_chars. */
const OVER = (chars: number, max: number) =>
  `${chars} characters, over max_chars ${max}: read the parts you need with paths (the JSON Pointers of outline)`;

/**
 * A read within `max` characters of body (or of values): a larger body comes as its outline (each part's
 * JSON Pointer, type and size), a projection keeps the values that fit in the order asked and outlines the
 * others. Nothing is cut inside a value.
 */
export function withinChars(
  doc: DocumentRecord | Projection,
  max: number,
): DocumentRecord | Projection | Record<string, unknown> {
  if ('body' in doc) {
    const chars = JSON.stringify(doc.body).length;
    if (chars <= max) return doc;
    const { body, ...rest } = doc;
    const { parts, more } = outlineOf(body, '/', max);
    return { ...rest, chars, outline: parts, more_parts: more, omitted: `body: ${OVER(chars, max)}` };
  }
  const values: Record<string, Json> = {};
  const tooLarge: Array<[string, Json]> = [];
  let used = 0;
  for (const [path, v] of Object.entries(doc.values)) {
    const size = JSON.stringify(v).length + JSON.stringify(path).length + 2;
    if (used + size <= max) {
      values[path] = v;
      used += size;
    } else tooLarge.push([path, v]);
  }
  if (tooLarge.length === 0) return doc;
  const outline: OutlinePart[] = [];
  let more = 0;
  let chars = 0;
  for (const [path, v] of tooLarge) {
    const o = outlineOf(v, path, Math.max(200, Math.floor((max - used) / tooLarge.length)));
    outline.push(...o.parts);
    more += o.more;
    chars += JSON.stringify(v).length;
  }
  return {
    ...doc,
    values,
    too_large: tooLarge.map(([p]) => p),
    chars,
    outline,
    more_parts: more,
    omitted: `${tooLarge.map(([p]) => p).join(', ')}: ${OVER(chars, max)}`,
  };
}

export const APPLY_INPUT = DOC_INPUTS.apply;

export const VALIDATE_DOCUMENT_INPUT = DOC_INPUTS.validate;

export const DOCUMENT_OPERATIONS = [
  operation({
    name: 'commit',
    group: 'documents',
    description:
      'Compare-and-swap commit of a versioned document: body, merge_patch or json_patch against expected_version (STATE_CONFLICT if it moved on).',
    input: inputSchema(DOC_INPUTS.commit, {
      expected_version: 'the version you read; 0 creates the document',
      body: 'the whole new body',
      merge_patch: 'RFC 7396 merge patch against expected_version',
      json_patch: 'RFC 6902 operations against expected_version',
      write_id: 'idempotency key: a retry with the same write_id and change returns the original result',
      noop: 'record an explicit no-op (needs reason)',
    }),
    output: COMMIT_RESULT,
    writes: true,
    idempotent: false,
    run: (inst, i: CommitInput) => inst.docs.commit(i),
  }),
  operation({
    name: 'get_document',
    group: 'documents',
    description: 'Read a document: the latest version, or version, or only some fields (paths).',
    input: inputSchema(GET_DOCUMENT_INPUT, {
      paths: 'a JSON pointer or dot path, or a list of them; returns only these fields',
      max_chars: 'the most characters of body or values: a larger one comes as its outline of parts',
    }),
    output: { anyOf: [DOCUMENT, PROJECTION, DOCUMENT_OUTLINE, PROJECTION_OUTLINE] },
    writes: false,
    async run(
      inst,
      i: { kind: string; id: string; version?: number; paths?: string | string[]; max_chars?: number },
    ) {
      if (i.paths !== undefined && i.version !== undefined) {
        throw new InvalidInputError('give either version or paths, not both', { field: 'paths' });
      }
      const { max_chars: max, paths: asked, ...ref } = i;
      const paths = typeof asked === 'string' ? [asked] : asked;
      // Checked once, here: the fields handed on are the same ones.
      const doc =
        paths === undefined
          ? await inst.docs.get(derivedCommand('get', i, ref, DOC_INPUTS.get))
          : await inst.docs.project(
              derivedCommand('project', i, { kind: i.kind, id: i.id, paths }, DOC_INPUTS.project),
            );
      return max === undefined ? doc : withinChars(doc, max);
    },
  }),
  operation({
    name: 'history',
    group: 'documents',
    description: "A document's commits in order (no-ops included) with actor, actor kind and provenance.",
    input: inputSchema(DOC_INPUTS.history, { after: 'page on from this seq' }),
    output: HISTORY,
    writes: false,
    // `after` is a seq in either direction (newest first, it reads the entries before it).
    page: {
      list: 'entries',
      limit: 'limit',
      defaultLimit: 100,
      next: (last: { seq: number }) => ({ after: last.seq }),
    },
    run: (inst, i: { kind: string; id: string; after?: number; limit?: number; reverse?: boolean }) =>
      inst.docs.history(i),
  }),
  operation({
    name: 'diff',
    group: 'documents',
    description: 'RFC 6902 patch between two versions of a document (0 = empty; to defaults to the latest).',
    input: inputSchema(DOC_INPUTS.diff),
    output: DIFF,
    writes: false,
    run: (inst, i: { kind: string; id: string; from: number; to?: number }) => inst.docs.diff(i),
  }),
  operation({
    name: 'fork',
    group: 'documents',
    description:
      'Copy a version of a document into a new document (version 1), recording where it came from.',
    input: inputSchema(DOC_INPUTS.fork),
    output: COMMIT_RESULT,
    writes: true,
    run: (inst, i: Parameters<typeof inst.docs.fork>[0]) => inst.docs.fork(i),
  }),
  operation({
    name: 'list_documents',
    group: 'documents',
    description: 'Documents (without bodies), by kind then id.',
    input: inputSchema(DOC_INPUTS.list, {
      after: 'page on: the documents after this one, kind/id of the last document a page showed',
    }),
    output: DOCUMENT_SUMMARIES,
    writes: false,
    page: {
      limit: 'limit',
      defaultLimit: 1000,
      next: (last: { kind: string; id: string }) => ({ after: `${last.kind}/${last.id}` }),
    },
    run: (inst, i: ListDocumentsInput) => inst.docs.list(i),
  }),
  operation({
    name: 'prune',
    group: 'documents',
    description: "Remove a document's history older than the newest keep versions (never the latest).",
    input: inputSchema(DOC_INPUTS.prune),
    output: PRUNED,
    writes: true,
    idempotent: true,
    run: (inst, i: { kind: string; id: string; keep: number }) => inst.docs.prune(i),
  }),
  operation({
    name: 'apply',
    group: 'documents',
    description:
      "Run one of a kind's named operations (e.g. workflow-sessions add-todo) as a CAS commit on the latest version; re-run on conflict.",
    input: inputSchema(APPLY_INPUT, { args: "the operation's arguments (see the kind's docs)" }),
    output: COMMIT_RESULT,
    writes: true,
    run: (inst, i: ApplyInput) => inst.docs.apply(i),
  }),
  operation({
    name: 'validate_document',
    group: 'documents',
    description:
      'Check a body against its kind (schema and rules, against the stored version) without writing.',
    input: inputSchema(VALIDATE_DOCUMENT_INPUT),
    output: OBJECT,
    writes: false,
    run: (
      inst,
      i: { kind: string; id: string; body: Record<string, never>; actor?: string; role?: string },
    ) => inst.docs.validate(i),
  }),
] as const;
