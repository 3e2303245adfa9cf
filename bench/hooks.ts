// `npm run bench -- --only hooks`: what a host pays for agentstate's hooks — `agentstate hook session-start`
// and `hook post-tool-use` (TodoWrite of 40 todos, one status changed each call, so each call writes) as
// processes, wall time p50/p95 and peak RSS next to bare `node -e 0` in the same run (interleaved, so the
// machine's noise falls on all three alike), and the SessionStart context's size at 10, 100 and 1,000 todos.
// Options: --calls N (default 30).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { CONTEXT_TOKENS, estimateTokens } from '../src/hosts/hooks/context.js';
import { runHook } from '../src/hosts/hooks/run.js';
import { openInstance } from '../src/instance/instance.js';

const { values: args } = parseArgs({ options: { calls: { type: 'string', default: '30' } } });
const CALLS = Math.max(5, Number(args.calls));
const CLI = new URL('../dist/cli/main.js', import.meta.url).pathname;
const tmp = mkdtempSync(join(tmpdir(), 'agentstate-bench-hooks-'));
const SESSION = 'b3nch000-1111-2222-3333-444455556666';

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};

/** A process's wall time (ms) and peak RSS (MiB, reported by the child itself at exit through fd 3). */
function timed(argv: string[], stdin: string): { ms: number; rssMiB: number } {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, ['--import', RSS, ...argv], {
    input: stdin,
    stdio: ['pipe', 'pipe', 'pipe', 'pipe'],
    encoding: 'utf8',
  });
  const ms = performance.now() - t0;
  if (r.status !== 0 || r.stderr) throw new Error(`${argv.join(' ')}: exit ${r.status} ${r.stderr}`);
  const rss = Number((r.output[3] as string | null)?.trim());
  return { ms, rssMiB: rss / 1024 };
}

// Writes the process's peak RSS (KiB) to fd 3 as it exits: the same few lines load in every measured process.
const RSS = join(tmp, 'rss.mjs');
writeFileSync(
  RSS,
  "import { writeSync } from 'node:fs';\nprocess.on('exit', () => { try { writeSync(3, String(process.resourceUsage().maxRSS)); } catch {} });\n",
);

async function main() {
  const dir = join(tmp, 'project', '.agentstate');
  const inst = await openInstance({ dir });
  const todos = (k: number) =>
    Array.from({ length: 40 }, (_, i) => ({
      content: `Todo ${i + 1}: ${['parse', 'test', 'review', 'ship'][i % 4]} src/module-${i}.ts`,
      status: i < k % 40 ? 'completed' : 'pending',
      activeForm: 'Working',
    }));
  const base = { session_id: SESSION, cwd: join(tmp, 'project'), transcript_path: join(tmp, 't.jsonl') };
  const post = (k: number) =>
    JSON.stringify({
      ...base,
      hook_event_name: 'PostToolUse',
      tool_name: 'TodoWrite',
      tool_input: { todos: todos(k) },
    });
  await runHook(inst, {
    event: 'post-tool-use',
    format: 'claude-code',
    session: SESSION,
    tool: { name: 'TodoWrite', input: { todos: todos(0) } },
  });
  await inst.close();
  const start = JSON.stringify({ ...base, hook_event_name: 'SessionStart', source: 'compact' });
  const hook = (event: string) => [CLI, 'hook', event, '--dir', dir];
  const rows: Record<string, Array<{ ms: number; rssMiB: number }>> = {
    'node -e 0 (bare)': [],
    'hook session-start': [],
    'hook post-tool-use (TodoWrite, writes)': [],
  };
  // Warm the file cache once, then interleave.
  timed(['-e', '0'], '');
  timed(hook('session-start'), start);
  for (let k = 1; k <= CALLS; k++) {
    rows['node -e 0 (bare)']!.push(timed(['-e', '0'], ''));
    rows['hook session-start']!.push(timed(hook('session-start'), start));
    rows['hook post-tool-use (TodoWrite, writes)']!.push(timed(hook('post-tool-use'), post(k)));
  }
  const bare = rows['node -e 0 (bare)']!.map((r) => r.ms);
  console.log(`\n### Hooks as processes (${CALLS} calls each, interleaved; node ${process.version})\n`);
  console.log('| process | p50 | p95 | p50 − bare node | peak RSS p50 |');
  console.log('|---|---|---|---|---|');
  for (const [name, xs] of Object.entries(rows)) {
    const ms = xs.map((x) => x.ms);
    const over = name.startsWith('node') ? '—' : `+${(pct(ms, 50) - pct(bare, 50)).toFixed(0)} ms`;
    console.log(
      `| ${name} | ${pct(ms, 50).toFixed(0)} ms | ${pct(ms, 95).toFixed(0)} ms | ${over} | ${pct(
        xs.map((x) => x.rssMiB),
        50,
      ).toFixed(0)} MiB |`,
    );
  }

  // The SessionStart context at size: every open todo listed while it fits the budget, then counted.
  console.log(
    `\n### SessionStart context size (budget ${CONTEXT_TOKENS} tokens, estimated as UTF-8 bytes / 3)\n`,
  );
  console.log(
    '| todos (¾ open) | context bytes | est. tokens | open todos listed by id | decisions listed |',
  );
  console.log('|---|---|---|---|---|');
  for (const n of [10, 100, 1000]) {
    const d = join(tmp, `size-${n}`);
    const i = await openInstance({ dir: d });
    const list = Array.from({ length: n }, (_, k) => ({
      content: `Implement step ${k + 1} of the migration in src/db/migrate-${k}.ts`,
      status: k % 4 === 0 ? 'completed' : 'pending',
      activeForm: 'Working',
    }));
    const p = { event: 'post-tool-use' as const, format: 'claude-code' as const, session: SESSION };
    await runHook(i, { ...p, tool: { name: 'TodoWrite', input: { todos: list } } });
    for (let k = 0; k < 5; k++) {
      await i.docs.apply({
        kind: 'workflow-sessions',
        id: `claude-${SESSION}`,
        operation: 'log-decision',
        args: {
          description: `Decision ${k}: keep the v${k} schema until its readers move`,
          type: 'architecture',
        },
      });
    }
    const out = await runHook(i, { ...p, event: 'session-start', source: 'compact' });
    const ctx = out.context!;
    const open = list.filter((t) => t.status !== 'completed').length;
    const listed = ctx.split('\n').filter((l) => /^\[[ ~]\] \d+ /.test(l)).length;
    const decisions = ctx.split('\n').filter((l) => l.startsWith('- [architecture]')).length;
    console.log(
      `| ${n} | ${Buffer.byteLength(ctx)} | ${estimateTokens(ctx)} | ${listed} of ${open} | ${decisions} of 5 |`,
    );
    await i.close();
  }
}

try {
  await main();
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
