// PostgreSQL connections: one pg pool per database URL and pool settings shared by every store handle in
// the process, each handle's schema-qualified names, pipelined transactions that retry deadlocks and stale
// connections, and driver errors mapped to typed errors (URL redacted).
import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { redactUrl } from '../../core/redact.js';
import {
  AgentStateError,
  InternalError,
  InvalidInputError,
  LockTimeoutError,
  StorageUnavailableError,
  storeClosedError,
} from '../../errors.js';
import {
  createPool,
  type PgClient,
  type PgPool,
  type PgPoolConfig,
  type PgQuery,
  type PgResult,
} from './driver.js';

/**
 * The settings of a pg pool. Stores opened in one process with the same URL and equal settings share one
 * pool (the pool key is all of them); different settings get a pool of their own.
 */
export interface PostgresPoolOptions {
  /** Connection URL, e.g. `postgres://user:secret@db.example:5432/agents`. Never printed unredacted. */
  url: string;
  /** Connections in the pool, shared by every store using it. @default 10 */
  poolSize?: number;
  /** How long a statement waits for a row lock before LOCK_TIMEOUT. @default 5000 */
  lockTimeoutMs?: number;
  /** How long opening a connection may take before STORAGE_UNAVAILABLE. @default 10000 */
  connectTimeoutMs?: number;
  /** Pipeline BEGIN with the first statement and the last with COMMIT (two round trips per write). @default true */
  pipeline?: boolean;
  /** `application_name` of the connections (shows in pg_stat_activity). @default 'agentstate' */
  applicationName?: string;
  /**
   * How the server is reached. `session` (a direct connection, or a pooler in session mode): the timeouts are
   * startup parameters of each connection, statements may be prepared by name, LISTEN works. `transaction`
   * (PgBouncer in `pool_mode = transaction`, Supabase's and Neon's poolers): the store keeps no session state
   * — the timeouts are set with `SET LOCAL` in every transaction, statements are sent unnamed, nothing is
   * LISTENed for (workers poll sooner instead) and nothing outlives a transaction. The URL can say it with
   * `?pool_mode=transaction`; this option wins over the URL. @default 'session'
   */
  poolMode?: PoolMode;
}

/** How the server is reached: directly (or through a session pooler), or through a transaction pooler. */
export type PoolMode = 'session' | 'transaction';

const POOL_MODES: readonly PoolMode[] = ['session', 'transaction'];

/** One store: an instance in a schema, on a (shared) pool. */
export interface PostgresOptions extends PostgresPoolOptions {
  /** The instance key (e.g. `host/name`): every row carries it and every query filters by it. */
  instance: string;
  /** Schema holding the tables, created if missing; several stores can share a database. @default 'agentstate' */
  schema?: string;
  /**
   * Send a `pg_notify` wake-up hint after appends commit (LISTEN is optional; polling stays the truth). It is
   * sent outside the writing transaction, at most one at a time per store, appends in between folded in.
   * Under `poolMode: 'transaction'` this store never LISTENs; hints are then only for listeners connected
   * directly. @default true (false under `poolMode: 'transaction'`)
   */
  notify?: boolean;
  /**
   * Use named prepared statements, so each connection plans a statement once instead of on every call (the
   * claim statement plans in about 1 ms). Off by default under `poolMode: 'transaction'`, where the server
   * connection changes between transactions; turn it on there only behind a pooler that keeps them per
   * server connection (PgBouncer 1.21 or later with `max_prepared_statements` set). @default true (session mode)
   */
  preparedStatements?: boolean;
  /**
   * Create the instance (and the schema's tables) when missing. With false, an instance never opened before
   * is NOT_FOUND and nothing is written. @default true
   */
  create?: boolean;
}

/** Schema-qualified names of the store's tables and functions. */
export interface Names {
  schema: string;
  work_items: string;
  work_item_blockers: string;
  work_limits: string;
  work_limit_exists: string;
  events: string;
  event_heads: string;
  event_streams: string;
  documents: string;
  document_history: string;
  schema_migrations: string;
  merge_patch: string;
  append_events: string;
  event_item_ids: string;
  claim_ready: string;
  workflow_stream_chunks: string;
  workflow_runs: string;
  workflow_steps: string;
  workflow_hooks: string;
  workflow_waits: string;
}

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

