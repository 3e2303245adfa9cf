// Files as views of the store: export (render + atomic write, stamped with the version it shows) and
// import (a hand-edited file becomes a CAS commit against the version it was exported from).
import fastJsonPatch from 'fast-json-patch';
import { VIEW_RECENT_EVENTS, type ViewContext, viewContextOf } from '../core/kind.js';
import type { CommitResult, JsonObject, JsonPatchOp } from '../core/types.js';
import { AgentStateError, InvalidInputError, StateConflictError, toAgentStateError } from '../errors.js';
import { confineToProject } from '../fs/confine.js';
import type { Instance } from '../instance/instance.js';
import { getKind } from '../kinds/registry.js';
import { parseView, readViewFile, readViewState, type ViewTarget, writeViewFile } from './files.js';
import { withFileLock } from './lock.js';

/** What `exportView` did: the document and version, the file, and whether it was written. */
export interface ExportResult {
  kind: string;
  id: string;
  version: number;
  path: string;
  /** False when the file already showed this version with the same text, or was kept (`kept`). */
  written: boolean;
  /** True when the file no longer held what `ifFileIs` expected: it was left as it is. */
  kept?: boolean;
}

export interface ExportOptions {
  /**
   * Write only if the file still holds this (as readViewState reads it: its text, null when missing),
   * checked under the lock just before writing, so an edit saved since the caller read the file is never
   * overwritten. @default undefined (write whatever the file holds)
   */
  ifFileIs?: string | null;
}

/** The checkpoint kept next to a view file: the last good export, for recovery. */
export function checkpointPath(path: string): string {
  return path.endsWith('/STATE.md') ? path.replace(/STATE\.md$/, 'CHECKPOINT.md') : `${path}.checkpoint`;
}

async function viewContext(inst: Instance, kind: string, id: string): Promise<ViewContext> {
  const recent = await inst.events.read({
    stream: `doc:${kind}/${id}`,
    reverse: true,
    limit: VIEW_RECENT_EVENTS,
  });
  return viewContextOf(inst.clock(), recent);
}

/**
 * The text of the file being replaced, for renderers that keep its comments and layout; undefined when
 * it is missing or refused (a FIFO, oversize, binary): then it is rendered afresh and replaced whole.
 * A path that leads outside the project still throws.
 */
function readPrevious(t: ViewTarget): string | undefined {
  confineToProject(t.root, t.path);
  try {
    return readViewFile(t.path, t.root);
  } catch (err) {
    if (err instanceof AgentStateError && (err.code === 'NOT_FOUND' || err.code === 'INVALID_INPUT'))
      return undefined;
    throw err;
  }
}

/** A document's state file, rendered (nothing written), and whether its body passes the kind's rules now. */
export interface RenderedFile {
  kind: string;
  id: string;
  version: number;
  /** Where the file lives in a project (its kind's default path). */
  path: string;
  text: string;
  valid: boolean;
  /** Why not, as `CODE: message`. */
  problem?: string;
}

/**
 * Renders version `version` (default: the latest) of a document whose kind has a state file, with the
 * context the file shows (recent events, the clock), and checks the body against the kind's current rules
 * (a body stored under older rules may no longer pass): the `render_file` operation. INVALID_INPUT for a
 * kind without a file.
 */
export async function renderFile(
  inst: Instance,
  input: { kind: string; id: string; version?: number },
): Promise<RenderedFile> {
  const kind = getKind(input.kind);
  if (!kind.file) {
    throw new InvalidInputError(`kind ${input.kind} has no state file`, { field: 'kind', kind: input.kind });
  }
  const doc = await inst.docs.get(input);
  const stamp = { kind: input.kind, id: input.id, version: doc.version };
  const text = kind.file.render(doc.body, stamp, await viewContext(inst, input.kind, input.id));
  const path = kind.file.defaultPath(input.id);
  try {
    await inst.docs.validate({ kind: input.kind, id: input.id, body: doc.body });
    return { ...stamp, path, text, valid: true };
  } catch (err) {
    const e = toAgentStateError(err);
    return { ...stamp, path, text, valid: false, problem: `${e.code}: ${e.message}` };
  }
}

