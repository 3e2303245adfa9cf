// Where an instance lives: <root>/<host>/agents/<name>/, with names that cannot escape that folder.
import { homedir, hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { InvalidInputError } from '../errors.js';

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** `details.reason` of the INVALID_INPUT an unnamed instance gets (edges reword it in their own terms). */
export const NO_INSTANCE_GIVEN = 'no_instance_given';
/** `details.reason` of the NOT_FOUND a missing instance gets with `create: false`. */
export const NO_SUCH_INSTANCE = 'no_such_instance';

/** Whether `value` is an allowed host or instance name (what checkName accepts). */
export function isInstanceName(value: unknown): value is string {
  return typeof value === 'string' && NAME.test(value) && !value.includes('..');
}

/** Refuses names with separators, `..`, control characters or a leading dot. */
export function checkName(value: unknown, field: 'host' | 'name'): string {
  if (!isInstanceName(value)) {
    throw new InvalidInputError(
      `${field} ${JSON.stringify(value)} is not allowed: use 1-128 letters, digits, '.', '_' or '-', starting with a letter or digit, and no '..'`,
      { field },
    );
  }
  return value;
}

/** The files and folders of one instance (the bundle seed's layout). */
export interface InstancePaths {
  dir: string;
  db: string;
  dashboard: string;
  retros: string;
  context: string;
  claudeMd: string;
  persona: string;
}

/** The paths of the instance in folder `dir` (nothing is created). */
export function instancePaths(dir: string): InstancePaths {
  return {
    dir,
    db: join(dir, 'state.sqlite'),
    dashboard: join(dir, 'dashboard.md'),
    retros: join(dir, 'retros'),
    context: join(dir, 'context'),
    claudeMd: join(dir, 'CLAUDE.md'),
    persona: join(dir, 'persona.md'),
  };
}

/** Which instance: `host` and `name` under `root`, or the folder `dir` itself. */
export interface InstanceLocation {
  /** Host part of the identity. @default the machine's short hostname */
  host?: string | undefined;
  /** Agent name. Required unless `dir` is given. */
  name?: string | undefined;
  /** The instance folder itself (like MF_INSTANCE_DIR); wins over root/host/name. */
  dir?: string | undefined;
  /** Folder holding `<host>/agents/<name>`. @default ~/.config */
  root?: string | undefined;
}

/** The machine's hostname, cut at the first dot and made safe as a folder name. */
export function defaultHost(): string {
  const h = (hostname().split('.')[0] ?? '').replace(/[^A-Za-z0-9_-]/g, '-');
  return NAME.test(h) ? h : 'localhost';
}

/** The folder holding `<host>/agents/<name>`: `root` resolved, else `~/.config`. */
export function instanceRoot(root?: string): string {
  return resolve(root ?? join(homedir(), '.config'));
}

/** Resolves an instance's identity and folder. */
export function locateInstance(loc: InstanceLocation): { host: string; name: string; dir: string } {
  const host = checkName(loc.host ?? defaultHost(), 'host');
  if (loc.dir !== undefined) {
    if (typeof loc.dir !== 'string' || loc.dir.trim() === '' || loc.dir.includes('\0')) {
      throw new InvalidInputError('instance dir must be a non-empty path', { field: 'dir' });
    }
    const dir = resolve(loc.dir);
    const name = checkName(loc.name ?? lastSegment(dir), 'name');
    return { host, name, dir };
  }
  if (loc.name === undefined) {
    // The library's own words; edges that take flags and variables say it in theirs (instanceHint).
    throw new InvalidInputError(
      'no instance given: pass its `name` (with `host` and `root` when not the defaults), or its folder as `dir`',
      { field: 'name', reason: NO_INSTANCE_GIVEN },
    );
  }
  const name = checkName(loc.name, 'name');
  return { host, name, dir: join(instanceRoot(loc.root), host, 'agents', name) };
}

/** The folder name as an instance name: leading dots dropped, other unsafe characters replaced. */
function lastSegment(dir: string): string {
  const seg = (dir.split(/[\\/]/).filter(Boolean).pop() ?? '')
    .replace(/^\.+/, '')
    .replace(/[^A-Za-z0-9._-]/g, '-');
  return NAME.test(seg) && !seg.includes('..') ? seg : 'instance';
}
