// Recovery of a corrupted or unparsable view file (Grid section 9.2, for every kind): from the store,
// else from the last checkpoint, else from git history; it says which source it used, and never
// silently resets.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, relative } from 'node:path';
import { decodeUtf8 } from '../core/text-input.js';
import { NotFoundError } from '../errors.js';
import type { Instance } from '../instance/instance.js';
import { MAX_VIEW_BYTES, parseView, readViewFile, type ViewTarget, writeViewFile } from './files.js';
import { checkpointPath, exportView } from './sync.js';

/** What `recoverView` did: where the good copy came from (if it was needed), and why. */
export interface RecoverResult {
  path: string;
  /** `none`: the file was readable and valid, nothing done. */
  source: 'none' | 'store' | 'checkpoint' | 'git';
  /** Why the file needed recovery. */
  problem: string | null;
  version: number | null;
  commit?: string;
}

/** Parses and validates the file; returns the problem, or null when it is fine. */
async function problemWith(inst: Instance, t: ViewTarget, text?: string): Promise<string | null> {
  try {
    const { body } = parseView(t, text ?? readViewFile(t.path, t.root));
    await inst.docs.validate({ kind: t.kind.name, id: t.id, body });
    return null;
  } catch (err) {
    return (err as Error).message;
  }
}

function fromGit(path: string): { text: string; commit: string } | null {
  const cwd = dirname(path);
  try {
    const top = execFileSync('git', ['rev-parse', '--show-toplevel'], {
      cwd,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
    const rel = relative(top, path).split('\\').join('/');
    const commit = execFileSync('git', ['log', '-1', '--format=%H', '--', rel], {
      cwd: top,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
    if (!commit) return null;
    // As bytes, capped like any view file, and decoded strictly (no U+FFFD for invalid bytes).
    const bytes = execFileSync('git', ['show', `${commit}:${rel}`], {
      cwd: top,
      maxBuffer: MAX_VIEW_BYTES,
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    if (bytes.includes(0)) return null;
    return { text: decodeUtf8(bytes, `${rel} at ${commit}`), commit };
  } catch {
    return null;
  }
}

/** The checkpoint's text, or null when it is missing or refused (outside the project, a FIFO, oversize …). */
function readCheckpoint(t: ViewTarget, cp: string): string | null {
  try {
    return readViewFile(cp, t.root);
  } catch {
    return null;
  }
}

/** Restores the file from the first source that has a valid copy. */
export async function recoverView(inst: Instance, t: ViewTarget): Promise<RecoverResult> {
  const problem = existsSync(t.path) ? await problemWith(inst, t) : `${t.path} is missing`;
  if (problem === null) return { path: t.path, source: 'none', problem: null, version: null };

  const stored = await inst.docs.find(t.kind.name, t.id);
  if (stored) {
    const r = await exportView(inst, t);
    return { path: t.path, source: 'store', problem, version: r.version };
  }
  const cp = checkpointPath(t.path);
  const text = readCheckpoint(t, cp);
  if (text !== null) {
    if ((await problemWith(inst, t, text)) === null) {
      writeViewFile(t.root, t.path, text);
      return {
        path: t.path,
        source: 'checkpoint',
        problem,
        version: t.kind.file.parse(text).stamp?.version ?? null,
      };
    }
  }
  const git = fromGit(t.path);
  if (git && (await problemWith(inst, t, git.text)) === null) {
    writeViewFile(t.root, t.path, git.text);
    return {
      path: t.path,
      source: 'git',
      problem,
      version: t.kind.file.parse(git.text).stamp?.version ?? null,
      commit: git.commit,
    };
  }
  throw new NotFoundError(
    `cannot recover ${t.path} (${problem}): the store has no ${t.kind.name}/${t.id}, there is no valid checkpoint, and git has no valid committed copy. Nothing was changed.`,
    { path: t.path, problem },
  );
}
