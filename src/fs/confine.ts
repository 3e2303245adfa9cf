// Keeping view files inside the project: every path a view reads or writes is resolved (symlinks
// followed) and refused when it leads outside the real project root.
import { lstatSync, realpathSync } from 'node:fs';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { InvalidInputError } from '../errors.js';

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

function inside(root: string, path: string): boolean {
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
