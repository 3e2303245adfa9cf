// Named credentials for the network edges (`agentstate serve`, `agentstate mcp --http`): each principal has a
// role (agent, human, admin) and optionally reads only. Kept in one file in the root (never inside an instance
// folder, so a copied instance carries no secret), mode 0600, each token stored only as a scrypt hash.
// A token is `ast_<id>_<secret>`: the id finds the record, scrypt checks the secret.
import { randomBytes, scryptSync, timingSafeEqual } from 'node:crypto';
import {
  chmodSync,
  closeSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { InvalidInputError, NotFoundError, StateConflictError } from '../errors.js';
import { type Principal, ROLES, type Role } from './access.js';

/** The principals file's name inside the root. */
export const PRINCIPALS_FILE = 'agentstate-principals.json';

/** A principal as listed (never its token or hash). */
export interface PrincipalRecord {
  name: string;
  role: Role;
  read_only: boolean;
  /** The token's public part (`ast_<id>_…`). */
  id: string;
  created_at: string;
  /** When it was revoked; a revoked principal authenticates no more. */
  revoked_at: string | null;
}

interface StoredPrincipal extends PrincipalRecord {
  /** `scrypt$<N>$<r>$<p>$<salt b64url>$<hash b64url>` */
  hash: string;
}

interface PrincipalsFile {
  version: 1;
  principals: StoredPrincipal[];
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9._@+|:-]{0,63}$/;
const TOKEN = /^ast_([0-9a-f]{16})_([A-Za-z0-9_-]{43})$/;
const SCRYPT = { N: 16384, r: 8, p: 1 } as const;

/** A principal name: 1–64 letters, digits and `._@+|:-`, starting with a letter or digit. */
export function checkPrincipalName(name: unknown): string {
  if (typeof name !== 'string' || !NAME.test(name)) {
    throw new InvalidInputError(
      `principal name ${JSON.stringify(name)}: use 1–64 letters, digits and . _ @ + | : - (starting with a letter or digit)`,
      { field: 'name' },
    );
  }
  return name;
}

function hashSecret(secret: string, salt = randomBytes(16)): string {
  const hash = scryptSync(secret, salt, 32, SCRYPT);
  return `scrypt$${SCRYPT.N}$${SCRYPT.r}$${SCRYPT.p}$${salt.toString('base64url')}$${hash.toString('base64url')}`;
}

function secretMatches(secret: string, stored: string): boolean {
  const [scheme, n, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || salt === undefined || hash === undefined) return false;
  const want = Buffer.from(hash, 'base64url');
  const got = scryptSync(secret, Buffer.from(salt, 'base64url'), want.length, {
    N: Number(n),
    r: Number(r),
    p: Number(p),
  });
  return got.length === want.length && timingSafeEqual(got, want);
}

const publicOf = (p: StoredPrincipal): PrincipalRecord => ({
  name: p.name,
  role: p.role,
  read_only: p.read_only,
  id: p.id,
  created_at: p.created_at,
  revoked_at: p.revoked_at,
});

/**
 * The principals of a root. Reads the file on every change (a revoke reaches a running server at its next
 * request); a token that passed scrypt once is remembered for the life of the process, until its principal
 * changes.
 * @example const { token } = new PrincipalStore(root).add({ name: 'ci-bot', role: 'agent' })
 */
export class PrincipalStore {
  readonly file: string;
  readonly #clock: () => number;
  #cache: { mtimeMs: number; size: number; data: PrincipalsFile } | null = null;
  /** token → the record it matched, as of the file version it was checked against. */
  readonly #verified = new Map<string, { record: StoredPrincipal; data: PrincipalsFile }>();

  constructor(root: string, options: { clock?: () => number } = {}) {
    this.file = join(root, PRINCIPALS_FILE);
    this.#clock = options.clock ?? Date.now;
  }

  #read(): PrincipalsFile {
    const st = statSync(this.file, { throwIfNoEntry: false });
    if (!st) return { version: 1, principals: [] };
    if (!st.isFile()) {
      throw new InvalidInputError(`${this.file} is not a file: remove it (or move it aside)`, {
        field: 'principals',
        path: this.file,
      });
    }
    if ((st.mode & 0o077) !== 0) {
      throw new InvalidInputError(`${this.file} is readable by other users: chmod 600 it`, {
        field: 'principals',
        path: this.file,
      });
    }
    if (this.#cache && this.#cache.mtimeMs === st.mtimeMs && this.#cache.size === st.size)
      return this.#cache.data;
    let data: PrincipalsFile;
    try {
      data = JSON.parse(readFileSync(this.file, 'utf8')) as PrincipalsFile;
    } catch (err) {
      throw new InvalidInputError(`${this.file} is not a principals file: ${(err as Error).message}`, {
        field: 'principals',
        path: this.file,
      });
    }
    if (data?.version !== 1 || !Array.isArray(data.principals)) {
      throw new InvalidInputError(`${this.file} is not a principals file (version 1)`, {
        field: 'principals',
        path: this.file,
      });
    }
    this.#cache = { mtimeMs: st.mtimeMs, size: st.size, data };
    return data;
  }

  /** Changes the file under a lock file, written whole and renamed into place (mode 0600). */
  #update<T>(change: (data: PrincipalsFile) => T): T {
    mkdirSync(join(this.file, '..'), { recursive: true });
    const lock = `${this.file}.lock`;
    let fd: number | undefined;
    for (let i = 0; fd === undefined; i++) {
      try {
        fd = openSync(lock, 'wx', 0o600);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
        const st = statSync(lock, { throwIfNoEntry: false });
        // A lock left by a process that died holding it (a change takes milliseconds).
        if (st && this.#clock() - st.mtimeMs > 10_000) rmSync(lock, { force: true });
        else if (i > 200) {
          throw new StateConflictError(`${lock} is held by another change: try again`, { path: lock });
        } else Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10);
      }
    }
    try {
      this.#cache = null;
      const data = this.#read();
      const result = change(data);
      const tmp = `${this.file}.${process.pid}.tmp`;
      writeFileSync(tmp, `${JSON.stringify(data, null, 2)}\n`, { mode: 0o600 });
      chmodSync(tmp, 0o600);
      renameSync(tmp, this.file);
      this.#cache = null;
      return result;
    } finally {
      closeSync(fd);
      rmSync(lock, { force: true });
    }
  }

  /** Every principal, revoked ones included, by name. */
  list(): PrincipalRecord[] {
    return this.#read()
      .principals.map(publicOf)
      .sort((a, b) => a.name.localeCompare(b.name));
  }

  /**
   * Creates a principal and returns its token: shown once, kept only as a hash. A name in use by a principal
   * that is not revoked is STATE_CONFLICT.
   */
  add(input: { name: string; role: Role; read_only?: boolean }): {
    principal: PrincipalRecord;
    token: string;
  } {
    const name = checkPrincipalName(input.name);
    if (!(ROLES as readonly string[]).includes(input.role)) {
      throw new InvalidInputError(`role ${JSON.stringify(input.role)}: use one of ${ROLES.join(', ')}`, {
        field: 'role',
        allowed: [...ROLES],
      });
    }
    const id = randomBytes(8).toString('hex');
    const secret = randomBytes(32).toString('base64url');
    const stored: StoredPrincipal = {
      name,
      role: input.role,
      read_only: input.read_only === true,
      id,
      created_at: new Date(this.#clock()).toISOString(),
      revoked_at: null,
      hash: hashSecret(secret),
    };
    this.#update((data) => {
      if (data.principals.some((p) => p.name === name && p.revoked_at === null)) {
        throw new StateConflictError(`principal ${name} exists: revoke it first, or choose another name`, {
          name,
        });
      }
      data.principals.push(stored);
    });
    return { principal: publicOf(stored), token: `ast_${id}_${secret}` };
  }

  /** Revokes the principal `name` (its token stops working at once); NOT_FOUND when none is active. */
  revoke(name: string): PrincipalRecord {
    checkPrincipalName(name);
    return this.#update((data) => {
      const p = data.principals.find((x) => x.name === name && x.revoked_at === null);
      if (!p)
        throw new NotFoundError(`no active principal ${name}: agentstate auth list shows them`, { name });
      p.revoked_at = new Date(this.#clock()).toISOString();
      return publicOf(p);
    });
  }

  /** The principal a bearer token belongs to and its record's id, or null (unknown, revoked, no principal token). */
  authenticate(token: string): { principal: Principal; id: string } | null {
    const m = TOKEN.exec(token);
    if (!m) return null;
    const data = this.#read();
    const seen = this.#verified.get(token);
    if (seen && seen.data === data) return { principal: principalOf(seen.record), id: seen.record.id };
    const record = data.principals.find((p) => p.id === m[1] && p.revoked_at === null);
    if (!record || !secretMatches(m[2]!, record.hash)) return null;
    this.#verified.set(token, { record, data });
    return { principal: principalOf(record), id: record.id };
  }

  /** Whether the principal record `id` exists and is not revoked. */
  active(id: string): boolean {
    return this.#read().principals.some((p) => p.id === id && p.revoked_at === null);
  }
}

const principalOf = (r: StoredPrincipal): Principal => ({
  name: r.name,
  role: r.role,
  read_only: r.read_only,
});
