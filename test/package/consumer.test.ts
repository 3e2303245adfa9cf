// The package as a stranger gets it: packed as it is published (scripts/pack.mjs: npm pack with the
// published manifest), installed into a fresh project, then imported, required, run as `npx agentstate`
// and type-checked from there (issue 11, "consumer test"; issue 23: the manifest, missing peers, node16).
import { execFile, execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/cli.js';
import { PG_URL, postgresForThisFile } from '../helpers/postgres.js';
import { tempDir } from '../helpers/tmp.js';

const run = promisify(execFile);
const dir = tempDir('agentstate-consumer-');
const app = join(dir, 'app');
const pgSchema = await postgresForThisFile();

/**
 * The environment of every child: the outer npm's script variables (npm_lifecycle_*, npm_package_*,
 * npm_config_local_prefix …, set when this runs under `npm test`) would point the inner npm at this
 * repository. Configuration that says where packages come from is kept.
 */
function childEnv(): NodeJS.ProcessEnv {
  const keep = /^npm_config_(cache|registry|userconfig|globalconfig|cafile|proxy|https_proxy|noproxy)$/i;
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (/^(npm_|INIT_CWD$|MF_|AGENTSTATE_)/i.test(k) && !keep.test(k)) continue;
    env[k] = v;
  }
  return { ...env, npm_config_update_notifier: 'false', npm_config_fund: 'false', npm_config_audit: 'false' };
}

