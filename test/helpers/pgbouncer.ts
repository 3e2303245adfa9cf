// A PgBouncer of this test file's own, in front of the test PostgreSQL server: how hosted PostgreSQL is
// usually reached (Supabase's and Neon's poolers are PgBouncer or behave like it). Debian's `pgbouncer`
// package; CI installs it (.ci/run). It listens on a free loopback port, is stopped when the file's tests
// end, and never touches a PgBouncer the user runs.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chmodSync, chownSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, it } from 'vitest';
import { PG_URL, reachable } from './postgres.js';
import { tempDir } from './tmp.js';

const isCI = process.env.CI === 'true';

export interface PgBouncerOptions {
  /** `pool_mode`. @default 'transaction' */
  poolMode?: 'transaction' | 'session';
  /** Server connections per database and user: small, so clients share them and session state would leak. @default 2 */
  poolSize?: number;
  /** Startup parameters PgBouncer drops silently instead of refusing the connection. @default none */
  ignoreStartupParameters?: string[];
}

export interface PgBouncer {
  /** `postgres://postgres@127.0.0.1:<port>/<db>`: the test database through the pooler (no query string). */
  url: string;
  /** What PgBouncer logged so far (for a failing test's message). */
  log(): string;
}

function binary(): string | null {
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
function runAs(dir: string): { args: string[] } {
  if (process.getuid?.() !== 0) return { args: [] };
  const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
  const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
  chownSync(dir, uid, gid);
  chmodSync(dir, 0o755);
  return { args: ['-u', 'postgres'] };
}

/**
 * Starts a PgBouncer for this test file, or returns null when there is none to start (skipped with a line
 * saying how to enable it; under CI=true a missing pgbouncer fails the file). Call at the top level of a file
 * whose PostgreSQL server answers.
 */
export async function pgbouncerForThisFile(options: PgBouncerOptions = {}): Promise<PgBouncer | null> {
  const bin = binary();
  if (bin === null) {
    if (isCI) {
      it('pgbouncer is installed (CI=true requires it)', () => {
        throw new Error('pgbouncer is not installed: .ci/run installs Debian\'s "pgbouncer" package');
      });
    } else {
      console.warn(
        'skipping the pooled PostgreSQL tests: install pgbouncer (Debian: apt-get install pgbouncer)',
      );
    }
    return null;
  }
  const server = new URL(PG_URL);
  const database = server.pathname.slice(1) || 'postgres';
  const user = decodeURIComponent(server.username || 'postgres');
  const dir = tempDir('agentstate-pgbouncer-');
  const { args } = runAs(dir);
  const logFile = join(dir, 'pgbouncer.log');
  const log = () => (existsSync(logFile) ? readFileSync(logFile, 'utf8') : '');
  let child: ChildProcess | null = null;
  afterAll(async () => {
    if (child === null || child.exitCode !== null) return;
    const exited = new Promise((resolve) => child?.once('exit', resolve));
    child.kill('SIGINT');
    await exited;
  });
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
      if ((await reachable(url)) === null) return { url, log };
      await new Promise((r) => setTimeout(r, 50));
    }
    if (started.exitCode === null && started.signalCode === null) break;
  }
  throw new Error(`pgbouncer did not start:\n${log()}`);
}