export function names(schema: string): Names {
  const q = `"${schema}"`;
  return {
    schema: q,
    work_items: `${q}.work_items`,
    work_item_blockers: `${q}.work_item_blockers`,
    work_limits: `${q}.work_limits`,
    work_limit_exists: `${q}.work_limit_exists`,
    events: `${q}.events`,
    event_heads: `${q}.event_heads`,
    event_streams: `${q}.event_streams`,
    documents: `${q}.documents`,
    document_history: `${q}.document_history`,
    schema_migrations: `${q}.schema_migrations`,
    merge_patch: `${q}.json_merge_patch`,
    append_events: `${q}.append_events`,
    event_item_ids: `${q}.event_item_ids`,
    claim_ready: `${q}.claim_ready`,
    workflow_stream_chunks: `${q}.workflow_stream_chunks`,
    workflow_runs: `${q}.workflow_runs`,
    workflow_steps: `${q}.workflow_steps`,
    workflow_hooks: `${q}.workflow_hooks`,
    workflow_waits: `${q}.workflow_waits`,
  };
}

/**
 * Positional parameters for one statement; `$1` is always the instance key, so every query can filter on it.
 * @example const p = new Params(inst); const id = p.add('wi_1'); sql = `… WHERE instance = $1 AND id = ${id}`
 */
export class Params {
  readonly values: unknown[];

  constructor(instance: string) {
    this.values = [instance];
  }

  /** Adds a value and returns its placeholder. */
  add(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }

  /** Adds a value as its JSON text (a whole batch of rows is one parameter) and returns its placeholder. */
  json(value: unknown): string {
    return this.add(JSON.stringify(value));
  }
}

// Batches: every statement that takes many rows takes them as one JSON parameter read back as a table, and
// gives many rows back as one JSON array, so a batch of any size is one statement with a fixed text.

/**
 * The rows of JSON parameter `param` (an array of objects) as the table `alias` with the columns `cols`.
 * @example `SELECT * FROM ${recordset(p.json(rows), 'ord int, id text')}`
 */
export function recordset(param: string, cols: string, alias = 'x'): string {
  return `json_to_recordset(${param}::json) AS ${alias}(${cols})`;
}

/** The rows of CTE `cte` as one JSON array in column `rows` (null when none): whole rows, immune to later columns. */
export function jsonRows(cte: string, order = ''): string {
  return `(SELECT json_agg(u${order && ` ${order}`}) FROM ${cte} AS u) AS rows`;
}

/** A statement runner inside one transaction. */
export interface Tx {
  /** Runs a statement (the first one is pipelined with BEGIN). */
  query<R = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<PgResult<R>>;
  /** Runs the transaction's last statement pipelined with COMMIT (as the only statement: on its own). */
  queryAndCommit<R = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<PgResult<R>>;
}

// Connection-level failures: the server is down, restarting, unreachable, refusing us, or out of room.
const NET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
  'ECONNABORTED',
  'ENOENT',
]);
const UNAVAILABLE_SQLSTATES = new Set([
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now (starting up, shutting down, recovery)
  '53300', // too_many_connections
  '53100', // disk_full
  '53200', // out_of_memory
  '3D000', // invalid_catalog_name: the database does not exist
  '28000', // invalid_authorization_specification
  '28P01', // invalid_password
  '25006', // read_only_sql_transaction: a hot standby
  '58030', // io_error
  'XX001', // data_corrupted
  'XX002', // index_corrupted
]);
const LOST_MESSAGE =
  /Connection terminated|Client has encountered a connection error|not queryable|timeout exceeded when trying to connect|Connection terminated due to connection timeout/i;

function errCode(err: unknown): string {
  const e = err as { code?: unknown; errors?: unknown[] } | null;
  if (typeof e?.code === 'string') return e.code;
  // Node reports a failed connect to every address of a host as an AggregateError.
  const first = Array.isArray(e?.errors) ? (e.errors[0] as { code?: unknown } | undefined) : undefined;
  return typeof first?.code === 'string' ? first.code : '';
}

