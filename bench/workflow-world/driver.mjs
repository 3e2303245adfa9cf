// Issue 42's benchmark: agentstate's Workflow SDK World against the SDK's own local and PostgreSQL Worlds, on
// real workflows compiled by the SDK's `workflow build`. `npm run bench -- --only workflow-world` runs this
// (or `node bench/workflow-world/driver.mjs` after `npm run build`). The first time it installs this folder's
// pinned packages (package-lock.json) apart from the library's, and it (re)builds workflows/ when they changed.
//
// Contenders: agentstate's World on SQLite (a temp folder, durability full, its default) and on PostgreSQL (a
// fresh schema), @workflow/world-local (a temp data folder) and @workflow/world-postgres (a fresh database:
// its schema `workflow` is fixed, so a database of its own per round, set up by the package's own `bootstrap`
// CLI: drizzle migrations and graphile-worker's schema). Both PostgreSQL contenders use the same server.
// Workloads: `addition` (one step adding two numbers) and `sequential` (ten steps, one after another).
// Each round runs every contender on each workload, the order turning by round, each in a child process of
// its own (serve.mjs, hosting the SDK's routes with that World set) on storage made for it and dropped after.
// Figures (serve.mjs measures them): runs/s of a batch of --runs runs started at once (first start() to the
// last run seen completed), the step rows' startedAt → completedAt (p50, p99) of that batch and of runs made
// alone (the warm-up, first run left out), and the storage the batch added per run. Medians over rounds; the
// ratios are agentstate ÷ baseline per round, median over rounds (pairs measured in the same round).
// Options: --rounds N (5), --runs N (30), --warm N (5), --worlds a,b (all four), --workloads a,b (both),
// --json PATH (every round's figures). PostgreSQL at AGENTSTATE_BENCH_PG_URL (default
// postgres://postgres@127.0.0.1:5432/test); its contenders are skipped when no server answers.
import { spawn, spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const HERE = dirname(fileURLToPath(import.meta.url));
const REPO = join(HERE, '..', '..');
const ALL_WORLDS = ['agentstate-sqlite', 'agentstate-postgres', 'world-local', 'world-postgres'];
/** Asked for by name only (--worlds): agentstate on SQLite at durability normal, to see what fsync costs. */
const EXTRA_WORLDS = ['agentstate-sqlite-normal'];
const PG_WORLDS = new Set(['agentstate-postgres', 'world-postgres']);
const NAMES = {
  'agentstate-sqlite': 'agentstate, SQLite',
  'agentstate-sqlite-normal': 'agentstate, SQLite, durability normal',
  'agentstate-postgres': 'agentstate, PostgreSQL',
  'world-local': '@workflow/world-local',
  'world-postgres': '@workflow/world-postgres',
};
const STEPS = { addition: 1, sequential: 10 };

const { values: args } = parseArgs({
  options: {
    rounds: { type: 'string', default: '5' },
    runs: { type: 'string', default: '30' },
    warm: { type: 'string', default: '5' },
    worlds: { type: 'string', default: ALL_WORLDS.join(',') },
    workloads: { type: 'string', default: 'addition,sequential' },
    json: { type: 'string' },
  },
});
const ROUNDS = Math.max(1, Number.parseInt(args.rounds, 10));
const RUNS = Math.max(1, Number.parseInt(args.runs, 10));
const WARM = Math.max(2, Number.parseInt(args.warm, 10));
const WORKLOADS = args.workloads.split(',').filter((w) => w in STEPS);
const PG_URL = process.env.AGENTSTATE_BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const log = (msg) => process.stderr.write(`${msg}\n`);

function run(command, argv, options = {}) {
  const r = spawnSync(command, argv, { cwd: HERE, stdio: 'inherit', ...options });
  if (r.status !== 0) throw new Error(`${command} ${argv.join(' ')} exited with ${r.status ?? r.signal}`);
}

/** The pinned packages, installed apart from the library's (npm install on the lockfile, as the SDK suite). */
function ensureInstalled() {
  if (existsSync(join(HERE, 'node_modules', '@workflow', 'world-postgres', 'package.json'))) return;
  log('[workflow-world] installing the pinned Workflow SDK packages into bench/workflow-world (once)');
  // Not `npm ci`: the lockfile names cbor-extract's optional platform packages, which a registry may not
  // serve; npm install skips a missing optional package and leaves the lockfile as it is.
  run(process.platform === 'win32' ? 'npm.cmd' : 'npm', [
    'install',
    '--no-save',
    '--ignore-scripts',
    '--no-audit',
    '--no-fund',
  ]);
}

function newest(dir) {
  let t = 0;
  for (const f of readdirSync(dir)) t = Math.max(t, statSync(join(dir, f)).mtimeMs);
  return t;
}

/** workflows/ compiled by the SDK's own `workflow build` (writes .well-known/workflow/v1/). */
function ensureBuilt() {
  const manifest = join(HERE, '.well-known', 'workflow', 'v1', 'manifest.json');
  if (existsSync(manifest) && statSync(manifest).mtimeMs >= newest(join(HERE, 'workflows'))) return;
  log('[workflow-world] compiling workflows/ with `workflow build`');
  run(join(HERE, 'node_modules', '.bin', 'workflow'), ['build']);
}

/** The environment of a child: without any Workflow or agentstate setting that could steer its World. */
function childEnv(extra) {
  const env = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (/^(WORKFLOW_|AGENTSTATE_WORKFLOW_|DATABASE_URL$|PORT$)/.test(k)) continue;
    env[k] = v;
  }
  return { ...env, ...extra };
}

