// What the document store's operations take: the input specs each call is checked against (the service
// builds its schemas from the same specs) and the shapes of those inputs.
import { type InputSpec, LIMITS } from '../input.js';
import { ACTOR_KINDS, type CommitInput, type JsonObject, type Provenance } from '../types.js';

const NAME = { type: 'name', required: true } as const;

/** Who writes: the actor, its kind and its role. */
const WRITER = {
  actor: { type: 'name' },
  actor_kind: { type: 'string', enum: ACTOR_KINDS },
  role: { type: 'name' },
} as const;
/** What a write records of who made it: the writer and where the write comes from (a model's provenance). */
const ATTRIBUTION = { ...WRITER, provenance: { type: 'object' } } as const;

/** A call of a kind's operation on a document: what it is given and who asks (escalate, apply). */
const KIND_CALL_REST = {
  args: { type: 'object' },
  ...ATTRIBUTION,
  reason: { type: 'text' },
} as const;
const KIND_CALL = { kind: NAME, id: NAME, ...KIND_CALL_REST } as const;

/** The input spec of each `docs.*` call, by the call's name: what `checkInput` holds its input to. */
export const DOC_INPUTS = {
  commit: {
    kind: NAME,
    id: NAME,
    expected_version: { type: 'int', required: true, min: 0 },
    body: { type: 'object' },
    merge_patch: { type: 'object' },
    json_patch: { type: 'json' },
    noop: { type: 'bool' },
    ...ATTRIBUTION,
    write_id: { type: 'name' },
    reason: { type: 'text' },
    override: { type: 'object' },
  },
  get: { kind: NAME, id: NAME, version: { type: 'int', min: 1 } },
  history: {
    kind: NAME,
    id: NAME,
    after: { type: 'int', min: 0 },
    limit: { type: 'int', min: 1, max: 10_000 },
    reverse: { type: 'bool' },
  },
  diff: { kind: NAME, id: NAME, from: { type: 'int', required: true, min: 0 }, to: { type: 'int', min: 0 } },
  fork: {
    kind: NAME,
    id: NAME,
    version: { type: 'int', min: 1 },
    new_id: NAME,
    ...ATTRIBUTION,
    write_id: { type: 'name' },
    reason: { type: 'text' },
  },
  project: { kind: NAME, id: NAME, paths: { type: 'names', required: true } },
  list: {
    kind: { type: 'name' },
    limit: { type: 'int', min: 1, max: 100_000 },
    // kind/id: two names and the slash between them.
    after: { type: 'name', max: 2 * LIMITS.name + 1 },
  },
  prune: { kind: NAME, id: NAME, keep: { type: 'int', required: true, min: 1 } },
  escalate: KIND_CALL,
  apply: { kind: NAME, id: NAME, operation: NAME, ...KIND_CALL_REST },
  validate: {
    kind: NAME,
    id: NAME,
    body: { type: 'object', required: true },
    ...WRITER,
  },
} satisfies Record<string, InputSpec>;

/** `docs.list`: documents by kind then id, paged by `after`. */
export interface ListDocumentsInput {
  /** Only documents of this kind. */
  kind?: string;
  /** At most this many documents. @default 1000 */
  limit?: number;
  /** Only the documents after this one: `kind/id` of the last document a page showed. */
  after?: string;
}

/** A call of one of a kind's operations on a document (`escalate` names its operation itself). */
export interface KindCall {
  kind: string;
  id: string;
  /** The operation's arguments (e.g. escalate's `{ ambiguities: ['a1'] }`; default `{}`). */
  args?: Record<string, unknown>;
  actor?: string;
  actor_kind?: CommitInput['actor_kind'];
  role?: string;
  provenance?: Provenance;
  reason?: string;
}

/** `apply`: run one of a kind's named operations on a document's latest version, as one CAS commit. */
export interface ApplyInput extends KindCall {
  /** The kind's operation (e.g. workflow-sessions `add-todo`); its arguments go in `args`. */
  operation: string;
}

/** `docs.get`: a document's latest version, or the one asked for. */
export interface GetDocumentInput {
  /** The document's kind. */
  kind: string;
  /** The document's id. */
  id: string;
  /** The version to read. @default the latest */
  version?: number;
}

/** `docs.history`: a document's commits in order, paged by `after`. */
export interface DocumentHistoryInput {
  /** The document's kind. */
  kind: string;
  /** The document's id. */
  id: string;
  /** Only the entries after this seq. @default 0 */
  after?: number;
  /** At most this many entries. @default 100 */
  limit?: number;
  /** Newest first. @default false */
  reverse?: boolean;
}

/** `docs.diff`: the JSON Patch between two versions of a document. */
export interface DiffDocumentInput {
  /** The document's kind. */
  kind: string;
  /** The document's id. */
  id: string;
  /** The version to diff from (0 = empty). */
  from: number;
  /** The version to diff to. @default the latest */
  to?: number;
}

/** `docs.fork`: a copy of one version as a new document. */
export interface ForkDocumentInput {
  /** The document's kind. */
  kind: string;
  /** The document's id. */
  id: string;
  /** The version to copy. @default the latest */
  version?: number;
  /** The new document's id. */
  new_id: string;
  /** Who writes the copy. */
  actor?: string;
  /** The writer's kind. */
  actor_kind?: CommitInput['actor_kind'];
  /** The writer's role. */
  role?: string;
  /** Where the write comes from. */
  provenance?: Provenance;
  /** Makes a retried fork return the first one's result. */
  write_id?: string;
  /** Why. @default `forked from kind/id@version` */
  reason?: string;
}

/** `docs.project`: named fields of a document's latest version. */
export interface ProjectDocumentInput {
  /** The document's kind. */
  kind: string;
  /** The document's id. */
  id: string;
  /** The fields: JSON pointers or dot paths. */
  paths: string[];
}

/** `docs.validate`: a body checked against its kind without writing. */
export interface ValidateDocumentInput {
  /** The document's kind. */
  kind: string;
  /** The document's id. */
  id: string;
  /** The body to check. */
  body: JsonObject;
  /** Who would write it. */
  actor?: string;
  /** The writer's kind. */
  actor_kind?: CommitInput['actor_kind'];
  /** The writer's role. */
  role?: string;
}
