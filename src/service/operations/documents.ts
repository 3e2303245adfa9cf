// Versioned-document operations: compare-and-swap commits, reads at any version, history, diff, fork, and
// a kind's named operations (a kind's own operations of the table, e.g. task-ir's `escalate`, are its).
import { type ApplyInput, DOC_INPUTS, type ListDocumentsInput } from '../../core/document-store.js';
import { inputSchema } from '../../core/json-schema.js';
import {
  COMMIT_RESULT,
  DIFF,
  DOCUMENT,
  DOCUMENT_SUMMARIES,
  HISTORY,
  OBJECT,
  PROJECTION,
  PRUNED,
} from '../../core/output-schemas.js';
import type { CommitInput } from '../../core/types.js';
import { InvalidInputError } from '../../errors.js';
import { operation } from '../operation.js';

/** GetState: the latest version, or `version`, or only `paths` (a projection). */
export const GET_DOCUMENT_INPUT = { ...DOC_INPUTS.get, paths: { type: 'names' } } as const;

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
      paths: 'JSON pointers or dot paths; returns only these fields',
    }),
    output: { anyOf: [DOCUMENT, PROJECTION] },
    writes: false,
    async run(inst, i: { kind: string; id: string; version?: number; paths?: string[] }) {
      if (i.paths === undefined) return inst.docs.get(i);
      if (i.version !== undefined) {
        throw new InvalidInputError('give either version or paths, not both', { field: 'paths' });
      }
      return inst.docs.project({ kind: i.kind, id: i.id, paths: i.paths });
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