function errMessage(err: unknown): string {
  if (err instanceof AggregateError && err.message === '') {
    return err.errors.map((e) => (e instanceof Error ? e.message : String(e))).join('; ');
  }
  return err instanceof Error ? err.message : String(err);
}

/** True for errors that mean the connection (or the server) is gone or unreachable. */
export function isConnectionError(err: unknown): boolean {
  if (err instanceof AgentStateError) return false;
  const code = errCode(err);
  return (
    NET_CODES.has(code) ||
    code.startsWith('08') ||
    UNAVAILABLE_SQLSTATES.has(code) ||
    LOST_MESSAGE.test(errMessage(err))
  );
}

/** A pooled connection the server closed (restart, pg_terminate_backend): worth one retry on a fresh one. */
function isConnectionLost(err: unknown): boolean {
  const code = errCode(err);
  return (
    code === '57P01' ||
    code === '57P02' ||
    code === 'ECONNRESET' ||
    code === 'EPIPE' ||
    code.startsWith('08') ||
    /Connection terminated unexpectedly|not queryable/i.test(errMessage(err))
  );
}

/** Deadlocks and serialization failures: the transaction was rolled back and can simply run again. */
function isRetryable(err: unknown): boolean {
  const code = errCode(err);
  return code === '40001' || code === '40P01';
}

const TO_TRANSACTION_MODE =
  'add ?pool_mode=transaction to the URL (library: postgres: { poolMode: "transaction" }), see docs/postgres.md';

/** What to change, for the errors a pooler (PgBouncer, Supavisor) sends of its own (SQLSTATE 08P01 mostly). */
const POOLER_HINTS: Array<[RegExp, string]> = [
  [
    /unsupported startup parameter/i,
    `the URL reaches a pooler that refuses session settings sent at connect; ${TO_TRANSACTION_MODE}`,
  ],
  [
    /no more connections allowed|max_client_conn/i,
    "the pooler's max_client_conn is reached: raise it, or give the store a smaller poolSize",
  ],
  [
    /query_wait_timeout/i,
    "every server connection of the pooler stayed busy past its query_wait_timeout: raise the pooler's default_pool_size, or run fewer workers",
  ],
  [
    /no such database/i,
    "the pooler has no database of that name: add it to the pooler's [databases] section, or fix the URL's database",
  ],
  [
    /server_login_retry|cannot connect to server|server login has been failing/i,
    "the pooler cannot reach PostgreSQL behind it: check that server and the pooler's [databases] entry",
  ],
  [
    /client_idle_timeout|idle transaction timeout|idle_transaction_timeout/i,
    "the pooler closed a connection that stayed idle past its own timeout: raise the pooler's timeout, or keep transactions short",
  ],
];

function poolerHint(message: string): string | undefined {
  return POOLER_HINTS.find(([re]) => re.test(message))?.[1];
}

/**
 * Maps a driver error to a typed error: STORAGE_UNAVAILABLE (unreachable, shut down, refused, a pooler in the way), LOCK_TIMEOUT
 * (lock wait, deadlock, serialization), INVALID_INPUT (text PostgreSQL cannot store). Typed errors and
 * anything else pass through unchanged.
 */
export function mapPgError(err: unknown, redactedUrl: string): unknown {
  if (err instanceof AgentStateError) return err;
  const code = errCode(err);
  const message = errMessage(err);
  const details = { url: redactedUrl, pg_code: code || undefined };
  if (isConnectionError(err)) {
    const what = code === '57P01' || code === '57P02' ? 'the server shut the connection' : message;
    const hint = poolerHint(message);
    return new StorageUnavailableError(
      `cannot use PostgreSQL at ${redactedUrl}: ${what}${code && !message.includes(code) ? ` (${code})` : ''}${hint ? `: ${hint}` : ''}`,
      details,
      { cause: err },
    );
  }
  if (code === '42P05' || code === '26000') {
    // A named statement the pg client believes it prepared on this connection is there already, or is not:
    // the server session changed under it, which only a transaction pooler does.
    return new StorageUnavailableError(
      `cannot use PostgreSQL at ${redactedUrl}: ${message} (${code}): the URL reaches a transaction pooler (PgBouncer in transaction mode, Supabase's or Neon's pooler), where prepared statements do not survive a transaction; ${TO_TRANSACTION_MODE}`,
      details,
      { cause: err },
    );
  }
  if (code === '55P03' || code === '57014' || code === '40P01' || code === '40001') {
    const why =
      code === '55P03'
        ? 'a row stayed locked by another writer past lock_timeout'
        : code === '57014'
          ? 'the statement was cancelled (statement timeout)'
          : 'transactions kept colliding (deadlock or serialization failure)';
    return new LockTimeoutError(
      `PostgreSQL at ${redactedUrl}: ${why}; retry, or raise lockTimeoutMs`,
      details,
      {
        cause: err,
      },
    );
  }
  if (code === '22021' || code === '22P05' || code === '54000') {
    return new InvalidInputError(`PostgreSQL cannot store this value: ${message}`, { pg_code: code });
  }
  return err;
}