function dbUrl(name) {
  const u = new URL(PG_URL);
  u.pathname = `/${name}`;
  return u.toString();
}

function redacted(url) {
  const u = new URL(url);
  if (u.password) u.password = '***';
  return u.toString();
}

let seq = 0;

/** Storage for one contender's round, and how to drop it. */
async function prepare(world, admin, root) {
  seq += 1;
  const name = `wfbench_${process.pid}_${seq}`;
  const dir = join(root, `${seq}-${world}`);
  mkdirSync(dir, { recursive: true });
  const env = { BENCH_WORLD: world, BENCH_DIR: join(dir, 'data') };
  let drop = async () => {};
  if (world === 'agentstate-postgres') {
    Object.assign(env, { BENCH_PG_URL: PG_URL, BENCH_SCHEMA: name, BENCH_PG_SCHEMAS: name });
    drop = () => admin.query(`DROP SCHEMA IF EXISTS "${name}" CASCADE`);
  } else if (world === 'world-postgres') {
    await admin.query(`CREATE DATABASE "${name}"`);
    drop = () => admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    const url = dbUrl(name);
    // The package's own setup (`bootstrap`): its drizzle migrations, then graphile-worker's schema.
    const r = spawnSync(
      process.execPath,
      [join(HERE, 'node_modules', '@workflow', 'world-postgres', 'bin', 'setup.js')],
      { cwd: dir, env: childEnv({ WORKFLOW_POSTGRES_URL: url }), encoding: 'utf8' },
    );
    if (r.status !== 0) {
      await drop();
      throw new Error(`world-postgres bootstrap failed: ${r.stderr || r.stdout}`);
    }
    // Its queue (graphile-worker) keeps its jobs in the same database: counted with its tables.
    Object.assign(env, { BENCH_PG_URL: url, BENCH_PG_SCHEMAS: 'workflow,graphile_worker' });
  }
  return { env, dir, drop };
}

/** Runs serve.mjs for one contender, workload and round; resolves with its figures. */
function child(env, cwd) {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [join(HERE, 'serve.mjs')], { cwd, env: childEnv(env) });
    let out = '';
    let err = '';
    p.stdout.on('data', (d) => {
      out += d;
    });
    p.stderr.on('data', (d) => {
      err += d;
    });
    const timer = setTimeout(() => p.kill('SIGKILL'), 300_000);
    p.on('close', (code, signal) => {
      clearTimeout(timer);
      const line = out.split('\n').find((l) => l.startsWith('result '));
      if (code === 0 && line) resolve(JSON.parse(line.slice('result '.length)));
      else reject(new Error(`exited with ${code ?? signal}: ${(err || out).trim().slice(-2000)}`));
    });
  });
}

