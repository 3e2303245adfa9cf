// Who may call `agentstate serve`: the owner's bearer token (AGENTSTATE_TOKEN, else generated once and kept
// in the root with mode 0600, never inside an instance folder) or a principal's (principals.ts), a session
// the server keeps for the dashboard's signed-in human, and that session's CSRF token for every
// state-changing browser request.
import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import type { Principal } from '../auth/access.js';
import { InvalidInputError } from '../errors.js';
import { sameSecret } from '../net/guards.js';

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
  return keepToken(serveToken(given, root, name));
}

/**
 * The server's token as `loadOrCreateToken` finds it, without writing anything: a generated one (`source`
 * `generated`) stays in memory until `keepToken` writes it, which serve does only once it listens, so a start
 * that fails (a busy port) leaves no token file behind.
 * @example const t = serveToken(undefined, root); await listen(...); keepToken(t)
 */
export function serveToken(given: string | undefined, root: string, name = TOKEN_FILE): ServeToken {
  if (given !== undefined && given !== '') {
    if (given.length < 16) {
      throw new InvalidInputError('the serve token must be at least 16 characters', { field: 'token' });
    }
    return { token: given, source: 'given' };
  }
  const file = join(root, name);
  const st = statSync(file, { throwIfNoEntry: false });
  if (st && !st.isFile()) {
    throw new InvalidInputError(`${file} is not a file: remove it (or move it aside) and start again`, {
      field: 'token',
      path: file,
    });
  }
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
  return { token: randomBytes(32).toString('base64url'), source: 'generated', file };
}

/** Writes a generated token to its file with mode 0600 (a given or read one is left as it is); returns it. */
export function keepToken(t: ServeToken): ServeToken {
  if (t.source !== 'generated' || t.file === undefined) return t;
  mkdirSync(dirname(t.file), { recursive: true });
  writeFileSync(t.file, `${t.token}\n`, { mode: 0o600 });
  chmodSync(t.file, 0o600);
  return t;
}

/** The session cookie's name. */
export const SESSION_COOKIE = 'agentstate_session';
/** How long a dashboard session lasts, ms. */
export const SESSION_MS = 12 * 60 * 60 * 1000;

/** What a dashboard session is: who signed in, as which principal, until when, and its CSRF token. */
export interface SessionInfo {
  /**
   * Who signed in, as a principal: a human or admin principal, or (with the owner's token) an admin of the name
   * they gave; its name is what the session's writes are recorded under.
   */
  principal: Principal;
  /** The principal record's id, checked at every request (a revoked principal's sessions end). */
  principalId: string | null;
  expires: number;
  csrf: string;
}

/**
 * The dashboard's sessions, kept by the server: the cookie is a random id, so signing out, expiry and a
 * revoked principal end a session at once, and a restart ends them all. At most `max` at a time (the
 * oldest go first).
 */
export class Sessions {
  readonly #map = new Map<string, SessionInfo>();
  readonly #clock: () => number;
  readonly #ttl: number;
  readonly #max: number;

  constructor(options: { clock?: () => number; ttlMs?: number; max?: number } = {}) {
    this.#clock = options.clock ?? Date.now;
    this.#ttl = options.ttlMs ?? SESSION_MS;
    this.#max = options.max ?? 10_000;
  }

  /** Starts a session; returns the cookie value. */
  create(principal: Principal, principalId: string | null): string {
    const id = randomBytes(32).toString('base64url');
    while (this.#map.size >= this.#max) this.#map.delete(this.#map.keys().next().value as string);
    this.#map.set(id, {
      principal,
      principalId,
      expires: this.#clock() + this.#ttl,
      csrf: randomBytes(32).toString('base64url'),
    });
    return id;
  }

  /** The live session a cookie names, or null (unknown, ended or expired). */
  get(id: string | undefined): SessionInfo | null {
    if (id === undefined || id === '') return null;
    const s = this.#map.get(id);
    if (!s) return null;
    if (s.expires <= this.#clock()) {
      this.#map.delete(id);
      return null;
    }
    return s;
  }

  /** Ends a session (sign-out). */
  end(id: string | undefined): void {
    if (id !== undefined) this.#map.delete(id);
  }
}

/** Whether `given` is the CSRF token of `session`. */
export function csrfValid(session: SessionInfo, given: string | undefined): boolean {
  return given !== undefined && given !== '' && sameSecret(given, session.csrf);
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