/** The pool settings checked, with the pool mode decided and the URL it is taken from cleaned of it. */
interface CheckedPool {
  /** The URL without `pool_mode` (pg would not know it). */
  url: string;
  /** The URL redacted, for messages. */
  redacted: string;
  mode: PoolMode;
}

/** Checks the URL and the pool settings and decides the pool mode (the option, else the URL's `pool_mode`). */
function checkPoolOptions(opts: PostgresPoolOptions): CheckedPool {
  if (typeof opts.url !== 'string' || !/^postgres(ql)?:\/\//i.test(opts.url)) {
    throw new InvalidInputError(
      `url must be a postgres:// or postgresql:// URL, got ${typeof opts.url === 'string' ? redactUrl(opts.url) : typeof opts.url}`,
      { field: 'url' },
    );
  }
  const redacted = redactUrl(opts.url);
  let parsed: URL;
  try {
    parsed = new URL(opts.url);
  } catch {
    // Never attach the parser's error: it carries the raw URL, password included.
    throw new InvalidInputError(`url is not a valid URL: ${redacted}`, { field: 'url' });
  }
  for (const [field, v] of [
    ['poolSize', opts.poolSize],
    ['lockTimeoutMs', opts.lockTimeoutMs],
    ['connectTimeoutMs', opts.connectTimeoutMs],
  ] as const) {
    if (v !== undefined && (!Number.isSafeInteger(v) || v < 1)) {
      throw new InvalidInputError(`${field} must be a whole number >= 1`, { field });
    }
  }
  const fromUrl = parsed.searchParams.get('pool_mode');
  const mode = opts.poolMode ?? fromUrl ?? 'session';
  if (!POOL_MODES.includes(mode as PoolMode)) {
    const field = opts.poolMode === undefined ? 'pool_mode' : 'poolMode';
    throw new InvalidInputError(
      `${field} must be ${POOL_MODES.map((m) => `"${m}"`).join(' or ')} (transaction: behind PgBouncer in transaction mode, Supabase's or Neon's pooler), got ${JSON.stringify(mode)}`,
      { field },
    );
  }
  let url = opts.url;
  if (fromUrl !== null) {
    parsed.searchParams.delete('pool_mode');
    url = parsed.toString();
  }
  return { url, redacted, mode: mode as PoolMode };
}

/** Checks a schema name (default `agentstate`): it is put in SQL text, so only a plain identifier. */
export function checkSchema(schema: string | undefined): string {
  const name = schema ?? 'agentstate';
  if (typeof name !== 'string' || !SCHEMA_NAME.test(name)) {
    throw new InvalidInputError(
      `schema must be a lowercase identifier (${SCHEMA_NAME}), got ${JSON.stringify(name)}`,
      { field: 'schema' },
    );
  }
  return name;
}

function validateOptions(opts: PostgresOptions): { schema: string; redacted: string } {
  const { redacted } = checkPoolOptions(opts);
  if (
    typeof opts.instance !== 'string' ||
    opts.instance.length === 0 ||
    opts.instance.length > 400 ||
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what we refuse
    /[\u0000-\u001f\u007f]/.test(opts.instance) ||
    // A lone surrogate is stored as U+FFFD, so two different keys would name the same rows.
    Buffer.from(opts.instance, 'utf8').toString('utf8') !== opts.instance
  ) {
    throw new InvalidInputError('instance must be a non-empty key of at most 400 printable characters', {
      field: 'instance',
    });
  }
  return { schema: checkSchema(opts.schema), redacted };
}

