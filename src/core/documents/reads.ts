// The reads of `docs.*`: a document at its latest or any kept version, its history, diffs between
// versions, projections of named fields, and the list of documents, paged by a `kind/id` cursor.
import { InvalidInputError, NotFoundError } from '../../errors.js';
import type { StoreBackend } from '../backend.js';
import { checkInput } from '../input.js';
import { getPath } from '../json.js';
import type { DocumentRecord, HistoryEntry, Json, JsonObject, JsonPatchOp } from '../types.js';
import {
  type DiffDocumentInput,
  DOC_INPUTS,
  type DocumentHistoryInput,
  type GetDocumentInput,
  type ListDocumentsInput,
  type ProjectDocumentInput,
} from './inputs.js';
import { jsonPatch } from './patch.js';

/** The version a pruned history entry can no longer be read at. */
export class VersionPrunedError extends NotFoundError {
  constructor(message: string, details: Record<string, unknown>) {
    super(message, { ...details, pruned: true });
    this.name = 'VersionPrunedError';
  }
}

/**
 * The document a list cursor names: `kind/id`, split at the first slash (a kind has none, an id may).
 * INVALID_INPUT without a slash or with either side empty.
 */
export function documentCursor(after: string): { kind: string; id: string } {
  const at = after.indexOf('/');
  if (at <= 0 || at === after.length - 1) {
    throw new InvalidInputError(
      `list: after must be kind/id (of the last document a page showed), got ${JSON.stringify(after.slice(0, 80))}`,
      { field: 'after' },
    );
  }
  return { kind: after.slice(0, at), id: after.slice(at + 1) };
}

/** `docs.get`: the input checked, then the read (see `readDocument`). */
export async function getDocument(backend: StoreBackend, input: GetDocumentInput): Promise<DocumentRecord> {
  return readDocument(backend, checkInput<GetDocumentInput>('get', input, DOC_INPUTS.get));
}

/** The latest version, or the one asked for (`i` checked); NOT_FOUND (pruned: true for retention) otherwise. */
export async function readDocument(backend: StoreBackend, i: GetDocumentInput): Promise<DocumentRecord> {
  const latest = await backend.docs.get(i.kind, i.id);
  if (!latest) throw new NotFoundError(`${i.kind}/${i.id} not found`, { kind: i.kind, id: i.id });
  if (i.version === undefined || i.version === latest.version) return latest;
  const v = await backend.docs.getVersion(i.kind, i.id, i.version);
  if (v === 'pruned') {
    throw new VersionPrunedError(`${i.kind}/${i.id} version ${i.version} was removed by retention`, {
      kind: i.kind,
      id: i.id,
      version: i.version,
    });
  }
  if (!v) {
    throw new NotFoundError(`${i.kind}/${i.id} has no version ${i.version} (latest is ${latest.version})`, {
      kind: i.kind,
      id: i.id,
      version: i.version,
      latest: latest.version,
    });
  }
  return {
    ...latest,
    version: v.entry.version,
    body: v.body,
    content_hash: v.entry.content_hash,
    updated_at: v.entry.created_at,
  };
}

/** The latest version, or null (where `get` would be NOT_FOUND). */
export async function find(backend: StoreBackend, kind: string, id: string): Promise<DocumentRecord | null> {
  checkInput('get', { kind, id }, DOC_INPUTS.get);
  return backend.docs.get(kind, id);
}

/**
 * One version from the history: its body and entry, null when it never existed, 'pruned' when retention
 * removed it (where `get({ version })` would throw).
 */
export async function findVersion(
  backend: StoreBackend,
  kind: string,
  id: string,
  version: number,
): Promise<{ body: JsonObject; entry: HistoryEntry } | null | 'pruned'> {
  checkInput('get', { kind, id, version }, DOC_INPUTS.get);
  return backend.docs.getVersion(kind, id, version);
}

/**
 * The version a commit with this `write_id` wrote, or null: its history entry, and its body unless
 * retention removed it since.
 */
