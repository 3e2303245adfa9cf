// Keeping files inside the project: every path a view (or `agentstate setup`) reads or writes is resolved
// (symlinks followed) and refused when it leads outside the real project root.
import { lstatSync, readlinkSync, realpathSync, type Stats, statSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { InvalidInputError } from '../errors.js';
import { fileType } from './files.js';

/**
 * The real path of `path`: its deepest existing ancestor with every symlink resolved, plus the missing
 * rest. Null when an existing component is a symlink that leads nowhere (dangling or a loop): where a
 * write through it would land cannot be told.
 */
function realPathDeep(path: string): string | null {
  const missing: string[] = [];
  let cur = resolve(path);
  for (;;) {
    try {
      // lstat, not stat: a dangling symlink exists (and must not be taken for a missing folder).
      lstatSync(cur);
      break;
    } catch {
      const parent = dirname(cur);
      if (parent === cur) break;
      missing.unshift(basename(cur));
      cur = parent;
    }
  }
  try {
    return join(realpathSync(cur), ...missing);
  } catch {
    return null;
  }
}

/** Whether the absolute `path` is `root` or lies under it (both as given: resolve links first). */
export function inside(root: string, path: string): boolean {
  return path === root || path.startsWith(root.endsWith(sep) ? root : root + sep);
}

/**
 * Resolves `path` (relative to `root`, or absolute) and returns its real absolute path when it lies
 * inside the real project root `root`; otherwise INVALID_INPUT naming `path`. Catches `../` in the path,
 * absolute paths elsewhere, and symlinks anywhere on the way (a `.grid` folder linked to another folder, a
 * state file linked to `/dev/zero`). The check is made when called: callers use the returned path at once.
 * @example confineToProject('/work/app', '.grid/STATE.md') // '/work/app/.grid/STATE.md'
 * @example confineToProject('/work/app', '../other/x.json') // throws INVALID_INPUT
 */
export function confineToProject(root: string, path: string): string {
  const absRoot = resolve(root);
  const abs = resolve(absRoot, path);
  const realRoot = realPathDeep(absRoot);
  if (realRoot === null) {
    throw new InvalidInputError(`the project folder ${absRoot} is a symlink that leads nowhere`, {
      field: 'project',
      path: absRoot,
    });
  }
  if (!inside(absRoot, abs)) {
    throw new InvalidInputError(
      `${path} is outside the project ${absRoot}: state files are read and written only inside --project`,
      { field: 'path', path: abs, project: absRoot },
    );
  }
  const real = realPathDeep(abs);
  if (real === null) {
    throw new InvalidInputError(
      `${abs} goes through a symlink that leads nowhere; state files are read and written only inside the project ${absRoot}`,
      { field: 'path', path: abs, project: absRoot },
    );
  }
  if (!inside(realRoot, real) || real === realRoot) {
    throw new InvalidInputError(
      `${abs} resolves to ${real}, outside the project ${realRoot} (a symlink on the way leads out): state files are read and written only inside --project`,
      { field: 'path', path: abs, resolved: real, project: realRoot },
    );
  }
  return real;
}

/** `path` relative to the project root, with `/` separators (for kinds' `idFromPath`). */
export function projectRelative(root: string, path: string): string {
  return relative(resolve(root), resolve(root, path)).split('\\').join('/');
}

/** A file or folder of a project as found on disk, to be read and written through `real`. */
export interface ProjectTarget {
  /** The path as given, relative to the project (`/` separators), for messages. */
  rel: string;
  /** The project's real absolute path. */
  root: string;
  /** Its real absolute path, every symlink on the way resolved: where it is read and written. */
  real: string;
  exists: boolean;
  /** A symlink was followed on the way (the path itself or a folder above it). */
  viaLink: boolean;
  /** The path itself is a symlink. */
  isLink: boolean;
}

/**
 * Where `rel` (a path inside the project `root`) really is, found one component at a time with lstat, and
 * INVALID_INPUT naming the component when it may not be written: a symlink that leads out of the real
 * project root, or nowhere (dangling, a loop: where a write would land cannot be told); a folder on the
 * way that is a file (or anything but a folder); the path itself when it is not a regular file (`expect:
 * 'file'`) or not a folder (`'dir'`). A symlink that stays inside the project is followed. The check is
 * made when called: callers use `real` at once.
 * @example projectTarget('/work/app', '.claude/settings.json') // { real: '/work/app/.claude/settings.json', … }
 */
export function projectTarget(root: string, rel: string, expect: 'file' | 'dir' = 'file'): ProjectTarget {
  const absRoot = resolve(root);
  const realRoot = realPathDeep(absRoot);
  if (realRoot === null) {
    throw new InvalidInputError(`the project folder ${absRoot} is a symlink that leads nowhere`, {
      field: 'project',
      path: absRoot,
    });
  }
  const parts = relative(absRoot, resolve(absRoot, rel)).split(sep);
  if (parts[0] === '' || parts[0] === '..' || isAbsolute(parts[0]!)) {
    throw new InvalidInputError(`${rel} is not a path inside the project ${absRoot}`, {
      field: 'path',
      path: rel,
    });
  }
  const refuse = (name: string, why: string, extra: Record<string, unknown> = {}): never => {
    throw new InvalidInputError(`${name} ${why}; nothing was written`, {
      field: 'path',
      path: name,
      project: realRoot,
      ...extra,
    });
  };
  let cur = realRoot;
  let viaLink = false;
  let isLink = false;
  for (let i = 0; i < parts.length; i++) {
    const name = parts.slice(0, i + 1).join('/');
    const last = i === parts.length - 1;
    const next = join(cur, parts[i]!);
    let st: Stats;
    try {
      st = lstatSync(next);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT')
        refuse(name, `cannot be read (${(err as Error).message})`);
      return { rel, root: realRoot, real: join(next, ...parts.slice(i + 1)), exists: false, viaLink, isLink };
    }
    if (st.isSymbolicLink()) {
      let target: string;
      try {
        target = realpathSync(next);
      } catch {
        let to = '?';
        try {
          to = readlinkSync(next);
        } catch {}
        return refuse(
          name,
          `is a symlink (to ${to}) that leads nowhere: where a write through it would land cannot be told; make it a file or folder of the project, or remove it`,
        );
      }
      if (!inside(realRoot, target)) {
        refuse(
          name,
          `is a symlink to ${target}, outside the project ${realRoot}: a link that leaves the project is never written through; replace the link with a file or folder of the project, or remove it`,
          { resolved: target },
        );
      }
      viaLink = true;
      isLink = last;
      cur = target;
      st = statSync(target);
    } else {
      cur = next;
    }
    if (!last && !st.isDirectory()) refuse(name, `is ${fileType(st)}, not a folder`);
    if (last && expect === 'file' && !st.isFile()) refuse(name, `is ${fileType(st)}, not a regular file`);
    if (last && expect === 'dir' && !st.isDirectory()) refuse(name, `is ${fileType(st)}, not a folder`);
  }
  return { rel, root: realRoot, real: cur, exists: true, viaLink, isLink };
}
