// Locating, reading and writing view files: which kind a path belongs to, confinement to the project
// root, and safe reads (regular files only, size cap, strict UTF-8, no binary).
import { lstatSync } from 'node:fs';
import { resolve } from 'node:path';
import type { FileStamp, KindDefinition, KindFile } from '../core/kind.js';
import type { JsonObject } from '../core/types.js';
import { AgentStateError, InvalidInputError, ValidationFailedError } from '../errors.js';
import { confineToProject, projectRelative } from '../fs/confine.js';
import { writeFileAtomic } from '../fs/files.js';
import { MAX_VIEW_BYTES, readViewFile } from '../fs/text.js';
import { getKind, kindNames } from '../kinds/registry.js';

export { MAX_VIEW_BYTES, readViewFile };

/** A document's file view: the kind (with its file codec), the document id, and where the file is. */
export interface ViewTarget {
  kind: KindDefinition & { file: KindFile };
  id: string;
  /** Absolute path of the file. */
  path: string;
  /** Absolute project root: every read and write of this view stays inside it (symlinks resolved). */
  root: string;
}

function withFile(kind: KindDefinition): kind is KindDefinition & { file: KindFile } {
  return kind.file !== undefined;
}

/** The kind (with a file view) of this name, or INVALID_INPUT. */
export function viewKind(name: string): KindDefinition & { file: KindFile } {
  const k = getKind(name);
  if (!withFile(k)) throw new InvalidInputError(`kind ${name} has no file view`, { field: 'kind' });
  return k;
}

/**
 * Where the file of (kind, id) lives under `project`. INVALID_INPUT when the kind refuses the id (e.g.
 * `../x`, even one stored before ids were checked) or the path leads outside the project.
 */
export function targetFor(kindName: string, id: string, project: string): ViewTarget {
  const kind = viewKind(kindName);
  kind.checkId?.(id);
  const root = resolve(project);
  const path = resolve(root, kind.file.defaultPath(id));
  confineToProject(root, path);
  return { kind, id, path, root };
}

/**
 * Which kind and document a file belongs to: from `kindName` if given, else inferred from the path.
 * INVALID_INPUT when the path is outside the project (after resolving symlinks) or names an id the kind
 * refuses.
 */
export function targetOfPath(path: string, project: string, kindName?: string): ViewTarget {
  const root = resolve(project);
  const abs = resolve(root, path);
  confineToProject(root, abs);
  const rel = projectRelative(root, abs);
  const candidates = kindName ? [viewKind(kindName)] : kindNames().map(getKind).filter(withFile);
  for (const kind of candidates) {
    const id = kind.file.idFromPath(rel);
    if (id !== null) {
      kind.checkId?.(id);
      return { kind, id, path: abs, root };
    }
  }
  throw new InvalidInputError(
    kindName
      ? `${path} is not where a ${kindName} file lives (expected ${viewKind(kindName).file.defaultPath('<id>')})`
      : `cannot tell the kind of ${path} from its path; pass --kind`,
    { field: 'path' },
  );
}

/**
 * What a view file holds, for comparing one read with another: its text, null when it is missing, and for a
 * file that is refused unread (a FIFO, oversize, binary, invalid UTF-8, a path leading out of the project)
 * NUL + the reason, which is never the text of a readable file (NUL is refused in those) yet differs from
 * any other read.
 */
export function readViewState(t: ViewTarget): string | null {
  try {
    return readViewFile(t.path, t.root);
  } catch (err) {
    if (err instanceof AgentStateError && err.code === 'NOT_FOUND') return null;
    if (err instanceof AgentStateError && err.code === 'INVALID_INPUT') return `\u0000${err.message}`;
    throw err;
  }
}

/** The reason an unreadable view file was refused, when `state` (from readViewState) is one; else null. */
export function unreadableReason(state: string | null): string | null {
  return state?.startsWith('\u0000') ? state.slice(1) : null;
}

/**
 * Refuses (VALIDATION_FAILED, rule `file-name-matches-id`) a body that names another document than its
 * file's name does: for aios, `.aios/<X>-state.yaml` must hold instance_id `<X>` (the document id is the
 * instance_id). A missing field is left to the schema, which names it.
 */
export function checkViewName(t: ViewTarget, body: JsonObject): void {
  const named = t.kind.file.bodyId?.(body);
  if (!named || named.id === undefined || named.id === t.id) return;
  const field = named.pointer.slice(1);
  const where =
    typeof named.id === 'string' ? `; the file of ${named.id} is ${t.kind.file.defaultPath(named.id)}` : '';
  throw new ValidationFailedError(
    `${t.kind.file.defaultPath(t.id)} holds ${field} ${JSON.stringify(named.id)}, not ${JSON.stringify(t.id)} as its name says${where}: rename the file or fix ${field}`,
    { pointer: named.pointer, rule: 'file-name-matches-id', path: t.path, expected: t.id, actual: named.id },
  );
}

/** Parses a view file's text with its kind's codec, then checks its name and body agree (checkViewName). */
export function parseView(t: ViewTarget, text: string): { body: JsonObject; stamp: FileStamp | null } {
  const parsed = t.kind.file.parse(text);
  checkViewName(t, parsed.body);
  return parsed;
}

/**
 * Writes a view file (or its checkpoint, or a kept copy) atomically, after checking that it resolves
 * inside the project root `root`; INVALID_INPUT when it does not, or when a directory stands in its place.
 */
export function writeViewFile(root: string, path: string, text: string): void {
  const real = confineToProject(root, path);
  let isDir = false;
  try {
    isDir = lstatSync(real).isDirectory();
  } catch {
    // Missing: it is created.
  }
  if (isDir) throw new InvalidInputError(`${path} is a directory, not a state file`, { path });
  writeFileAtomic(real, text);
}