export async function findWrite(
  backend: StoreBackend,
  kind: string,
  id: string,
  writeId: string,
): Promise<{ entry: HistoryEntry; body: JsonObject | null } | null> {
  checkInput('get', { kind, id }, DOC_INPUTS.get);
  const w = await backend.docs.findWrite(kind, id, writeId);
  return w && { entry: w.entry, body: w.body };
}

/** Commits in order (no-ops included), paged by `after` (a seq). @default limit 100 */
export async function history(
  backend: StoreBackend,
  input: DocumentHistoryInput,
): Promise<{
  entries: HistoryEntry[];
  next_after: number | null;
}> {
  const i = checkInput<DocumentHistoryInput>('history', input, DOC_INPUTS.history);
  const limit = i.limit ?? 100;
  const entries = await backend.docs.history(i.kind, i.id, {
    afterSeq: i.after ?? 0,
    limit,
    reverse: i.reverse ?? false,
  });
  if (entries.length === 0 && !(await backend.docs.get(i.kind, i.id))) {
    throw new NotFoundError(`${i.kind}/${i.id} not found`, { kind: i.kind, id: i.id });
  }
  return { entries, next_after: entries.length === limit ? entries[entries.length - 1]!.seq : null };
}

/** What `diff` answers: the RFC 6902 patch that turns version `from` of `kind/id` into version `to`. */
export interface DocumentDiff {
  kind: string;
  id: string;
  from: number;
  to: number;
  patch: JsonPatchOp[];
}

/** RFC 6902 JSON Patch from version `from` (0 = empty) to `to` (default latest). */
export async function diff(backend: StoreBackend, input: DiffDocumentInput): Promise<DocumentDiff> {
  const i = checkInput<DiffDocumentInput>('diff', input, DOC_INPUTS.diff);
  const latest = await readDocument(backend, { kind: i.kind, id: i.id });
  const to = i.to ?? latest.version;
  const body = async (v: number) =>
    v === 0 ? {} : (await readDocument(backend, { kind: i.kind, id: i.id, version: v })).body;
  const patch = jsonPatch().compare(await body(i.from), await body(to)) as JsonPatchOp[];
  return { kind: i.kind, id: i.id, from: i.from, to, patch };
}

/** Only the named fields (JSON pointers or dot paths), with the version they were read at. */
export async function project(
  backend: StoreBackend,
  input: ProjectDocumentInput,
): Promise<{
  kind: string;
  id: string;
  version: number;
  values: Record<string, Json>;
  missing: string[];
}> {
  const i = checkInput<ProjectDocumentInput>('project', input, DOC_INPUTS.project);
  const doc = await readDocument(backend, { kind: i.kind, id: i.id });
  const values: Record<string, Json> = {};
  const missing: string[] = [];
  for (const p of i.paths) {
    const v = getPath(doc.body, p);
    if (v === undefined) missing.push(p);
    else values[p] = v;
  }
  return { kind: doc.kind, id: doc.id, version: doc.version, values, missing };
}

/**
 * Documents (without bodies), by kind then id; with `after` (`kind/id` of the last document a page
 * showed), the documents after it in that order, so paging visits each once. An `after` naming no
 * document is INVALID_INPUT. @default limit 1000
 */
export async function list(
  backend: StoreBackend,
  input: ListDocumentsInput = {},
): Promise<Array<Omit<DocumentRecord, 'body'>>> {
  const i = checkInput<ListDocumentsInput>('list', input, DOC_INPUTS.list);
  const after = i.after === undefined ? undefined : documentCursor(i.after);
  const docs = await backend.docs.list(i.kind ?? null, i.limit ?? 1000, after);
  // A cursor naming no document reads nothing: told only then, so a page costs one query.
  if (after !== undefined && docs.length === 0 && (await backend.docs.get(after.kind, after.id)) === null) {
    throw new InvalidInputError(
      `list: after ${JSON.stringify(i.after)} names no document; page on from kind/id of the last document a page showed`,
      { field: 'after' },
    );
  }
  return docs;
}
