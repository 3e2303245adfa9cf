// The crash test of the durable agent (plain node, exit code 0 when every check passes): run.mjs starts the
// agent's run with HANG_IN_TOOL_B=1, so tool B's first attempt stops before its side effect; this script
// SIGKILLs the process there (tool A done, tool B not), restarts run.mjs on the same store with its clock
// 6 minutes ahead (past the dead process's 5-minute lease on its queue message), and checks that the run
// completes with the model's final text, that tool A's and tool B's side effects happened exactly once each,
// that the model was asked three times in all (not again for what the log already had), and that
// `agentstate verify` finds the store's hash chain, with the run's events in it, intact.
//
//   node test.mjs [--keep]     (after `npx workflow build`; --keep leaves the store folder for a look)
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
/** The agentstate CLI of this checkout (the store the World writes is an ordinary agentstate instance). */
const cli = join(here, '..', '..', 'dist', 'cli', 'main.js');
/** The model's last answer (workflows/model.ts FINAL_TEXT). */
const FINAL_TEXT = 'Order 42 was refunded: 19.99 EUR are on their way back to the card.';
/** Past the World's queue lease (DEFAULT_DELIVERY_LEASE_MS, 5 minutes). */
const CLOCK_OFFSET_MS = 6 * 60_000;
/** How long a process may take before the test gives up on it. */
const STEP_TIMEOUT_MS = 90_000;

if (!existsSync(join(here, '.well-known', 'workflow', 'v1', 'flow.mjs'))) {
  console.error('the workflows are not built: run `npx workflow build` in examples/workflow-agent first');
  process.exit(2);
}
if (!existsSync(cli)) {
  console.error(`${cli} is missing: run \`npm run build\` at the repository root first`);
  process.exit(2);
}

const dir = mkdtempSync(join(tmpdir(), 'agentstate-workflow-agent-'));
const effectsFile = join(dir, 'effects.log');
let passed = 0;
let failed = 0;
function check(name, ok, detail = '') {
  if (ok) passed++;
  else failed++;
  console.log(`${ok ? 'ok' : 'not ok'} - ${name}${ok || !detail ? '' : `: ${detail}`}`);
}
function effects() {
  return existsSync(effectsFile) ? readFileSync(effectsFile, 'utf8').split('\n').filter(Boolean) : [];
}
const count = (lines, line) => lines.filter((l) => l === line).length;

/**
 * Runs run.mjs; `onLine(line, child)` sees each line it prints (and may kill it). Resolves with its exit
 * code, signal and lines.
 */
function runApp(args, env, onLine = () => {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(here, 'run.mjs'), '--dir', dir, ...args], {
      cwd: here,
      env: { ...process.env, EFFECTS_FILE: effectsFile, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const lines = [];
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(
        new Error(`run.mjs ${args.join(' ')} did not finish in ${STEP_TIMEOUT_MS} ms:\n${lines.join('\n')}`),
      );
    }, STEP_TIMEOUT_MS);
    createInterface({ input: child.stdout }).on('line', (line) => {
      lines.push(line);
      console.log(`  | ${line}`);
      onLine(line, child);
    });
    createInterface({ input: child.stderr }).on('line', (line) => console.log(`  ! ${line}`));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, lines });
    });
  });
}
const value = (lines, key) => lines.find((l) => l.startsWith(`${key} `))?.slice(key.length + 1);