function median(xs) {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** Nearest-rank percentile. */
function pct(xs, p) {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
}

function fmt(x, digits) {
  if (!Number.isFinite(x)) return '—';
  const d = digits ?? (Math.abs(x) >= 100 ? 0 : Math.abs(x) >= 10 ? 1 : 2);
  return x.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d });
}

/** One round's figures of one contender from what serve.mjs reported. */
function figures(r) {
  const steps = STEPS[r.workload];
  const aloneSteps = r.warmSteps;
  const tl = (t, w) => ({
    wait: pct(w, 50),
    pickup: median(t.pickup),
    toFirst: median(t.toFirst),
    between: median(t.between),
    end: median(t.end),
  });
  return {
    timeline: tl(r.timeline, r.waits.batch),
    aloneTimeline: tl(r.warmTimeline, r.waits.alone),
    runsPerSec: r.runsPerSec,
    stepP50: pct(r.steps, 50),
    stepP99: pct(r.steps, 99),
    aloneStepP50: pct(aloneSteps, 50),
    aloneRunPerStep: median(r.warmRunMs) / steps,
    bytesPerRun: r.bytesPerRun,
    cpuMsPerRun: r.cpuMsPerRun,
    partsPerRun: r.partsPerRun,
    writesPerRun: (r.calls.batch['events.create'] ?? []).length / r.runs,
    writeP50: pct(r.calls.batch['events.create'] ?? [], 50),
    // Per method of the World: calls per run and the p50 of one call, alone and in the batch.
    calls: Object.fromEntries(
      ['alone', 'batch'].map((phase) => [
        phase,
        Object.fromEntries(
          Object.entries(r.calls[phase]).map(([k, xs]) => [
            k,
            {
              perRun: xs.length / (phase === 'alone' ? r.warmRunMs.length : r.runs),
              p50: pct(xs, 50),
              msPerRun: xs.reduce((x, y) => x + y, 0) / (phase === 'alone' ? r.warmRunMs.length : r.runs),
            },
          ]),
        ),
      ]),
    ),
    apparentBytesPerRun: r.apparentBytesPerRun,
    flowPerRun: r.deliveries.flow / r.runs,
    stepDeliveries: r.deliveries.step,
  };
}

const METRICS = [
  ['runsPerSec', 'runs/s', 'higher'],
  ['stepP50', 'step p50 ms', 'lower'],
  ['stepP99', 'step p99 ms', 'lower'],
  ['aloneStepP50', 'step p50 ms, alone', 'lower'],
  ['aloneRunPerStep', 'run ms ÷ steps, alone', 'lower'],
  ['bytesPerRun', 'bytes/run', 'lower'],
  ['cpuMsPerRun', 'CPU ms/run', 'lower'],
  ['writesPerRun', 'writes/run', 'lower'],
  ['writeP50', 'write p50 ms', 'lower'],
];