/** Renders the latest version of the document and writes it atomically (temp + rename) under a lock. */
export async function exportView(
  inst: Instance,
  t: ViewTarget,
  opts: ExportOptions = {},
): Promise<ExportResult> {
  const doc = await inst.docs.get({ kind: t.kind.name, id: t.id });
  return withFileLock(t.root, t.path, async () => {
    const previous = readPrevious(t);
    if (opts.ifFileIs !== undefined && readViewState(t) !== opts.ifFileIs)
      return { kind: t.kind.name, id: t.id, version: doc.version, path: t.path, written: false, kept: true };
    const text = t.kind.file.render(
      doc.body,
      { kind: t.kind.name, id: t.id, version: doc.version },
      await viewContext(inst, t.kind.name, t.id),
      previous,
    );
    if (text === previous)
      return { kind: t.kind.name, id: t.id, version: doc.version, path: t.path, written: false };
    writeViewFile(t.root, t.path, text);
    writeViewFile(t.root, checkpointPath(t.path), text);
    return { kind: t.kind.name, id: t.id, version: doc.version, path: t.path, written: true };
  });
}

/** Who `importView` commits the file as, and against which version. */
export interface ImportOptions {
  /** Who commits it, kept in the history entry. @default the instance name */
  actor?: string;
  /** What kind of writer commits it. @default 'human' */
  actor_kind?: 'human' | 'model' | 'tool' | 'system';
  /** The writer's role, for kinds with field permissions. */
  role?: string;
  /** Commit against this version instead of the file's stamp (for files never exported). */
  expected_version?: number;
  /** The file's text as the caller already read it (watch imports the text it saw settle). @default read now */
  text?: string;
}

/** The commit `importView` made, and the file it read. */
export interface ImportResult extends CommitResult {
  path: string;
}

/** Describes a patch in one line per change, for conflict messages. */
export function describePatch(patch: JsonPatchOp[], max = 12): string[] {
  const lines = patch.slice(0, max).map((op) => {
    const v = op.value === undefined ? '' : ` = ${JSON.stringify(op.value).slice(0, 60)}`;
    return `${op.op === 'add' ? '+' : op.op === 'remove' ? '-' : '~'} ${op.path}${v}`;
  });
  if (patch.length > max) lines.push(`… and ${patch.length - max} more`);
  return lines;
}

/**
 * Reads a hand-edited file and commits it against the version it was exported from. An edit made on
 * an old export is STATE_CONFLICT carrying both diffs (what the store changed since, and what the file
 * changes); nothing is overwritten. On success the file is re-exported at the new version, unless it was
 * saved again meanwhile (then it is left as it is, for the next import).
 */
export async function importView(
  inst: Instance,
  t: ViewTarget,
  opts: ImportOptions = {},
): Promise<ImportResult> {
  const text = opts.text ?? readViewFile(t.path, t.root);
  const { body, stamp } = parseView(t, text);
  if (stamp && (stamp.kind !== t.kind.name || stamp.id !== t.id)) {
    throw new StateConflictError(
      `${t.path} is stamped as ${stamp.kind}/${stamp.id}, not ${t.kind.name}/${t.id}: it belongs to another document`,
      { path: t.path },
    );
  }
  const current = await inst.docs.find(t.kind.name, t.id);
  const expected = opts.expected_version ?? stamp?.version ?? 0;
  try {
    const r = await inst.docs.commit({
      kind: t.kind.name,
      id: t.id,
      expected_version: expected,
      body,
      actor: opts.actor ?? inst.name,
      actor_kind: opts.actor_kind ?? 'human',
      ...(opts.role === undefined ? {} : { role: opts.role }),
      reason: `imported from ${t.path}`,
    });
    if (r.changed) await exportView(inst, t, { ifFileIs: text });
    return { ...r, path: t.path };
  } catch (err) {
    if (!(err instanceof AgentStateError) || err.code !== 'STATE_CONFLICT' || !current) throw err;
    const base =
      expected >= 1
        ? await inst.docs.get({ kind: t.kind.name, id: t.id, version: expected }).catch(() => null)
        : null;
    const baseBody: JsonObject = base?.body ?? {};
    const theirs = fastJsonPatch.compare(baseBody, current.body) as JsonPatchOp[];
    const mine = fastJsonPatch.compare(baseBody, body) as JsonPatchOp[];
    const message = [
      `${t.path} was edited from version ${expected}, but ${t.kind.name}/${t.id} is now at version ${current.version}.`,
      `Changed in the store since version ${expected}:`,
      ...describePatch(theirs).map((l) => `  ${l}`),
      'Changed in your file:',
      ...describePatch(mine).map((l) => `  ${l}`),
      `Nothing was written. Re-export (agentstate export ${t.kind.name} ${t.id}), redo your edit, and import again.`,
    ].join('\n');
    throw new StateConflictError(message, {
      kind: t.kind.name,
      id: t.id,
      path: t.path,
      expected,
      actual: current.version,
      store_changes: theirs as unknown as JsonObject[],
      file_changes: mine as unknown as JsonObject[],
    });
  }
}
