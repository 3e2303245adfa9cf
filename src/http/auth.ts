// Who may call `agentstate serve`: one bearer token (AGENTSTATE_TOKEN, else generated once and kept in the
// root with mode 0600, never inside an instance folder), a signed session cookie for the dashboard that
// carries the signed-in human's name, and a CSRF token bound to that session for every state-changing
// browser request.
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { InvalidInputError } from '../errors.js';
import { sameSecret } from './guards.js';

/** The token file's name inside the root, for a server of every instance under it (or of a `url`). */
export const TOKEN_FILE = 'agentstate-serve.token';

/**
 * The token file's name inside the root for a server of one instance folder: the folder's name and a hash
 * of its path, so each folder has its own token and none is kept inside the folder, where it would travel
 * with every copy (a backup, a tarball, a shared drive) of the data.
 * @example join(root, dirTokenFile('/srv/agents/planner')) // <root>/agentstate-serve.planner-3f2a9c0d41b7.token
 */
export function dirTokenFile(dir: string): string {
  const abs = resolve(dir);
  const label =
    basename(abs)
      .replace(/[^A-Za-z0-9._-]/g, '-')
      .replace(/^\.+/, '') || 'instance';
  const hash = createHash('sha256').update(abs).digest('hex').slice(0, 12);
  return `agentstate-serve.${label}-${hash}.token`;
}

/** Where the token came from: given (option or AGENTSTATE_TOKEN), read from the file, or generated now. */
export interface ServeToken {
  token: string;
  source: 'given' | 'file' | 'generated';
  /** The token file (read or written); absent for a given token. */
  file?: string;
}

/**
 * The server's token: `given` when set, else the token file `name` in `root`, else a new random one written
 * there with mode 0600 (the caller prints it once). A token file readable by others is refused.
 * @example const { token, source } = loadOrCreateToken(undefined, '/srv/agents')
 */
export function loadOrCreateToken(given: string | undefined, root: string, name = TOKEN_FILE): ServeToken {
  if (given !== undefined && given !== '') {
    if (given.length < 16) {
      throw new InvalidInputError('the serve token must be at least 16 characters', { field: 'token' });
    }
    return { token: given, source: 'given' };
  }
  const file = join(root, name);
  const st = statSync(file, { throwIfNoEntry: false });
  if (st) {
    if ((st.mode & 0o077) !== 0) {
      throw new InvalidInputError(`${file} is readable by other users: chmod 600 it (or remove it)`, {
        field: 'token',
        path: file,
      });
    }
    const token = readFileSync(file, 'utf8').trim();
    if (token.length >= 16) return { token, source: 'file', file };
  }
  const token = randomBytes(32).toString('base64url');
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${token}\n`, { mode: 0o600 });
  chmodSync(file, 0o600);
  return { token, source: 'generated', file };
}

/** The session cookie's name. */
export const SESSION_COOKIE = 'agentstate_session';
/** How long a dashboard session lasts, ms. */
export const SESSION_MS = 12 * 60 * 60 * 1000;

const mac = (token: string, what: string) => createHmac('sha256', token).update(what).digest('base64url');

/** A session cookie value for `actor` signed with the token (a new token ends every session). */
export function signSession(token: string, actor: string, now = Date.now()): string {
  const body = `${Buffer.from(actor).toString('base64url')}.${now + SESSION_MS}`;
  return `${body}.${mac(token, `session:${body}`)}`;
}

/** The signed-in actor of a session cookie, or null when it is forged, malformed or expired. */
export function readSession(token: string, cookie: string | undefined, now = Date.now()): string | null {
  if (!cookie) return null;
  const parts = cookie.split('.');
  if (parts.length !== 3) return null;
  const [name, expires, sig] = parts as [string, string, string];
  if (!sameSecret(sig, mac(token, `session:${name}.${expires}`))) return null;
  if (!/^\d+$/.test(expires) || Number(expires) < now) return null;
  const actor = Buffer.from(name, 'base64url').toString('utf8');
  return isActorName(actor) ? actor : null;
}

/** The CSRF token of a session: forms carry it as `_csrf`, scripts as the `x-csrf-token` header. */
export function csrfToken(token: string, session: string): string {
  return mac(token, `csrf:${session}`);
}

/** Whether `given` is the CSRF token of `session`. */
export function csrfValid(token: string, session: string, given: string | undefined): boolean {
  return given !== undefined && given !== '' && sameSecret(given, csrfToken(token, session));
}

/** A name a human may sign in with: 1–100 printable characters, no control characters. */
export function isActorName(name: string): boolean {
  if (name.length < 1 || name.length > 100 || name.trim() !== name) return false;
  for (let i = 0; i < name.length; i++) {
    const c = name.charCodeAt(i);
    if (c < 0x20 || c === 0x7f) return false;
  }
  return true;
}

/** The bearer token of an Authorization header, or undefined. */
export function bearerOf(header: string | undefined): string | undefined {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  return m ? m[1] : undefined;
}