/** A client that stalls mid-transaction must not hold the instance's event head forever. */
const IDLE_IN_TRANSACTION_MS = 60_000;

/**
 * The pg pool configuration for these settings (every field is part of the pool key). In session mode the
 * timeouts are startup parameters of each connection; a transaction pooler refuses those (PgBouncer:
 * "unsupported startup parameter", 08P01) or drops them, so in transaction mode every transaction sets them
 * itself (`beginSql`).
 */
function poolConfig(opts: PostgresPoolOptions, checked: CheckedPool): PgPoolConfig {
  const timeouts = {
    lock_timeout: opts.lockTimeoutMs ?? 5000,
    idle_in_transaction_session_timeout: IDLE_IN_TRANSACTION_MS,
  };
  return {
    connectionString: checked.url,
    max: opts.poolSize ?? 10,
    connectionTimeoutMillis: opts.connectTimeoutMs ?? 10_000,
    idleTimeoutMillis: 10_000,
    application_name: opts.applicationName ?? 'agentstate',
    pipeline: opts.pipeline ?? true,
    ...(checked.mode === 'session' ? timeouts : { poolMode: 'transaction', localTimeouts: timeouts }),
  };
}

/**
 * One pg pool and what belongs to its connections rather than to any store: which connections died, and
 * the names of prepared statements. Shared by every store handle opened with its key (acquirePool / releasePool).
 */
export class SharedPool {
  readonly key: string;
  readonly pool: PgPool;
  readonly config: PgPoolConfig;
  /** The URL with its secrets replaced (redactUrl), for messages. */
  readonly url: string;
  /** Pooled connections that reported an error: dead, never to be sent another statement. */
  readonly dead = new WeakMap<PgClient, Error>();
  readonly #statementNames = new Map<string, string>();

  constructor(key: string, pool: PgPool, config: PgPoolConfig, url: string) {
    this.key = key;
    this.pool = pool;
    this.config = config;
    this.url = url;
    // Registered once per pool, not per store: a listener per store would pile up on a pool serving many.
    // An idle connection the server closed reports here; the pool drops it and opens a new one on demand.
    pool.on('error', () => {});
    // A connection can die at any moment, also while checked out with no statement running, or in the gap
    // between the pool handing it to a waiting caller and that caller's next statement (a pg_terminate_backend
    // read in the same chunk as the answer that freed the connection). pg emits 'error' on the client then,
    // and an 'error' nobody listens to kills the process: every connection listens from its first moment
    // to its last, and a dead one is marked so no further statement is sent on it.
    pool.on('connect', (client) => {
      client.on('error', (err) => {
        if (!this.dead.has(client)) this.dead.set(client, err);
      });
    });
  }

  /** True behind a transaction pooler: nothing may outlive a transaction (see PostgresPoolOptions.poolMode). */
  get transactionMode(): boolean {
    return this.config.poolMode === 'transaction';
  }

  /**
   * The text that opens a transaction (`BEGIN`, or `begin` given), followed in transaction mode by the
   * timeouts for this transaction alone: SET LOCAL holds through any pooler and ends with the transaction.
   * One simple-protocol message, so it is pipelined with the first statement as BEGIN alone is.
   */
  begin(begin = 'BEGIN'): string {
    const t = this.config.localTimeouts;
    if (t === undefined) return begin;
    // Whole numbers, checked when the pool was made: safe in SQL text.
    return `${begin}; SET LOCAL lock_timeout = ${t.lock_timeout}; SET LOCAL idle_in_transaction_session_timeout = ${t.idle_in_transaction_session_timeout}`;
  }

  /** The prepared statement name of a statement text: a hash of it, so equal texts share one name. */
  statementName(sql: string): string {
    let name = this.#statementNames.get(sql);
    if (name === undefined) {
      name = `agentstate_${createHash('sha1').update(sql).digest('hex').slice(0, 24)}`;
      this.#statementNames.set(sql, name);
    }
    return name;
  }

