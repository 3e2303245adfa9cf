// The pg driver shim: loads `pg` lazily (only this backend needs it) behind the small structural
// interface agentstate uses, with a pool whose 64-bit integers come back as numbers.
import type * as Pg from 'pg';

/** The subset of a query result agentstate uses. */
export interface PgResult<R> {
  rows: R[];
  rowCount: number | null;
  command: string;
}

/** A parameterized statement; with a `name` each connection parses and plans it once, then reuses it. */
export interface PgQuery {
  text: string;
  values: unknown[];
  name?: string;
}

/** One pooled connection, checked out for a transaction. */
export interface PgClient {
  query<R = Record<string, unknown>>(sql: string | PgQuery, params?: unknown[]): Promise<PgResult<R>>;
  on(event: 'error', listener: (err: Error) => void): unknown;
  removeListener(event: 'error', listener: (err: Error) => void): unknown;
  /** Returns the connection to the pool; with an error (or true) the pool destroys it instead. */
  release(destroy?: Error | boolean): void;
}

/** The subset of a pg Pool agentstate uses. */
export interface PgPool {
  query<R = Record<string, unknown>>(sql: string | PgQuery, params?: unknown[]): Promise<PgResult<R>>;
  connect(): Promise<PgClient>;
  /** An idle connection failed; the pool has already dropped it. */
  on(event: 'error', listener: (err: Error) => void): unknown;
  /** A new connection opened, before anyone is handed it. */
  on(event: 'connect', listener: (client: PgClient) => void): unknown;
  end(): Promise<void>;
}

/** A dedicated connection outside the pool (for LISTEN). */
export interface PgListener {
  connect(): Promise<void>;
  query(sql: string): Promise<unknown>;
  on(event: 'notification', listener: (msg: { channel: string; payload?: string }) => void): unknown;
  on(event: 'error', listener: (err: Error) => void): unknown;
  /** The connection closed (ended by us, or lost). */
  on(event: 'end', listener: () => void): unknown;
  end(): Promise<void>;
}

export interface PgPoolConfig {
  connectionString: string;
  max: number;
  connectionTimeoutMillis: number;
  idleTimeoutMillis: number;
  application_name: string;
  /** Startup parameters (session mode only: a transaction pooler refuses them). */
  lock_timeout?: number;
  idle_in_transaction_session_timeout?: number;
  /** Send queries without waiting for the previous answer (BEGIN with the first statement, the last with COMMIT). */
  pipeline: boolean;
  /** Behind a transaction pooler (absent: session mode). Not a pg setting: the store's own. */
  poolMode?: 'transaction';
  /** The timeouts each transaction sets with SET LOCAL in transaction mode. Not a pg setting. */
  localTimeouts?: { lock_timeout: number; idle_in_transaction_session_timeout: number };
}

let loaded: typeof Pg | undefined;

async function loadPg(): Promise<typeof Pg> {
  if (!loaded) {
    const mod = (await import('pg')) as unknown as { default?: typeof Pg } & typeof Pg;
    loaded = mod.default ?? mod;
  }
  return loaded;
}

const INT8_OID = 20;

/** Per-pool type parsers (never the process-wide ones): bigint columns (positions, epoch ms, counts) as numbers. */
function typeParsers(pg: typeof Pg): Pg.CustomTypesConfig {
  const base = pg.types.getTypeParser.bind(pg.types) as (oid: number, format?: string) => unknown;
  return {
    getTypeParser: ((oid: number, format?: string) =>
      oid === INT8_OID && format !== 'binary'
        ? (v: string) => Number(v)
        : base(oid, format)) as unknown as Pg.CustomTypesConfig['getTypeParser'],
  };
}

/** Creates a pool; no connection is opened until the first query. */
export async function createPool(config: PgPoolConfig): Promise<PgPool> {
  const pg = await loadPg();
  const { poolMode: _mode, localTimeouts: _timeouts, ...settings } = config;
  const pool = new pg.Pool({ ...settings, types: typeParsers(pg) });
  return pool as unknown as PgPool;
}

/** Creates a single connection outside the pool, for LISTEN. */
export async function createListener(config: PgPoolConfig): Promise<PgListener> {
  const pg = await loadPg();
  const {
    max: _max,
    idleTimeoutMillis: _idle,
    pipeline: _pipeline,
    poolMode: _mode,
    localTimeouts: _timeouts,
    ...rest
  } = config;
  return new pg.Client({ ...rest, types: typeParsers(pg) }) as unknown as PgListener;
}
