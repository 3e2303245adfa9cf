// `agentstate work`: the worker runtime from the command line, as a real process. --exec runs a command per
// item with the bundle's MF_* contract (a large payload through a file), exit 0 = done with its JSON stdout,
// non-zero = failed with the tail of stderr, stdout past the limits a refused result; --handlers loads an ES
// or a CommonJS module; SIGTERM stops gracefully (the queued items released at once, the running one finished
// and committed, exit 0) and, after the grace, ends each command's whole process group; off a terminal a
// progress line goes to stderr unless --quiet. Every wait is for a condition (a file the handler writes, the
// store's state, a line on stderr, a process gone), never for a length of time.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { workProgress } from '../../src/cli/worker-command.js';
import type { WorkItem } from '../../src/core/types.js';
import { openInstance } from '../../src/instance/instance.js';
import { runOperation } from '../../src/service/invoke.js';
import { CLI, cleanEnv, runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';
import { deafProcess, killLeftovers, pidIn, processGone } from '../worker/processes.js';

const root = tempDir('agentstate-work-');
let n = 0;

/** A fresh instance with `items` enqueued; its CLI flags. */
async function seeded(items: Array<{ title: string; kind: string; payload?: unknown }>) {
  const dir = join(root, `i${++n}`);
  const inst = await openInstance({ dir });
  const ids: string[] = [];
  for (const i of items) ids.push((await inst.work.enqueue(i as never)).id);
  await inst.close();
  return { dir, ids, args: ['--dir', dir] };
}

/** `agentstate work` as a process of its own (stderr a pipe, not a terminal), its stderr so far, its exit. */
function startWork(args: string[]) {
  const child = spawn(process.execPath, [CLI, ...args], { env: cleanEnv() });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  const exited = new Promise<number | null>((r) => child.on('close', (code) => r(code)));
  return { child, exited, stdout: () => stdout, stderr: () => stderr };
}

async function items(dir: string): Promise<Map<string, WorkItem>> {
  const inst = await openInstance({ dir });
  try {
    return new Map((await inst.work.list({ limit: 1000 })).map((i) => [i.id, i]));
  } finally {
    await inst.close();
  }
}

describe('agentstate work', () => {
  it('--exec: the MF_* contract, JSON stdout as the result, a failure with the tail of stderr', async () => {
    const big = 'é'.repeat(40_000); // 80 KB of UTF-8: over the environment limit, so a file.
    const s = await seeded([
      { title: 'one', kind: 'sh', payload: { n: 1 } },
      { title: 'two', kind: 'sh', payload: { n: 2, fail: 3 } },
      { title: 'final', kind: 'sh', payload: { fail: 100 } },
      { title: 'limited', kind: 'sh', payload: { fail: 75 } },
      { title: 'big', kind: 'sh', payload: { big } },
      { title: 'other', kind: 'py', payload: {} },
    ]);
    const start = Date.now();
    const script = join(root, 'handler.mjs');
    writeFileSync(
      script,
      `import { readFileSync } from 'node:fs';
const text = process.env.MF_TRIGGER_PAYLOAD_JSON ?? readFileSync(process.env.MF_TRIGGER_PAYLOAD_FILE, 'utf8');
const p = JSON.parse(text);
if (p.fail === 75) { console.log(JSON.stringify({ retry_after_ms: 7200000 })); process.exit(75); }
if (p.fail) { console.error('some noise\\nthe real reason'); process.exit(p.fail); }
console.log(JSON.stringify({ via: process.env.MF_TRIGGER_PAYLOAD_JSON ? 'env' : 'file', len: (p.big ?? '').length,
  item: process.env.AGENTSTATE_ITEM_ID, attempt: process.env.AGENTSTATE_ATTEMPT, dir: process.env.MF_INSTANCE_DIR }));
`,
    );
    const r = runCli([
      ...s.args,
      '--json',
      'work',
      '--exec',
      `"${process.execPath}" "${script}"`,
      '-k',
      'sh',
      '-c',
      '2',
      '--drain',
      '--poll',
      '10ms',
      '--retry-base',
      '1h',
      '--retry-max',
      '2h',
    ]);
    const end = Date.now();
    expect(r.code, r.stderr).toBe(0);
    expect(r.json).toMatchObject({ done: 2, failed: 1, retrying: 2, lost: 0 });
    const all = await items(s.dir);
    const [one, two, final, limited, bigItem, other] = s.ids.map((id) => all.get(id)!);
    expect(one).toMatchObject({
      status: 'done',
      result: { via: 'env', item: one!.id, attempt: '1', dir: s.dir },
    });
    // A failure: tried again after the backoff (1 h, less up to half of it as jitter); exit 100 is final;
    // exit 75 names its own retry time on stdout.
    expect(two).toMatchObject({
      status: 'pending',
      attempts: 1,
      error: 'exit 3: some noise\nthe real reason',
    });
    expect(Date.parse(two!.not_before!)).toBeGreaterThanOrEqual(start + 1_800_000);
    expect(Date.parse(two!.not_before!)).toBeLessThanOrEqual(end + 3_600_000);
    expect(final).toMatchObject({
      status: 'failed',
      attempts: 1,
      error: 'exit 100: some noise\nthe real reason',
    });
    expect(limited).toMatchObject({ status: 'pending', attempts: 1, error: 'exit 75' });
    expect(Date.parse(limited!.not_before!)).toBeGreaterThanOrEqual(start + 7_200_000);
    expect(Date.parse(limited!.not_before!)).toBeLessThanOrEqual(end + 7_200_000);
    expect(bigItem).toMatchObject({ status: 'done', result: { via: 'file', len: 40_000 } });
    expect(other).toMatchObject({ status: 'pending', attempts: 0 });
  });

  it("--exec a bundle workflow: each item's payload is the workflow's payload, on the same instance", async () => {
    const s = await seeded([
      { title: 'log it', kind: 'note', payload: { type: 'note_taken', data: { text: 'ü|+ 漢字' } } },
      // Refused by the workflow (a system event type): its JSON error on stderr fails the attempt.
      { title: 'bad', kind: 'note', payload: { type: 'work_item_enqueued' } },
    ]);
    const r = runCli([
      ...s.args,
      '--json',
      'work',
      '--exec',
      `"${process.execPath}" "${CLI}" AppendEvent`,
      '-k',
      'note',
      '--drain',
      '--poll',
      '10ms',
      '--no-retry',
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json).toMatchObject({ done: 1, failed: 1 });
    const all = await items(s.dir);
    const done = all.get(s.ids[0]!)!;
    // The workflow's output (the stored event) is the item's result; MF_INSTANCE_DIR pointed it here.
    expect(done).toMatchObject({
      status: 'done',
      result: { type: 'note_taken', data: { text: 'ü|+ 漢字' } },
    });
    expect(all.get(s.ids[1]!)).toMatchObject({
      status: 'failed',
      error: expect.stringMatching(/^exit 2: .*INVALID_INPUT/s),
    });
    const inst = await openInstance({ dir: s.dir });
    try {
      const notes = (await inst.events.read({ type: 'note_taken' })).map((e) => e.data);
      expect(notes).toEqual([{ text: 'ü|+ 漢字' }]);
      expect((await inst.events.verify()).ok).toBe(true);
    } finally {
      await inst.close();
    }
  });

  it('--schedules --drain: one scheduler pass enqueues the due tick, and the worker runs it', async () => {
    const dir = join(root, `i${++n}`);
    // Added an hour ago (the instance's clock then): its newest tick is due now.
    const hourAgo = Date.now() - 3_600_000;
    const inst = await openInstance({ dir, clock: () => hourAgo });
    try {
      await runOperation(inst, 'schedule_add', {
        name: 'sweep',
        cron: '*/5 * * * *',
        title: 'sweep',
        kind: 'sweep',
      });
    } finally {
      await inst.close();
    }
    const r = runCli([
      '--dir',
      dir,
      '--json',
      'work',
      '--exec',
      'echo \'{"swept":true}\'',
      '-k',
      'sweep',
      '--schedules',
      '--drain',
      '--poll',
      '10ms',
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json).toMatchObject({ done: 1, failed: 0 });
    const [item] = [...(await items(dir)).values()];
    expect(item).toMatchObject({ status: 'done', kind: 'sweep', result: { swept: true } });
    expect(item!.idempotency_key).toMatch(/^schedule:sweep@\d{4}-\d{2}-\d{2}T\d{2}:\d[05]:00\.000Z$/);
  });

  it('--handlers: an ES module of handlers by kind', async () => {
    const s = await seeded([
      { title: 'a', kind: 'double', payload: { x: 21 } },
      { title: 'b', kind: 'double', payload: { x: 2 } },
    ]);
    const mod = join(root, 'handlers.mjs');
    writeFileSync(
      mod,
      "export default { double: async (item, ctx) => { ctx.log('doubling', { x: item.payload.x }); return { y: item.payload.x * 2 }; } };\n",
    );
    const r = runCli([...s.args, 'work', '--handlers', mod, '--drain', '--poll', '10ms']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/: 2 done, 0 failed/);
    // ctx.log: one stderr line per call, naming the item.
    expect(r.stderr).toContain(`${s.ids[0]} doubling {"x":21}`);
    expect(r.stderr).toContain(`${s.ids[1]} doubling {"x":2}`);
    const all = await items(s.dir);
    expect(s.ids.map((id) => all.get(id)?.result)).toEqual([{ y: 42 }, { y: 4 }]);
  });

  it('SIGTERM: queued items released at once, the running handler finishes and commits, exit 0', async () => {
    const s = await seeded([1, 2, 3].map((k) => ({ title: `t${k}`, kind: 'slow' })));
    const marks = join(root, `marks${n}`);
    const go = join(marks, 'go');
    const cmd = `mkdir -p "${marks}" && touch "${marks}/started-$AGENTSTATE_ITEM_ID" && while [ ! -f "${go}" ]; do sleep 0.02; done; echo '{"finished":true}'`;
    const child = spawn(
      process.execPath,
      [CLI, ...s.args, 'work', '--exec', cmd, '--prefetch', '3', '--grace', '1h', '--lease', '1h'],
      { env: cleanEnv() },
    );
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const exited = new Promise<number | null>((r) => child.on('close', (code) => r(code)));
    const started = () =>
      existsSync(marks) ? readdirSync(marks).filter((f) => f.startsWith('started-')) : [];
    await expect.poll(() => started().length, { timeout: 30_000 }).toBe(1);
    const running = started()[0]!.slice('started-'.length);
    child.kill('SIGTERM');
    // The two never started go back to the queue while the running one still runs.
    await expect
      .poll(async () => [...(await items(s.dir)).values()].filter((i) => i.status === 'pending').length, {
        timeout: 30_000,
      })
      .toBe(2);
    expect((await items(s.dir)).get(running)?.status).toBe('in_flight');
    writeFileSync(go, '');
    expect(await exited, stderr).toBe(0);
    const all = await items(s.dir);
    expect(all.get(running)).toMatchObject({ status: 'done', result: { finished: true } });
    expect(started()).toHaveLength(1);
  });

  it('SIGTERM after the grace ends each command with all it started: nothing is left running when work exits', async () => {
    const s = await seeded([{ title: 'stubborn', kind: 'sh' }]);
    const dir = join(root, `group${n}`);
    mkdirSync(dir);
    const shell = join(dir, 'shell.pid');
    const child = join(dir, 'child.pid');
    // The shell traps SIGTERM and runs on; its child ignores SIGTERM and holds the shell's stdout open.
    const command = `trap 'echo got TERM >&2' TERM; echo $$ > "${shell}.tmp" && mv "${shell}.tmp" "${shell}"; ${deafProcess(child)} & while :; do sleep 0.05; done`;
    const w = startWork([...s.args, '--json', 'work', '--exec', command, '--grace', '1s', '--lease', '1h']);
    const pids: Array<number | undefined> = [];
    try {
      await expect
        .poll(() => pidIn(shell) !== undefined && pidIn(child) !== undefined, { timeout: 30_000 })
        .toBe(true);
      pids.push(pidIn(shell), pidIn(child));
      w.child.kill('SIGTERM');
      // Bounded, so a worker that never exits fails here and its leftovers are killed below.
      let code: number | null | undefined;
      void w.exited.then((c) => {
        code = c;
      });
      await expect.poll(() => code, { timeout: 60_000 }).not.toBeUndefined();
      expect(code, w.stderr()).toBe(0);
      for (const pid of pids) await expect.poll(() => processGone(pid!), { timeout: 30_000 }).toBe(true);
      expect(JSON.parse(w.stdout())).toMatchObject({ done: 0, failed: 0, released: 1 });
      expect((await items(s.dir)).get(s.ids[0]!)).toMatchObject({
        status: 'pending',
        attempts: 1,
        lease_owner: null,
      });
    } finally {
      killLeftovers([...pids, w.child.pid]);
    }
  }, 120_000);

  it('--exec: a result over the limits, or that JSON cannot carry, fails its item, not retried; 50 MB of JSON on stdout is not read whole', async () => {
    const s = await seeded([
      { title: 'huge', kind: 'sh', payload: { mib: 50 } },
      { title: 'big', kind: 'sh', payload: { mib: 2 } },
      { title: 'overflow', kind: 'sh', payload: { mib: 0 } },
    ]);
    const script = join(root, 'big-json.mjs');
    writeFileSync(
      script,
      `const { mib } = JSON.parse(process.env.MF_TRIGGER_PAYLOAD_JSON);
// The store's JSON rule holds for a command's result too: 1e400 parses to Infinity.
if (mib === 0) { process.stdout.write('{"n":1e400}'); process.exit(0); }
const chunk = '1,'.repeat(1 << 19); // 1 MiB of array entries
process.stdout.write('[');
for (let i = 0; i < mib; i++) process.stdout.write(chunk);
process.stdout.write('1]');
`,
    );
    const r = runCli([...s.args, '--json', 'work', '--exec', `"${process.execPath}" "${script}"`, '--drain']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json).toMatchObject({ done: 0, failed: 3, retrying: 0 });
    const all = await items(s.dir);
    expect(all.get(s.ids[0]!)).toMatchObject({
      status: 'failed',
      attempts: 1,
      result: null,
      error: expect.stringMatching(/^result refused: stdout is larger than the 4194304 byte limit/),
    });
    expect(all.get(s.ids[1]!)).toMatchObject({
      status: 'failed',
      attempts: 1,
      result: null,
      error: expect.stringMatching(/^result refused: resolve: result is larger than the 1048576 byte limit/),
    });
    expect(all.get(s.ids[2]!)).toMatchObject({
      status: 'failed',
      attempts: 1,
      result: null,
      error: expect.stringMatching(
        /^result refused: resolve: result at \/n holds Infinity, which JSON cannot carry/,
      ),
    });
  });

  it('--handlers in a CommonJS project (npm init -y): module.exports loads; an ES module there is refused with what to do', async () => {
    const s = await seeded([{ title: 'a', kind: 'double', payload: { x: 21 } }]);
    const project = join(root, `project${n}`);
    mkdirSync(project);
    // What `npm init -y` writes (npm 11).
    writeFileSync(
      join(project, 'package.json'),
      `${JSON.stringify(
        {
          name: 'project',
          version: '1.0.0',
          description: '',
          main: 'index.js',
          scripts: { test: 'echo "Error: no test specified" && exit 1' },
          keywords: [],
          author: '',
          license: 'ISC',
          type: 'commonjs',
        },
        null,
        2,
      )}\n`,
    );
    const file = join(project, 'handlers.js');
    writeFileSync(file, 'export default { double: async (item) => ({ y: item.payload.x * 2 }) };\n');
    const refused = runCli([...s.args, 'work', '--handlers', file, '--drain']);
    expect(refused.code, refused.stderr).toBe(2);
    // One line, no stack trace and no warning of Node's: what is wrong and what to do.
    expect(refused.stderr).toMatch(
      /^agentstate: --handlers \S+handlers\.js: it is an ES module .*: name it handlers\.mjs, or set "type": "module" in its package\.json, or write module\.exports = .* \[INVALID_INPUT\]\n$/,
    );
    expect((await items(s.dir)).get(s.ids[0]!)).toMatchObject({ status: 'pending', attempts: 0 });
    writeFileSync(
      file,
      "module.exports = { double: async (item, ctx) => { ctx.log('doubling'); return { y: item.payload.x * 2 }; } };\n",
    );
    const r = runCli([...s.args, 'work', '--handlers', file, '--drain', '--poll', '10ms']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(`${s.ids[0]} doubling`);
    expect((await items(s.dir)).get(s.ids[0]!)).toMatchObject({ status: 'done', result: { y: 42 } });
  });

  it('off a terminal: a progress line on stderr when something changed; --quiet: none', async () => {
    const loudItems = await seeded([{ title: 'gated', kind: 'g' }]);
    const quietItems = await seeded([{ title: 'gated', kind: 'g' }]);
    const marks = join(root, `progress${n}`);
    mkdirSync(marks);
    const gate = join(marks, 'go');
    const cmd = `touch "${marks}/started-$AGENTSTATE_ITEM_ID"; while [ ! -f "${gate}" ]; do sleep 0.02; done; echo '{"ok":true}'`;
    const flags = ['work', '--exec', cmd, '--drain', '--poll', '10ms', '--progress-interval', '10ms'];
    const loud = startWork([...loudItems.args, ...flags]);
    const quiet = startWork([...quietItems.args, ...flags, '--quiet']);
    try {
      await expect
        .poll(() => existsSync(join(marks, `started-${quietItems.ids[0]}`)), { timeout: 30_000 })
        .toBe(true);
      // While its handler runs, the worker holds the item.
      await expect
        .poll(() => loud.stderr(), { timeout: 30_000 })
        .toMatch(/^work: 0 done, 0 failed, 0 to retry, 1 held$/m);
      writeFileSync(gate, '');
      expect(await loud.exited, loud.stderr()).toBe(0);
      expect(await quiet.exited, quiet.stderr()).toBe(0);
      // Each line says something new.
      const lines = loud.stderr().split('\n').slice(0, -1);
      for (const line of lines) expect(line).toMatch(/^work: \d+ done, 0 failed, 0 to retry, [01] held$/);
      expect(new Set(lines).size).toBe(lines.length);
      expect(quiet.stderr()).toBe('');
      for (const w of [loud, quiet]) expect(w.stdout()).toMatch(/: 1 done, 0 failed\n$/);
    } finally {
      writeFileSync(gate, '');
      killLeftovers([loud.child.pid, quiet.child.pid]);
    }
  });

  it('attempts read as started and left: an attempt handed back leaves the number left as it was', async () => {
    const s = await seeded([{ title: 'handed back', kind: 'k' }]);
    const id = s.ids[0]!;
    const line = (args: string[]) => {
      const r = runCli([...s.args, ...args]);
      expect(r.code, r.stderr).toBe(0);
      return r.stdout.split('\n')[0]!;
    };
    expect(line(['claim', '-w', 'w1'])).toMatch(/ owner=w1 attempt=1 \(2 left after it\) lease=/);
    // Handed back without spending the attempt (what a stop does): still 3 to go, as before the claim.
    expect(line(['release', id, '-w', 'w1'])).toMatch(/ attempts=1 \(3 left\)$/);
    expect(line(['claim', '-w', 'w2'])).toMatch(/ owner=w2 attempt=2 \(2 left after it\) lease=/);
    expect(line(['release', id, '-w', 'w2'])).toMatch(/ attempts=2 \(3 left\)$/);
    expect(line(['list'])).toMatch(/ attempts=2 \(3 left\)$/);
    line(['claim', '-w', 'w3']);
    // Finished: nothing left to show.
    expect(line(['resolve', id, 'failed', '-w', 'w3', '-e', 'no'])).toMatch(/ attempts=3 {2}error="no"$/);
    // --json keeps its fields.
    expect(runCli([...s.args, '--json', 'get', id]).json).toMatchObject({ attempts: 3, max_attempts: 5 });
  });

  it.for([
    ['neither --handlers nor --exec', ['work']],
    ['both', ['work', '--exec', 'true', '--handlers', 'x.mjs']],
    ['a module that does not exist', ['work', '--handlers', '/nonexistent/h.mjs']],
    ['a module with no handlers', ['work', '--handlers', 'EMPTY']],
    ['concurrency 0', ['work', '--exec', 'true', '-c', '0']],
    ['a lease without a unit', ['work', '--exec', 'true', '--lease', '30']],
    ['a retry delay without a unit', ['work', '--exec', 'true', '--retry-base', '5']],
    ['max attempts 0', ['work', '--exec', 'true', '--max-attempts', '0']],
  ] as Array<[string, string[]]>)('refuses %s with exit 2 and writes nothing', async ([, args]) => {
    const s = await seeded([{ title: 'untouched', kind: 'k' }]);
    const empty = join(root, 'empty.mjs');
    writeFileSync(empty, 'export const version = 1;\n');
    const r = runCli([...s.args, ...args.map((a) => (a === 'EMPTY' ? empty : a))]);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/^agentstate: .+ \[INVALID_INPUT\]\n$/);
    expect((await items(s.dir)).get(s.ids[0]!)).toMatchObject({ status: 'pending', attempts: 0 });
  });
});

describe('workProgress: the progress of agentstate work on stderr', () => {
  const line = { now: 'work: 0 done, 0 failed, 0 to retry, 1 held' };
  /** An interval the test runs by hand. */
  function manual() {
    const timer = { tick: undefined as (() => void) | undefined, ms: 0, cancelled: false };
    const every = (fn: () => void, ms: number) => {
      timer.tick = fn;
      timer.ms = ms;
      return () => {
        timer.cancelled = true;
      };
    };
    return { timer, every };
  }

  it('off a terminal: a line at an interval when the line changed, never the same one twice', () => {
    const { timer, every } = manual();
    const written: string[] = [];
    const p = workProgress({
      mode: 'lines',
      intervalMs: 5_000,
      line: () => line.now,
      write: (t) => written.push(t),
      every,
    });
    expect(timer.ms).toBe(5_000);
    p.changed();
    expect(written).toEqual([]);
    timer.tick!();
    timer.tick!();
    expect(written).toEqual(['work: 0 done, 0 failed, 0 to retry, 1 held\n']);
    line.now = 'work: 1 done, 0 failed, 0 to retry, 0 held';
    timer.tick!();
    expect(written).toHaveLength(2);
    expect(written[1]).toBe('work: 1 done, 0 failed, 0 to retry, 0 held\n');
    p.stop();
    expect(timer.cancelled).toBe(true);
  });

  it('quiet: nothing, at any interval or change; on a terminal: the line redrawn in place at each change', () => {
    const { timer, every } = manual();
    const written: string[] = [];
    const quiet = workProgress({
      mode: 'quiet',
      intervalMs: 1,
      line: () => line.now,
      write: (t) => written.push(t),
      every,
    });
    quiet.changed();
    quiet.stop();
    expect(timer.tick).toBeUndefined();
    expect(written).toEqual([]);
    const tty = workProgress({
      mode: 'tty',
      intervalMs: 1,
      line: () => line.now,
      write: (t) => written.push(t),
      every,
    });
    tty.changed();
    tty.stop();
    expect(written).toEqual([`\r${line.now}\x1b[K`, '\r\x1b[K']);
  });
});