try {
  // 1. The first process: runs until tool B's step has started, and is killed there.
  console.log('# first process (HANG_IN_TOOL_B=1), SIGKILLed inside tool B before its side effect');
  let effectsAtKill = [];
  const first = await runApp([], { HANG_IN_TOOL_B: '1' }, (line, child) => {
    if (line === 'tool B hanging') {
      effectsAtKill = effects();
      child.kill('SIGKILL');
    }
  });
  const runId = value(first.lines, 'run');
  check('the first process was killed by SIGKILL', first.signal === 'SIGKILL', `code ${first.code}`);
  check('it started a run', typeof runId === 'string' && runId.startsWith('wrun_'), String(runId));
  check(
    'at the kill: the model asked twice, tool A done, tool B not',
    JSON.stringify(effectsAtKill) === JSON.stringify(['model 1', 'A 42', 'model 2']),
    JSON.stringify(effectsAtKill),
  );

  // 2. The restart, "later": its store clock is past the dead process's lease, so it takes the message over.
  console.log(`# second process: the same store, its clock ${CLOCK_OFFSET_MS / 60_000} minutes ahead`);
  const second = await runApp(['--resume', runId], { CLOCK_OFFSET_MS: String(CLOCK_OFFSET_MS) });
  check('the second process exited 0', second.code === 0, `code ${second.code}, signal ${second.signal}`);
  check('the run completed', value(second.lines, 'status') === 'completed', value(second.lines, 'status'));
  const output = JSON.parse(value(second.lines, 'output') ?? 'null');
  check("the run's output is the model's final text", output?.text === FINAL_TEXT, JSON.stringify(output));
  check(
    'the agent called tool A, then tool B',
    JSON.stringify(output?.toolCalls) === JSON.stringify(['lookUpOrder', 'refundOrder']),
    JSON.stringify(output?.toolCalls),
  );
  check('the run stream carries the final text', value(second.lines, 'stream') === FINAL_TEXT);
  check('tool A did not run again', !second.lines.some((l) => l.startsWith('tool A')));
  check(
    "tool B's step ran again as its second attempt",
    second.lines.includes('tool B start attempt=2') && second.lines.includes('tool B done'),
  );

  // 3. The side effects: each tool's exactly once, and the model asked three times in all.
  const all = effects();
  check("tool A's side effect happened exactly once", count(all, 'A 42') === 1, JSON.stringify(all));
  check("tool B's side effect happened exactly once", count(all, 'B 42 19.99') === 1, JSON.stringify(all));
  check(
    'the model was asked three times, each once',
    JSON.stringify(all.filter((l) => l.startsWith('model'))) ===
      JSON.stringify(['model 1', 'model 2', 'model 3']),
    JSON.stringify(all),
  );

  // 4. The store: the run's events are in the instance's hash chain, and `agentstate verify` is clean.
  const events = spawnSync(
    process.execPath,
    [cli, 'events', '--dir', dir, '--stream', `wf_run:${runId}`, '--limit', '10000', '--json'],
    { encoding: 'utf8' },
  );
  const log = events.status === 0 ? JSON.parse(events.stdout).map((e) => e.data) : [];
  const of = (type, step) =>
    log.filter((e) => e.event_type === type && (!step || e.event_data?.stepName?.endsWith(`//${step}`)))
      .length;
  check(
    "the run's log: tool A started and completed once, tool B started twice and completed once",
    of('step_started', 'lookUpOrder') === 1 &&
      of('step_completed', 'lookUpOrder') === 1 &&
      of('step_started', 'refundOrder') === 2 &&
      of('step_completed', 'refundOrder') === 1,
    `events exit ${events.status} ${events.stderr}`,
  );
  check(
    "the run's log: three model calls completed, then run_completed",
    of('step_completed', 'doStreamStep') === 3 && log.at(-1)?.event_type === 'run_completed',
    JSON.stringify(log.map((e) => e.event_type)),
  );
  const verify = spawnSync(process.execPath, [cli, 'verify', '--dir', dir, '--json'], { encoding: 'utf8' });
  const report = verify.status === 0 ? JSON.parse(verify.stdout) : undefined;
  check(
    '`agentstate verify` is clean',
    verify.status === 0 && report?.ok === true && report.problem_count === 0,
    `exit ${verify.status}: ${verify.stdout}${verify.stderr}`,
  );
  if (report) console.log(`  | verify: ${report.events} events, head ${report.anchor}`);
} catch (err) {
  check('the test ran to its end', false, err?.stack ?? String(err));
} finally {
  if (process.argv.includes('--keep')) console.log(`# the store is kept in ${dir}`);
  else rmSync(dir, { recursive: true, force: true });
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