async function main() {
  const started = performance.now();
  ensureInstalled();
  ensureBuilt();
  if (!existsSync(join(REPO, 'dist', 'workflow-world', 'world.js'))) {
    throw new Error('dist/workflow-world/world.js is missing: run `npm run build` first');
  }
  const { default: pg } = await import('pg');
  let worlds = args.worlds.split(',').filter((w) => ALL_WORLDS.includes(w) || EXTRA_WORLDS.includes(w));
  const admin = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 3000 });
  admin.on('error', () => {});
  let pgServer = null;
  try {
    await admin.connect();
    pgServer = (await admin.query('SHOW server_version')).rows[0].server_version;
  } catch (err) {
    log(`[workflow-world] no PostgreSQL at ${redacted(PG_URL)} (${err.message}): its contenders are skipped`);
    worlds = worlds.filter((w) => !PG_WORLDS.has(w));
  }
  const root = mkdtempSync(join(tmpdir(), 'agentstate-wf-bench-'));
  const load = [loadavg()[0]];
  /** rounds[workload][world] = figures per round (null when that round failed). */
  const rounds = {};
  const raw = [];
  const failures = [];
  try {
    for (let r = 0; r < ROUNDS; r++) {
      for (const workload of WORKLOADS) {
        rounds[workload] ??= Object.fromEntries(worlds.map((w) => [w, []]));
        // The order turns by round (and differs between workloads), so no contender always runs first.
        const shift = (r + WORKLOADS.indexOf(workload)) % worlds.length;
        const order = [...worlds.slice(shift), ...worlds.slice(0, shift)];
        for (const world of order) {
          let prepared;
          try {
            prepared = await prepare(world, admin, root);
            const res = await child(
              {
                ...prepared.env,
                BENCH_WORKLOAD: workload,
                BENCH_RUNS: String(RUNS),
                BENCH_WARM: String(WARM),
              },
              prepared.dir,
            );
            const f = figures(res);
            rounds[workload][world][r] = f;
            raw.push({ round: r + 1, ...res });
            log(
              `[workflow-world] round ${r + 1} ${workload} ${world}: ${fmt(f.runsPerSec)} runs/s, step p50 ${fmt(f.stepP50)} ms p99 ${fmt(f.stepP99)} ms, alone p50 ${fmt(f.aloneStepP50)} ms, ${fmt(f.bytesPerRun)} B/run, ${fmt(f.flowPerRun)} flow deliveries/run${f.stepDeliveries ? `, ${f.stepDeliveries} step deliveries` : ''}`,
            );
          } catch (err) {
            rounds[workload][world][r] = null;
            failures.push(`round ${r + 1} ${workload} ${world}: ${err.message}`);
            log(`[workflow-world] round ${r + 1} ${workload} ${world} FAILED: ${err.message}`);
          } finally {
            await prepared?.drop().catch((e) => log(`[workflow-world] drop failed: ${e.message}`));
            if (prepared) rmSync(prepared.dir, { recursive: true, force: true });
          }
        }
      }
      load.push(loadavg()[0]);
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
    await admin.end().catch(() => {});
  }

  const out = [];
  out.push(
    `Workflow SDK World benchmark — ${new Date().toISOString()}`,
    `node ${process.version}, ${cpus().length} CPUs (${cpus()[0]?.model ?? '?'}), load average ${load.map((l) => fmt(l, 1)).join(' → ')}; ${ROUNDS} rounds, ${RUNS} runs per batch, ${WARM} runs alone first${pgServer ? `; PostgreSQL ${pgServer} at ${redacted(PG_URL)}` : ''}`,
    `workflow 5.0.0-beta.35, @workflow/world-local 5.0.0-beta.29, @workflow/world-postgres 5.0.0-beta.27 (graphile-worker ${graphileVersion()})`,
    '',
  );
  for (const workload of WORKLOADS) {
    out.push(`### ${workload} (${STEPS[workload]} step${STEPS[workload] > 1 ? 's' : ''} per run)`, '');
    out.push(`| World | ${METRICS.map((m) => m[1]).join(' | ')} |`);
    out.push(`|---|${METRICS.map(() => '---:').join('|')}|`);
    for (const world of worlds) {
      const rs = rounds[workload][world].filter(Boolean);
      out.push(
        `| ${NAMES[world]} | ${METRICS.map(([k]) => fmt(median(rs.map((f) => f[k])), k === 'bytesPerRun' || k === 'runsPerSec' || k === 'writeP50' ? undefined : 1)).join(' | ')} |`,
      );
    }
    out.push(
      '',
      "Where a run's time goes, by the World's rows (ms; medians in a round, median over rounds): queued = queue() returned → the message's first POST reached the route, pickup = run createdAt → startedAt, first = run startedAt → first step startedAt, step = startedAt → completedAt, between = a step's completedAt → the next one's startedAt, end = last step completedAt → run completedAt",
      '',
      '| World | alone: queued | pickup | first | step | between | end | batch: queued | pickup | first | step | between | end |',
      '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    );
    for (const world of worlds) {
      const rs = rounds[workload][world].filter(Boolean);
      const cell = (which, k) => fmt(median(rs.map((f) => f[which][k])), 1);
      const part = (which, stepKey) =>
        [
          cell(which, 'wait'),
          cell(which, 'pickup'),
          cell(which, 'toFirst'),
          fmt(median(rs.map((f) => f[stepKey])), 1),
          cell(which, 'between'),
          cell(which, 'end'),
        ].join(' | ');
      out.push(
        `| ${NAMES[world]} | ${part('aloneTimeline', 'aloneStepP50')} | ${part('timeline', 'stepP50')} |`,
      );
    }
    out.push(
      '',
      "The SDK's calls into each World, per run (calls × p50 of one call, ms; medians over rounds), alone and in the batch, the costliest first:",
      '',
    );
    for (const world of worlds) {
      const rs = rounds[workload][world].filter(Boolean);
      for (const phase of ['alone', 'batch']) {
        const names = [...new Set(rs.flatMap((f) => Object.keys(f.calls[phase])))];
        const rows = names
          .map((k) => {
            const of = (field) => median(rs.map((f) => f.calls[phase][k]?.[field] ?? 0));
            return { k, perRun: of('perRun'), p50: of('p50'), msPerRun: of('msPerRun') };
          })
          .sort((x, y) => y.msPerRun - x.msPerRun);
        const total = rows.reduce((x, y) => x + y.msPerRun, 0);
        out.push(
          `- ${NAMES[world]}, ${phase}: ${fmt(total, 1)} ms per run in calls; ${rows
            .map((r) => `${r.k} ${fmt(r.perRun, 1)} × ${fmt(r.p50, 2)}`)
            .join(', ')}`,
        );
      }
    }
    out.push(
      '',
      'Where the bytes go: bytes per run by table (with its indexes and TOAST) or folder, the largest first:',
      '',
    );
    for (const world of worlds) {
      const rs = rounds[workload][world].filter(Boolean);
      const names = [...new Set(rs.flatMap((f) => Object.keys(f.partsPerRun)))];
      const parts = names
        .map((k) => ({ k, b: median(rs.map((f) => f.partsPerRun[k] ?? 0)) }))
        .filter((p) => p.b >= 1)
        .sort((x, y) => y.b - x.b);
      out.push(`- ${NAMES[world]}: ${parts.map((p) => `${p.k} ${fmt(p.b, 0)}`).join(', ')}`);
    }
    const local = rounds[workload]['world-local'];
    if (local?.some(Boolean)) {
      const app = median(local.filter(Boolean).map((f) => f.apparentBytesPerRun));
      out.push(
        '',
        `world-local's bytes/run are blocks on disk (du); their apparent length (du -b): ${fmt(app)}`,
      );
    }
    out.push(
      '',
      'agentstate ÷ baseline, per round, median over rounds (runs/s: above 1 is better; the rest: below 1 is better):',
      '',
    );
    const pairs = [];
    for (const a of ['agentstate-sqlite', 'agentstate-sqlite-normal', 'agentstate-postgres']) {
      for (const b of ['world-local', 'world-postgres']) {
        if (worlds.includes(a) && worlds.includes(b)) pairs.push([a, b]);
      }
    }
    out.push(`| ratio | ${METRICS.map((m) => m[1]).join(' | ')} |`);
    out.push(`|---|${METRICS.map(() => '---:').join('|')}|`);
    for (const [a, b] of pairs) {
      const cells = METRICS.map(([k]) => {
        const xs = [];
        for (let r = 0; r < ROUNDS; r++) {
          const fa = rounds[workload][a][r];
          const fb = rounds[workload][b][r];
          if (fa && fb) xs.push(fa[k] / fb[k]);
        }
        return `${fmt(median(xs))}×`;
      });
      out.push(`| ${NAMES[a]} ÷ ${NAMES[b]} | ${cells.join(' | ')} |`);
    }
    out.push('');
  }
  if (failures.length > 0) out.push('Failures:', ...failures.map((f) => `- ${f}`), '');
  out.push(`total ${fmt((performance.now() - started) / 1000, 1)} s`);
  process.stdout.write(`${out.join('\n')}\n`);
  if (args.json) writeFileSync(args.json, `${JSON.stringify({ rounds, raw }, null, 2)}\n`);
  if (failures.length > 0) process.exitCode = 1;
}

function graphileVersion() {
  try {
    return JSON.parse(readFileSync(join(HERE, 'node_modules', 'graphile-worker', 'package.json'), 'utf8'))
      .version;
  } catch {
    return '?';
  }
}

await main();