  /**
   * Runs one statement outside a transaction. Idempotent statements are run again on another connection
   * when the pooled one turns out to be closed by the server.
   */
  async query<R = Record<string, unknown>>(q: string | PgQuery, idempotent: boolean): Promise<PgResult<R>> {
    // Every idle connection may have been closed at once (a server restart): one retry per pooled connection.
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.pool.query<R>(q);
      } catch (err) {
        if (idempotent && attempt <= this.config.max && isConnectionLost(err)) continue;
        throw mapPgError(err, this.url);
      }
    }
  }
}

interface PoolEntry {
  /** Handles holding this pool; it ends when the last one lets go. */
  users: number;
  config: PgPoolConfig;
  /** The URL redacted. */
  url: string;
  ready: Promise<SharedPool>;
}

/** The process's pools, by pool key. */
const pools = new Map<string, PoolEntry>();

/**
 * The pool for these settings, created on first use, with one more user. The entry is registered before
 * the first await, so opens racing on one URL get one pool. Pair every call with `releasePool`.
 */
export async function acquirePool(opts: PostgresPoolOptions): Promise<SharedPool> {
  const checked = checkPoolOptions(opts);
  const url = checked.redacted;
  const config = poolConfig(opts, checked);
  // Every setting is in the key: a store never runs with a lock timeout, pool size or application name it
  // did not ask for. The key holds the raw URL (password included) and never leaves this map.
  const key = JSON.stringify(Object.entries(config).sort(([a], [b]) => (a < b ? -1 : 1)));
  let entry = pools.get(key);
  if (entry === undefined) {
    const created: PoolEntry = {
      users: 0,
      config,
      url,
      ready: createPool(config).then((pool) => new SharedPool(key, pool, config, url)),
    };
    created.ready.catch(() => {
      if (pools.get(key) === created) pools.delete(key);
    });
    pools.set(key, created);
    entry = created;
  }
  entry.users++;
  try {
    return await entry.ready;
  } catch (err) {
    entry.users--;
    throw mapPgError(err, url);
  }
}

/** Gives back one use of a pool; the last one ends it (and waits for its connections to close). */
export async function releasePool(shared: SharedPool): Promise<void> {
  const entry = pools.get(shared.key);
  if (entry === undefined) return;
  entry.users--;
  if (entry.users > 0) return;
  // Out of the map before the await: an open meanwhile gets a new pool instead of this ending one.
  pools.delete(shared.key);
  await shared.pool.end();
}

/** Runs `fn` on the pool for these settings (shared with any store open on it), then gives it back. */
export async function withPool<T>(
  opts: PostgresPoolOptions,
  fn: (pool: SharedPool) => Promise<T>,
): Promise<T> {
  const shared = await acquirePool(opts);
  try {
    return await fn(shared);
  } finally {
    await releasePool(shared);
  }
}

/** One pool open in this process, as `openPools` reports it. */
export interface OpenPool {
  /** The URL, redacted. */
  url: string;
  application_name: string;
  /** Its poolSize. */
  max: number;
  /** Store handles (and listings in progress) using it. */
  users: number;
}

/** The pools open in this process (tests use it to see that stores share one). */
export function openPools(): OpenPool[] {
  return [...pools.values()].map((e) => ({
    url: e.url,
    application_name: e.config.application_name,
    max: e.config.max,
    users: e.users,
  }));
}

const MAX_DEADLOCK_RETRIES = 5;

/**
 * One store's handle on a shared pool: its instance key, schema names and `closed` flag are its own; the
 * pool, and the knowledge of which of its connections died, are shared with every store on the same key.
 */
export class PostgresConnection {
  readonly shared: SharedPool;
  readonly instance: string;
  readonly schema: string;
  readonly names: Names;
  /** The URL with its secrets replaced (redactUrl), for messages. */
  readonly url: string;
  private readonly prepared: boolean;

  private constructor(shared: SharedPool, instance: string, schema: string, url: string, prepared: boolean) {
    this.shared = shared;
    this.prepared = prepared;
    this.instance = instance;
    this.schema = schema;
    this.names = names(schema);
    this.url = url;
  }

