// Runs the PostgreSQL sections in a child process on plain `node`, without tsx.
//
// Why a child: `npm run bench` runs under `node --import tsx`, whose loader hooks serve every dynamic
// `import()` through a hooks thread. agentstate's DocumentStore resolves kinds with `await import(…)` on
// each commit. That costs ~2.5 µs on plain node and 70–180 µs under tsx (measured on this machine), a
// cost users who run dist/ never pay. So pg-child.ts is bundled with esbuild (packages stay external, the
// library is still loaded from dist/) and run with plain node. Every contender runs in that same child.
import { fork, spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { REPO_ROOT, TMP_ROOT } from './lib.js';
import type { FromPgChild, PgMeta, PgRow } from './pg-child.js';

export { pgReachable, redactedPgUrl } from './postgres.js';

/** Bundles pg-child.ts and runs it; resolves with its rows and metadata. */
export async function runPgChild(
  rounds: number,
  parts: string[],
): Promise<{ rows: PgRow[]; meta: PgMeta | null }> {
  mkdirSync(TMP_ROOT, { recursive: true });
  const outfile = join(TMP_ROOT, `pg-child-${process.pid}.mjs`);
  await build({
    entryPoints: [join(REPO_ROOT, 'bench', 'pg-child.ts')],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    logLevel: 'warning',
    // The bench files locate dist/ and bench/.tmp from import.meta.url: keep it pointing into bench/.
    define: {
      'import.meta.url': JSON.stringify(pathToFileURL(join(REPO_ROOT, 'bench', 'pg-child.ts')).href),
    },
  });
  const rows: PgRow[] = [];
  let meta: PgMeta | null = null;
  let failure: string | null = null;
  let done = false;
  const child = fork(outfile, [], {
    execArgv: [],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    env: { ...process.env, PG_BENCH_ROUNDS: String(rounds), PG_BENCH_PARTS: parts.join(',') },
  });
  child.on('message', (msg: FromPgChild) => {
    if (msg.type === 'row') rows.push(msg.row);
    else if (msg.type === 'meta') meta = msg.meta;
    else if (msg.type === 'error') failure = msg.message;
    else if (msg.type === 'done') done = true;
  });
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  if (failure) throw new Error(`the PostgreSQL benchmark failed: ${failure}`);
  if (code !== 0 || !done) throw new Error(`the PostgreSQL benchmark child exited with code ${code}`);
  return { rows, meta };
}

/**
 * Bundles bench/<name>.ts as pg-child.ts is bundled and runs it on plain node with `args` (its table on stdout,
 * progress on stderr); throws if it fails.
 */
export async function runBundled(name: string, args: string[]): Promise<void> {
  mkdirSync(TMP_ROOT, { recursive: true });
  const outfile = join(TMP_ROOT, `${name}-${process.pid}.mjs`);
  await build({
    entryPoints: [join(REPO_ROOT, 'bench', `${name}.ts`)],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    logLevel: 'warning',
    define: {
      'import.meta.url': JSON.stringify(pathToFileURL(join(REPO_ROOT, 'bench', `${name}.ts`)).href),
    },
  });
  const r = spawnSync(process.execPath, [outfile, ...args], { stdio: 'inherit' });
  if (r.status !== 0) throw new Error(`bench/${name}.ts exited with ${r.status ?? r.signal}`);
}
