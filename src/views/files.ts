// Locating and reading view files: which kind a path belongs to, and safe reads (size, binary).
import { readFileSync, statSync } from 'node:fs';
import { relative, resolve } from 'node:path';
import { InvalidInputError, NotFoundError } from '../errors.js';
import type { KindDefinition, KindFile } from '../kinds/kind.js';
import { getKind, kindNames } from '../kinds/registry.js';

/** Largest view file read, in bytes. */
export const MAX_VIEW_BYTES = 4 * 1024 * 1024;

export interface ViewTarget {
  kind: KindDefinition & { file: KindFile };
  id: string;
  /** Absolute path of the file. */
  path: string;
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

/** Where the file of (kind, id) lives under `project`. */
export function targetFor(kindName: string, id: string, project: string): ViewTarget {
  const kind = viewKind(kindName);
  return { kind, id, path: resolve(project, kind.file.defaultPath(id)) };
}

/** Which kind and document a file belongs to: from `kindName` if given, else inferred from the path. */
export function targetOfPath(path: string, project: string, kindName?: string): ViewTarget {
  const abs = resolve(project, path);
  const rel = relative(resolve(project), abs).split('\\').join('/');
  const candidates = kindName ? [viewKind(kindName)] : kindNames().map(getKind).filter(withFile);
  for (const kind of candidates) {
    const id = kind.file.idFromPath(rel) ?? kind.file.idFromPath(abs);
    if (id !== null) return { kind, id, path: abs };
  }
  throw new InvalidInputError(
    kindName
      ? `${path} is not where a ${kindName} file lives (expected ${viewKind(kindName).file.defaultPath('<id>')})`
      : `cannot tell the kind of ${path} from its path; pass --kind`,
    { field: 'path' },
  );
}

/** Reads a view file as text, refusing missing, oversize and binary files with a clear error. */
export function readViewFile(path: string): string {
  let size: number;
  try {
    size = statSync(path).size;
  } catch {
    throw new NotFoundError(`${path} does not exist`, { path });
  }
  if (size > MAX_VIEW_BYTES) {
    throw new InvalidInputError(
      `${path} is ${size} bytes, larger than the ${MAX_VIEW_BYTES} byte limit for view files`,
      {
        path,
      },
    );
  }
  const buf = readFileSync(path);
  if (buf.includes(0))
    throw new InvalidInputError(`${path} is binary (contains NUL bytes), not a text state file`, { path });
  const text = buf.toString('utf8');
  if (text.includes('\uFFFD')) throw new InvalidInputError(`${path} is not valid UTF-8 text`, { path });
  return text;
}