  /** Validates the options and takes a use of the pool for their URL and settings (no connection is opened yet). */
  static async open(opts: PostgresOptions): Promise<PostgresConnection> {
    const { schema, redacted } = validateOptions(opts);
    const shared = await acquirePool(opts);
    // Named statements live in a server session: behind a transaction pooler the next transaction may run on
    // another one (42P05 "already exists" / 26000 "does not exist").
    const prepared = opts.preparedStatements ?? !shared.transactionMode;
    return new PostgresConnection(shared, opts.instance, schema, redacted, prepared);
  }

  /** The shared pg pool. */
  get pool(): PgPool {
    return this.shared.pool;
  }

  /** The shared pool's configuration (a LISTEN connection is opened with it). */
  get config(): PgPoolConfig {
    return this.shared.config;
  }

  private get dead(): WeakMap<PgClient, Error> {
    return this.shared.dead;
  }

  /**
   * The statement to send: named after a hash of its text when prepared statements are on (statement
   * texts are a small fixed set: every value is a parameter). Without parameters: a simple query, which may
   * hold several statements (migrations).
   */
  statement(sql: string, params?: unknown[]): string | PgQuery {
    if (params === undefined) return sql;
    if (!this.prepared) return { text: sql, values: params };
    return { name: this.shared.statementName(sql), text: sql, values: params };
  }

  /** A new parameter list whose `$1` is this instance. */
  params(): Params {
    return new Params(this.instance);
  }

  mapError(err: unknown): unknown {
    return mapPgError(err, this.url);
  }

  /**
   * Runs one statement outside a transaction. Idempotent statements (reads, heartbeats, pruning) are run
   * again on another connection when the pooled one turns out to be closed by the server.
   */
  async query<R = Record<string, unknown>>(
    sql: string,
    params?: unknown[],
    opts: { idempotent: boolean } = { idempotent: true },
  ): Promise<PgResult<R>> {
    if (this.closed) throw storeClosedError();
    // Behind a transaction pooler a lone statement has no session to take the timeouts from: it runs in a
    // transaction of its own that sets them (one round trip: BEGIN, the statement and COMMIT pipelined).
    if (this.shared.transactionMode) {
      return this.transaction((tx) => tx.queryAndCommit<R>(sql, params), opts);
    }
    return this.shared.query<R>(this.statement(sql, params), opts.idempotent);
  }

