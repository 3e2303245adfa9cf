// A PgBouncer process in front of a PostgreSQL server, for the pooled tests (pgbouncer.ts) and the pooled
// benchmark (bench/pooled.ts): how hosted PostgreSQL is usually reached (Supabase's and Neon's poolers are
// PgBouncer or behave like it). Debian's `pgbouncer` package; CI installs it (.ci/run). It listens on a free
// loopback port with a config in a folder of its own, and never touches a PgBouncer the user runs. No vitest
// here: the benchmark runs outside it.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

export interface PgBouncerOptions {
  /** `pool_mode`. @default 'transaction' */
  poolMode?: 'transaction' | 'session';
  /** Server connections per database and user: small, so clients share them and session state would leak. @default 2 */
  poolSize?: number;
  /** Startup parameters PgBouncer drops silently instead of refusing the connection. @default none */
  ignoreStartupParameters?: string[];
}

export interface PgBouncer {
  /** `postgres://<user>@127.0.0.1:<port>/<db>`: the server's database through the pooler (no query string). */
  url: string;
  /** What PgBouncer logged so far (for a failing test's message). */
  log(): string;
  /** Stops it and removes its folder. */
  stop(): Promise<void>;
}

/** Null when a server answers `SELECT 1` at `url`, else why not. */
export async function reachable(url: string): Promise<string | null> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.query('SELECT 1');
    return null;
  } catch (err) {
    return err instanceof Error ? err.message || String(err) : String(err);
  } finally {
    await client.end().catch(() => {});
  }
}

/** The pgbouncer binary, or null when it is not installed. */
export function pgbouncerBinary(): string | null {
  for (const p of ['/usr/sbin/pgbouncer', '/usr/bin/pgbouncer', '/usr/local/bin/pgbouncer']) {
    if (existsSync(p)) return p;
  }
  try {
    return execFileSync('sh', ['-c', 'command -v pgbouncer'], { encoding: 'utf8' }).trim() || null;
  } catch {
    return null;
  }
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => (typeof addr === 'object' && addr ? resolve(addr.port) : reject(new Error('no port'))));
    });
  });
}

/** PgBouncer refuses to run as root: it is then started as the `postgres` user (-u), which must own its files. */
function runAs(dir: string): string[] {
  if (process.getuid?.() !== 0) return [];
  const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
  const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
  chownSync(dir, uid, gid);
  chmodSync(dir, 0o755);
  return ['-u', 'postgres'];
}

async function stopped(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGINT');
  await exited;
}

/**
 * Starts `bin` in front of the server at `serverUrl` (trust auth, its user and database) and resolves once it
 * answers. Throws with PgBouncer's log when it does not start.
 */
export async function startPgBouncer(
  bin: string,
  serverUrl: string,
  options: PgBouncerOptions = {},
): Promise<PgBouncer> {
  const server = new URL(serverUrl);
  const database = server.pathname.slice(1) || 'postgres';
  const user = decodeURIComponent(server.username || 'postgres');
  const dir = mkdtempSync(join(tmpdir(), 'agentstate-pgbouncer-'));
  const args = runAs(dir);
  const logFile = join(dir, 'pgbouncer.log');
  const log = () => (existsSync(logFile) ? readFileSync(logFile, 'utf8') : '');
  const stop = async (child: ChildProcess | null) => {
    if (child !== null) await stopped(child);
    rmSync(dir, { recursive: true, force: true });
  };
  let child: ChildProcess | null = null;
  // A port found free may be taken before PgBouncer binds it: try a few.
  for (let tries = 0; tries < 5; tries++) {
    const port = await freePort();
    const ini = join(dir, 'pgbouncer.ini');
    writeFileSync(join(dir, 'users.txt'), `"${user}" ""\n`);
    writeFileSync(
      ini,
      [
        '[databases]',
        `${database} = host=${server.hostname} port=${server.port || 5432} dbname=${database}`,
        '[pgbouncer]',
        'listen_addr = 127.0.0.1',
        `listen_port = ${port}`,
        'unix_socket_dir =',
        'auth_type = trust',
        `auth_file = ${join(dir, 'users.txt')}`,
        `pool_mode = ${options.poolMode ?? 'transaction'}`,
        `default_pool_size = ${options.poolSize ?? 2}`,
        'max_client_conn = 500',
        `logfile = ${logFile}`,
        ...(options.ignoreStartupParameters?.length
          ? [`ignore_startup_parameters = ${options.ignoreStartupParameters.join(',')}`]
          : []),
        '',
      ].join('\n'),
    );
    const started = spawn(bin, [...args, ini], { stdio: 'ignore' });
    child = started;
    const url = `postgres://${encodeURIComponent(user)}@127.0.0.1:${port}/${database}`;
    // Wait until it answers, or until it exits (the port was taken, or the config refused).
    for (let polls = 0; polls < 400 && started.exitCode === null && started.signalCode === null; polls++) {
      if ((await reachable(url)) === null) return { url, log, stop: () => stop(started) };
      await new Promise((r) => setTimeout(r, 50));
    }
    if (started.exitCode === null && started.signalCode === null) break;
  }
  const why = log();
  await stop(child);
  throw new Error(`pgbouncer did not start:\n${why}`);
}