function version(packageDir: string): string {
  return (JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')) as { version: string }).version;
}

const repoSqlite = join(ROOT, 'node_modules', 'better-sqlite3');
const appSqlite = join(app, 'node_modules', 'better-sqlite3');
let tarball = '';
let packed: string[] = [];
let manifest: Record<string, unknown> = {};
let withoutAddon = { code: 0, stderr: '' };

beforeAll(async () => {
  if (!existsSync(join(ROOT, 'dist', 'index.js')))
    throw new Error('dist/ is missing: run `npm run build` first');
  // --no-build: a build would empty dist/ while the other test files run the CLI from it.
  tarball = execFileSync(
    process.execPath,
    [join(ROOT, 'scripts', 'pack.mjs'), '--no-build', '--pack-destination', dir],
    { cwd: ROOT, env: childEnv(), encoding: 'utf8' },
  )
    .trim()
    .split('\n')
    .pop()!;
  packed = execFileSync('tar', ['-tzf', tarball], { encoding: 'utf8' })
    .split('\n')
    .filter(Boolean)
    .map((f) => f.replace(/^package\//, ''));
  manifest = JSON.parse(
    execFileSync('tar', ['-xzOf', tarball, 'package/package.json'], { encoding: 'utf8' }),
  );

  mkdirSync(app);
  writeFileSync(
    join(app, 'package.json'),
    JSON.stringify({
      name: 'consumer',
      private: true,
      // The repository's compiled addon is copied in below, so the installed driver must be its version.
      overrides: { 'better-sqlite3': version(repoSqlite) },
    }),
  );
  // --ignore-scripts: better-sqlite3's install script would try to download a prebuilt binary and
  // then compile for a minute or two; the addon this repository already built is copied instead.
  // --prefer-offline: the packages come from npm's cache when it has them (nothing else is changed).
  await run('npm', ['install', tarball, '--ignore-scripts', '--prefer-offline', '--no-audit', '--no-fund'], {
    cwd: app,
    env: childEnv(),
  });
  expect(version(appSqlite)).toBe(version(repoSqlite));
  // As a user whose npm skipped better-sqlite3's install script finds it, before the addon is copied.
  withoutAddon = await run(
    join(app, 'node_modules', '.bin', 'agentstate'),
    ['--dir', join(dir, 'inst-none'), 'init'],
    {
      cwd: app,
      env: childEnv(),
    },
  ).then(
    () => ({ code: 0, stderr: '' }),
    (err: { code: number; stderr: string }) => ({ code: err.code, stderr: err.stderr }),
  );
  const addon = join('build', 'Release', 'better_sqlite3.node');
  mkdirSync(join(appSqlite, 'build', 'Release'), { recursive: true });
  cpSync(join(repoSqlite, addon), join(appSqlite, addon));
}, 120_000);

/** What a consumer script prints: one embedded round trip, and one on PostgreSQL when the test has it. */
interface RoundTrips {
  postgresExport: string;
  migrations: number;
  sqlite: { enqueued: string; claimed: string; status: string };
  postgres?: { enqueued: string; claimed: string; status: string };
}

// The same program as ESM and as CommonJS: open an embedded instance, enqueue and claim one item; load
// the /postgres subpath (its migrations are files next to the compiled code); on PostgreSQL, the same
// round trip through `url`, which loads pg from the consumer's node_modules.
const BODY = `
  async function roundTrip(opts) {
    const inst = await openInstance(opts);
    try {
      const item = await inst.work.enqueue({ title: 'from a consumer' });
      const claimed = await inst.work.claim({ worker: 'w1', lease_ms: 30000 });
      return { enqueued: item.id, claimed: claimed && claimed.id, status: claimed && claimed.status };
    } finally {
      await inst.close();
    }
  }
  const out = { postgresExport: typeof openPostgresBackend, migrations: migrationNames().length };
  out.sqlite = await roundTrip({ dir: process.argv[2] });
  if (process.env.CONSUMER_PG_SCHEMA) {
    out.postgres = await roundTrip({
      dir: process.argv[2] + '-pg', host: 'consumer', name: process.argv[3],
      url: process.env.CONSUMER_PG_URL, schema: process.env.CONSUMER_PG_SCHEMA,
    });
  }
  console.log(JSON.stringify(out));
`;

async function consumer(file: string, name: string): Promise<{ out: RoundTrips; stderr: string }> {
  const env = { ...childEnv(), CONSUMER_PG_URL: PG_URL, CONSUMER_PG_SCHEMA: pgSchema ?? '' };
  const r = await run(process.execPath, [file, join(dir, `inst-${name}`), name], { cwd: app, env });
  return { out: JSON.parse(r.stdout) as RoundTrips, stderr: r.stderr };
}

function expectRoundTrips(out: RoundTrips): void {
  expect(out.postgresExport).toBe('function');
  expect(out.migrations).toBeGreaterThan(0);
  const trips = pgSchema ? [out.sqlite, out.postgres] : [out.sqlite];
  for (const t of trips) {
    expect(t?.enqueued).toMatch(/^wi_/);
    expect(t).toEqual({ enqueued: t?.enqueued, claimed: t?.enqueued, status: 'in_flight' });
  }
}

describe('the packed package, installed into a fresh project', () => {
  it('ships the built code, its sources, schemas, docs, skill, LICENSE and CHANGELOG, and no tests', () => {
    for (const f of [
      'package.json',
      'README.md',
      'LICENSE',
      'CHANGELOG.md',
      'dist/index.js',
      'dist/index.d.ts',
      'dist/index.d.ts.map',
      'dist/cli/main.js',
      'dist/backends/postgres/backend.js',
      'src/index.ts',
      'schemas/agent-run.schema.json',
      'skill/SKILL.md',
      'docs/api.md',
    ]) {
      expect(packed).toContain(f);
    }
    expect(packed.filter((f) => /^(test|bench|scripts|\.ci)\/|^dist\/demo\/|^src\/demo\//.test(f))).toEqual(
      [],
    );
    expect(packed.some((f) => f.endsWith('.sql') && f.startsWith('dist/backends/sqlite/migrations/'))).toBe(
      true,
    );
  });

  it("the published manifest holds what a consumer's tools read, and none of the repository's scripts or settings", async () => {
    const { PUBLISHED_FIELDS } = (await import(join(ROOT, 'scripts', 'pack.mjs'))) as {
      PUBLISHED_FIELDS: string[];
    };
    const repo = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as Record<string, unknown>;
    // prepare (builds dist/ and the addon in a clone; npm warns about it on every install), prepack, start,
    // the dev dependencies and npm's allowScripts mean nothing in a tarball.
    for (const key of ['scripts', 'devDependencies', 'allowScripts']) {
      expect(repo).toHaveProperty(key);
      expect(manifest).not.toHaveProperty(key);
    }
    expect(Object.keys(manifest).every((k) => PUBLISHED_FIELDS.includes(k))).toBe(true);
    for (const key of [
      'name',
      'version',
      'type',
      'engines',
      'bin',
      'exports',
      'dependencies',
      'peerDependencies',
    ]) {
      expect(manifest[key], key).toEqual(repo[key]);
    }
    // Every file the exports name is in the tarball, the CommonJS entries included.
    const targets = JSON.stringify(manifest.exports).match(/\.\/dist\/[^"]+/g) ?? [];
    expect(targets.length).toBeGreaterThan(12);
    for (const t of targets) expect(packed, t).toContain(t.slice(2));
  });

  it('publint and Are the Types Wrong find nothing wrong with the tarball', async () => {
    await run(process.execPath, [join(ROOT, 'scripts', 'check-package.mjs'), tarball], {
      cwd: ROOT,
      env: childEnv(),
    });
  });

  it('without the native addon (install scripts skipped), the CLI says how to fix it: exit 5', () => {
    expect(withoutAddon.code).toBe(5);
    expect(withoutAddon.stderr).toContain('npm rebuild better-sqlite3');
    expect(withoutAddon.stderr).toContain('STORAGE_UNAVAILABLE');
  });

  it('ESM: import of the package and of /postgres opens an instance, enqueues and claims', async () => {
    writeFileSync(
      join(app, 'esm.mjs'),
      `import { openInstance } from '@agentstate/store';\n` +
        `import { migrationNames, openPostgresBackend } from '@agentstate/store/postgres';\n${BODY}`,
    );
    const { out } = await consumer('esm.mjs', 'esm');
    expectRoundTrips(out);
  });

  it('CommonJS: require() of the package and of /postgres does the same (require(esm))', async () => {
    writeFileSync(
      join(app, 'cjs.cjs'),
      `const { openInstance } = require('@agentstate/store');\n` +
        `const { migrationNames, openPostgresBackend } = require('@agentstate/store/postgres');\n` +
        `(async () => {${BODY}})().catch((err) => { console.error(err); process.exit(1); });\n`,
    );
    const { out, stderr } = await consumer('cjs.cjs', 'cjs');
    expectRoundTrips(out);
    expect(stderr).not.toMatch(/ERR_REQUIRE_(ESM|ASYNC_MODULE)/);
  });

  it('without their optional peers, /langgraph says which packages to install (import and require); /openai-agents, /ai-sdk and /claude-agent-sdk load', async () => {
    expect(existsSync(join(app, 'node_modules', '@langchain'))).toBe(false);
    const install = 'npm install @langchain/langgraph @langchain/langgraph-checkpoint @langchain/core';
    writeFileSync(
      join(app, 'peers.mjs'),
      `const out = {};\n` +
        `await import('@agentstate/store/langgraph').catch((e) => { out.esm = { code: e.code, message: e.message }; });\n` +
        `const oa = await import('@agentstate/store/openai-agents');\n` +
        `out.openai = [typeof oa.AgentStateSession, typeof oa.durableAgent];\n` +
        `const ai = await import('@agentstate/store/ai-sdk');\n` +
        `out.ai = typeof ai.durableModel;\n` +
        `const cs = await import('@agentstate/store/claude-agent-sdk');\n` +
        `out.claude = typeof cs.AgentStateSessionStore;\n` +
        `console.log(JSON.stringify(out));\n`,
    );
    const esm = JSON.parse(
      (await run(process.execPath, ['peers.mjs'], { cwd: app, env: childEnv() })).stdout,
    );
    expect(esm.esm.code).toBe('ERR_MODULE_NOT_FOUND');
    expect(esm.esm.message).toContain(install);
    expect(esm.esm.message).toContain('@langchain/langgraph-checkpoint is not installed');
    expect(esm.openai).toEqual(['function', 'function']);
    // The AI SDK adapter imports nothing of the SDK at run time (types only).
    expect(esm.ai).toBe('function');
    expect(existsSync(join(app, 'node_modules', 'ai'))).toBe(false);
    // The Claude Agent SDK store imports nothing of the SDK: it loads without it, and is not a peer.
    expect(esm.claude).toBe('function');
    expect(existsSync(join(app, 'node_modules', '@anthropic-ai'))).toBe(false);
    writeFileSync(
      join(app, 'peers.cjs'),
      `const claude = typeof require('@agentstate/store/claude-agent-sdk').AgentStateSessionStore;\n` +
        `const ai = typeof require('@agentstate/store/ai-sdk').durableTools;\n` +
        `try { require('@agentstate/store/langgraph'); } catch (e) { console.log(JSON.stringify({ code: e.code, message: e.message, claude, ai })); }\n`,
    );
    const cjs = JSON.parse(
      (await run(process.execPath, ['peers.cjs'], { cwd: app, env: childEnv() })).stdout,
    );
    expect(cjs.code).toBe('ERR_MODULE_NOT_FOUND');
    expect(cjs.message).toContain(install);
    expect(cjs.claude).toBe('function');
    expect(cjs.ai).toBe('function');
  });

  it('the ESM entry of /langgraph re-exports every runtime export of the adapter (with its peers, here in the repository)', async () => {
    const entry = await import(join(ROOT, 'dist', 'adapters', 'langgraph', 'entry.js'));
    const index = await import(join(ROOT, 'dist', 'adapters', 'langgraph', 'index.js'));
    expect(Object.keys(entry).sort()).toEqual(Object.keys(index).sort());
    expect(entry.AgentStateSaver).toBe(index.AgentStateSaver);
  });

  it('npx agentstate --help in the project runs our bin, not the unrelated unscoped package', async () => {
    const link = resolve(
      join(app, 'node_modules', '.bin'),
      readlinkSync(join(app, 'node_modules', '.bin', 'agentstate')),
    );
    expect(link).toBe(join(app, 'node_modules', '@agentstate', 'store', 'dist', 'cli', 'main.js'));
    // --yes=false: never offer to download a package named agentstate (without a TTY npx would just do it).
    const r = await run('npx', ['--yes=false', 'agentstate', '--help'], { cwd: app, env: childEnv() });
    expect(r.stdout).toMatch(/^Usage: agentstate /m);
    expect(r.stdout).toContain('Durable, versioned, conflict-safe state for AI agents');
  });

  it('/mcp imports, and `agentstate mcp` from the installed bin answers initialize and tools/list on stdio', async () => {
    writeFileSync(
      join(app, 'mcp.mjs'),
      `import { createAgentStateMcp, DEFAULT_TOOLS } from '@agentstate/store/mcp';\n` +
        `console.log(JSON.stringify({ factory: typeof createAgentStateMcp, tools: DEFAULT_TOOLS.length }));\n`,
    );
    const imported = await run(process.execPath, ['mcp.mjs'], { cwd: app, env: childEnv() });
    expect(JSON.parse(imported.stdout)).toEqual({ factory: 'function', tools: 10 });
    const bin = join(app, 'node_modules', '.bin', 'agentstate');
    const inst = join(dir, 'inst-mcp');
    const lines = [
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: {
          protocolVersion: '2025-06-18',
          capabilities: {},
          clientInfo: { name: 'consumer', version: '1' },
        },
      },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 2, method: 'tools/list' },
    ];
    const out = execFileSync(bin, ['--dir', inst, 'mcp', '--init'], {
      cwd: app,
      env: childEnv(),
      input: `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`,
      encoding: 'utf8',
      timeout: 30_000,
    });
    const replies = out
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { id: number; result: Record<string, unknown> });
    expect(replies.find((r) => r.id === 1)?.result.serverInfo).toMatchObject({ name: 'agentstate' });
    expect(replies.find((r) => r.id === 2)?.result.tools).toHaveLength(10);
  });

  it("README's library example runs as written", async () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const example = [...readme.matchAll(/```ts[^\n]*\n([\s\S]*?)```/g)]
      .map((m) => m[1]!)
      .find((b) => b.includes("from '@agentstate/store'"));
    expect(example).toBeDefined();
    writeFileSync(join(app, 'readme.mjs'), example!);
    // It opens ~/.config/laptop/agents/planner: a home of its own keeps it out of the user's.
    const home = join(dir, 'home');
    await run(process.execPath, ['readme.mjs'], {
      cwd: app,
      env: { ...childEnv(), HOME: home, XDG_CONFIG_HOME: join(home, '.config') },
    });
    expect(existsSync(join(home, '.config', 'laptop', 'agents', 'planner', 'state.sqlite'))).toBe(true);
  });

  it('the bundle scripts run under Bun from the installed package (they run its shipped sources)', async () => {
    const scripts = join(app, 'node_modules', '@agentstate', 'store', 'skill', 'scripts');
    const bun = (workflow: string, payload = '') =>
      run(join(ROOT, 'node_modules', '.bin', 'bun'), [join(scripts, `${workflow}.ts`)], {
        cwd: app,
        env: { ...childEnv(), MF_INSTANCE_DIR: join(dir, 'inst-bun'), MF_TRIGGER_PAYLOAD_JSON: payload },
      });
    // ScaffoldFolders makes the instance (no other workflow creates one).
    expect(JSON.parse((await bun('ScaffoldFolders')).stdout)).toMatchObject({ name: 'inst-bun' });
    const r = await bun('EnqueueWorkItem', '{"title":"triage"}');
    expect(JSON.parse(r.stdout)).toMatchObject({ title: 'triage', status: 'pending' });
  });

  // A typed use of the API: a @ts-expect-error proves the types are real (with `any` it would be unused).
  const USAGE = `
import { type ErrorCode, isAgentStateError, openInstance, type WorkItem } from '@agentstate/store';
import { openPostgresBackend, type PostgresOptions } from '@agentstate/store/postgres';

export async function demo(dir: string): Promise<WorkItem | null> {
  const inst = await openInstance({ dir });
  try {
    await inst.work.enqueue({ title: 'typed', priority: 5 });
    // @ts-expect-error priority is a number
    await inst.work.enqueue({ title: 'typed', priority: 'high' });
    return await inst.work.claim({ worker: 'w1', lease_ms: 30_000 });
  } catch (err) {
    if (isAgentStateError(err)) {
      const code: ErrorCode = err.code;
      throw new Error(code);
    }
    throw err;
  } finally {
    await inst.close();
  }
}

const options: PostgresOptions = { url: 'postgres://localhost/db', instance: 'host/name' };
export const open: (o: PostgresOptions) => Promise<unknown> = openPostgresBackend;
export { options };
`;

  // Our declarations are type-checked under node16, the strictest, against the Node types a consumer has
  // (ESM, and CommonJS through the "require" entries' declarations, which were TS1479 on every import); the
  // other modes check that the usage file resolves and types the same.
  // The ESM (.mts) and CommonJS (.cts) usage files under node16 are one project: one tsc run type-checks both,
  // and our declarations once.
  it.each([
    [
      'node16, from ESM and from CommonJS',
      { module: 'node16', moduleResolution: 'node16', skipLibCheck: false },
      ['usage.mts', 'usage.cts'],
    ],
    ['bundler', { module: 'esnext', moduleResolution: 'bundler', skipLibCheck: true }, ['usage.ts']],
    // CommonJS code that imports the package: TypeScript >= 5.8 types require(esm) under nodenext.
    [
      'nodenext, from CommonJS',
      { module: 'nodenext', moduleResolution: 'nodenext', skipLibCheck: true },
      ['usage.cts'],
    ],
  ])('tsc --noEmit of a typed usage file under moduleResolution %s', async (name, options, files) => {
    const folder = join(app, `ts-${name.replace(/\W+/g, '-')}`);
    mkdirSync(folder, { recursive: true });
    for (const file of files) writeFileSync(join(folder, file), USAGE);
    writeFileSync(
      join(folder, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          ...options,
          target: 'es2022',
          strict: true,
          noEmit: true,
          types: ['node'],
          typeRoots: [join(ROOT, 'node_modules', '@types')],
        },
        files,
      }),
    );
    const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
    const r = await run(process.execPath, [tsc, '-p', folder], { cwd: folder, env: childEnv() }).catch(
      (err: { stdout?: string; message: string }) => {
        throw new Error(`tsc failed under ${name}:\n${err.stdout ?? err.message}`);
      },
    );
    expect(r.stdout).toBe('');
  });
});