  /**
   * Runs `fn` in one READ COMMITTED transaction; everything it wrote commits together or not at all.
   * Deadlocks and serialization failures re-run `fn` (it must only talk to the database); a connection lost
   * before COMMIT was sent re-runs it on another connection (the server rolled that try back); with
   * `idempotent`, also one lost after (running `fn` twice does no harm).
   */
  async transaction<T>(fn: (tx: Tx) => Promise<T>, opts: { idempotent?: boolean } = {}): Promise<T> {
    if (this.closed) throw storeClosedError();
    let lostRetries = 0;
    for (let attempt = 1; ; attempt++) {
      let client: PgClient;
      try {
        client = await this.pool.connect();
      } catch (err) {
        throw this.mapError(err);
      }
      // The connection may have died before it was handed over: nothing ran on it, so try another.
      const deadOnArrival = this.dead.get(client);
      if (deadOnArrival !== undefined) {
        client.release(deadOnArrival);
        if (lostRetries < this.config.max) {
          lostRetries++;
          attempt--;
          continue;
        }
        throw this.mapError(deadOnArrival);
      }
      /** Throws the connection's error when it is known dead, before anything more is sent on it. */
      const alive = () => {
        const err = this.dead.get(client);
        if (err !== undefined) throw err;
      };
      // Held in an object: the Tx closures move it, which TypeScript's narrowing would not see.
      const txn = { state: 'idle' as 'idle' | 'open' | 'committing' | 'done' };
      const tx: Tx = {
        query: async <R>(sql: string, params?: unknown[]) => {
          alive();
          if (txn.state === 'idle') {
            txn.state = 'open';
            const [begin, res] = await Promise.allSettled([
              client.query(this.shared.begin()),
              client.query<R>(this.statement(sql, params)),
            ]);
            if (begin.status === 'rejected') throw begin.reason;
            if (res.status === 'rejected') throw res.reason;
            return res.value;
          }
          if (txn.state !== 'open') throw new InternalError('statement after the transaction ended');
          return client.query<R>(this.statement(sql, params));
        },
        queryAndCommit: async <R>(sql: string, params?: unknown[]) => {
          // A connection already known dead never gets the COMMIT, so the outcome stays known: rolled back.
          alive();
          if (txn.state === 'idle' && this.shared.transactionMode) {
            // Behind a transaction pooler even a lone statement needs BEGIN, for its SET LOCAL timeouts.
            txn.state = 'committing';
            const [begin, res, commit] = await Promise.allSettled([
              client.query(this.shared.begin()),
              client.query<R>(this.statement(sql, params)),
              client.query('COMMIT'),
            ]);
            return settleCommit(begin, res, commit, () => {
              txn.state = 'done';
            });
          }
          if (txn.state === 'idle') {
            // A lone statement is its own transaction: no BEGIN or COMMIT to send.
            txn.state = 'committing';
            try {
              return await client.query<R>(this.statement(sql, params));
            } finally {
              txn.state = 'done';
            }
          }
          if (txn.state !== 'open') throw new InternalError('statement after the transaction ended');
          txn.state = 'committing';
          const [res, commit] = await Promise.allSettled([
            client.query<R>(this.statement(sql, params)),
            client.query('COMMIT'),
          ]);
          return settleCommit({ status: 'fulfilled', value: null }, res, commit, () => {
            txn.state = 'done';
          });
        },
      };
      try {
        const out = await fn(tx);
        if (txn.state === 'open') {
          alive();
          txn.state = 'committing';
          await client.query('COMMIT');
          txn.state = 'done';
        }
        client.release(this.dead.get(client));
        return out;
      } catch (err) {
        let lostWith: Error | undefined = this.dead.get(client);
        if (lostWith === undefined && isConnectionError(err)) lostWith = err as Error;
        if (lostWith === undefined && txn.state !== 'idle' && txn.state !== 'done') {
          try {
            await client.query('ROLLBACK');
          } catch (rollbackErr) {
            lostWith = this.dead.get(client) ?? (rollbackErr as Error);
          }
        }
        // A connection in an unknown state is destroyed (released with its error), never handed to the next
        // caller; the pool opens a new one on demand.
        client.release(lostWith);
        const commitSent = txn.state === 'committing' || txn.state === 'done';
        // Before COMMIT was sent, a connection that died took its transaction with it: safe to run again.
        const runAgain =
          (opts.idempotent === true || !commitSent) && (this.dead.has(client) || isConnectionLost(err));
        if (lostWith !== undefined && runAgain && lostRetries < this.config.max) {
          lostRetries++;
          attempt--;
          continue;
        }
        if (isRetryable(err) && attempt < MAX_DEADLOCK_RETRIES) {
          await sleep(5 + Math.floor(Math.random() * 20 * attempt));
          continue;
        }
        throw this.mapError(err);
      }
    }
  }

  /** True once `close()` was called: every later call is STORAGE_UNAVAILABLE (closed), not a driver error. */
  closed = false;

  /**
   * Closes this handle and gives back its use of the pool; the pool ends with its last user. Calls already
   * running finish on the pool. Closing twice gives the pool back once.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await releasePool(this.shared);
  }
}

function settleCommit<R>(
  begin: PromiseSettledResult<unknown>,
  res: PromiseSettledResult<PgResult<R>>,
  commit: PromiseSettledResult<PgResult<unknown>>,
  done: () => void,
): PgResult<R> {
  if (begin.status === 'rejected') throw begin.reason;
  if (res.status === 'rejected') {
    // The server turned the pipelined COMMIT of the failed transaction into a ROLLBACK.
    done();
    throw res.reason;
  }
  if (commit.status === 'rejected') throw commit.reason;
  done();
  if (commit.value.command !== 'COMMIT') {
    throw new InternalError(`the transaction did not commit (server answered ${commit.value.command})`);
  }
  return res.value;
}
