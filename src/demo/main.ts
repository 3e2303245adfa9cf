// `npm start`: a short live demo of agentstate. A planner enqueues a small release pipeline with
// dependencies; four worker processes (src/demo/worker.ts) share the queue through one embedded
// SQLite instance; the demo kills one of them mid-task and its expired lease is reclaimed by another.
import { type ChildProcess, fork } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { EventRecord } from '../core/types.js';
import { openInstance } from '../instance/instance.js';
import { scaffold } from '../instance/scaffold.js';
import { regenerateDashboard } from '../reports/dashboard.js';
import { retrospective } from '../reports/retro.js';
import type { WorkerMessage } from './worker.js';

const DEMO_ROOT = resolve('.agentstate-demo');
const INSTANCE_DIR = join(DEMO_ROOT, 'release-pipeline');
const WORKERS = 4;
const LEASE_MS = 2000;
const KILL_ON_CLAIM = 2; // the first worker to claim its 2nd item is killed while holding it
const TIMEOUT_MS = 120_000; // generous: a slow, busy machine must not fail the demo

/** The release pipeline: priority, simulated work time, and which steps must be done first. */
// biome-ignore format: one line per step reads like a table
const PLAN = [
  { key: 'fetch',   kind: 'fetch',   title: 'fetch sources',     prio: 100, ms: 800,  after: [] },
  { key: 'core',    kind: 'compile', title: 'compile core',      prio: 80,  ms: 1400, after: ['fetch'] },
  { key: 'cli',     kind: 'compile', title: 'compile cli',       prio: 70,  ms: 1000, after: ['fetch'] },
  { key: 'api',     kind: 'compile', title: 'compile api',       prio: 70,  ms: 1200, after: ['fetch'] },
  { key: 'ui',      kind: 'compile', title: 'compile ui',        prio: 60,  ms: 1600, after: ['fetch'] },
  { key: 'link',    kind: 'link',    title: 'link binaries',     prio: 50,  ms: 900,  after: ['core', 'cli', 'api', 'ui'] },
  { key: 'unit',    kind: 'test',    title: 'unit tests',        prio: 40,  ms: 1000, after: ['link'] },
  { key: 'integ',   kind: 'test',    title: 'integration tests', prio: 40,  ms: 1600, after: ['link'] },
  { key: 'e2e',     kind: 'test',    title: 'e2e tests',         prio: 40,  ms: 2000, after: ['link'] },
  { key: 'smoke',   kind: 'test',    title: 'smoke tests',       prio: 30,  ms: 700,  after: ['link'] },
  { key: 'pkg',     kind: 'package', title: 'package tarball',   prio: 20,  ms: 800,  after: ['unit', 'integ', 'e2e', 'smoke'] },
  { key: 'publish', kind: 'publish', title: 'publish release',   prio: 10,  ms: 700,  after: ['pkg'] },
] as const;

const say = (line = '') => process.stdout.write(`${line}\n`);
const rel = (p: string) => `./${relative(process.cwd(), p)}`;
const workers = new Map<string, ChildProcess>();

async function main(): Promise<number> {
  say('agentstate demo: a release pipeline run by 4 worker processes sharing one embedded SQLite store.');
  say('One worker is killed mid-task; its lease expires and another worker picks the item up,');
  say('taking the durable step the killed worker had recorded from its record instead of running it again.');
  say();
  if (existsSync(DEMO_ROOT)) {
    rmSync(DEMO_ROOT, { recursive: true, force: true });
    say(`Removed the previous demo folder ${rel(DEMO_ROOT)} (every run starts fresh).`);
  }
  const startedAt = Date.now();
  const inst = await openInstance({ dir: INSTANCE_DIR, worker: 'planner' });
  try {
    scaffold(inst);
    say(`Instance: ${rel(INSTANCE_DIR)} (state.sqlite, dashboard.md, retros/)`);
    say();

    // 1. Plan: enqueue the pipeline; blocked_by decides what is ready, priority what goes first.
    const ids = new Map<string, string>();
    const titles = new Map<string, string>();
    say(`Planner enqueued ${PLAN.length} work items (priority, title, waits for):`);
    for (const step of PLAN) {
      const item = await inst.work.enqueue({
        title: step.title,
        kind: step.kind,
        priority: step.prio,
        payload: { work_ms: step.ms },
        blocked_by: step.after.map((k) => ids.get(k)!),
      });
      ids.set(step.key, item.id);
      titles.set(item.id, item.title);
      const after = step.after.map((k) => titles.get(ids.get(k)!)).join(', ');
      say(`  p${String(step.prio).padEnd(4)} ${step.title.padEnd(18)} ${after}`.trimEnd());
    }
    say();

    // 2. Follow the event log from here on: every line below is read back from the store.
    const t0 = Date.now();
    const at = (ms: number) => `+${((ms - t0) / 1000).toFixed(1)}s`.padStart(6);
    const claims = new Map<string, EventRecord>(); // `${worker} ${item}` -> its claim event
    // Shared with the IPC and log callbacks below: who was killed, and the first thing that went wrong.
    const run = {
      victim: null as { worker: string; id: string; title: string; killedAt: number } | null,
      killShown: false,
      problems: [] as string[],
      /** Items whose durable step a later attempt took from its record instead of running it. */
      replayed: [] as string[],
      exits: new Map<string, string>(), // worker -> how it ended
    };
    // Anything that goes wrong is recorded; the first problem also ends the wait below early.
    let wake = () => {};
    const failed = new Promise<void>((r) => {
      wake = r;
    });
    const fail = (why: string) => {
      run.problems.push(why);
      wake();
    };

    const showKill = () => {
      const claim = run.victim && claims.get(`${run.victim.worker} ${run.victim.id}`);
      if (!run.victim || !claim || run.killShown) return;
      run.killShown = true;
      const expires = Date.parse((claim.data as { lease_expires_at: string }).lease_expires_at);
      say(
        `${at(run.victim.killedAt)}  demo      SIGKILL   ${run.victim.worker} while it holds "${run.victim.title}": ` +
          `no heartbeat, no resolve; its lease runs out at ${at(expires).trim()}`,
      );
    };
    /** Replay lines waiting for the claim they follow, by item. */
    const replays = new Map<string, string>();
    const flushReplay = (id: string) => {
      const line = replays.get(id);
      if (line === undefined) return;
      replays.delete(id);
      say(line);
    };
    let lastShown = (await inst.events.head())?.position ?? 0;
    const show = (e: EventRecord) => {
      lastShown = e.position;
      const d = (e.data ?? {}) as Record<string, unknown>;
      const who = (e.actor ?? '?').padEnd(9);
      const what = `"${titles.get(e.work_item_id ?? '') ?? e.work_item_id}"`;
      const when = at(Date.parse(e.created_at));
      if (e.type === 'work_item_claimed') {
        claims.set(`${e.actor} ${e.work_item_id}`, e);
        say(`${when}  ${who} claimed   ${what} (attempt ${d.attempt})`);
        flushReplay(e.work_item_id ?? '');
        showKill();
      } else if (e.type === 'work_item_resolved') {
        say(
          `${when}  ${who} ${String(d.status).padEnd(9)} ${what} in ${(Number(d.duration_ms) / 1000).toFixed(1)}s`,
        );
        if (d.status !== 'done') fail(`${what} ended as ${d.status}: ${d.error ?? 'no error given'}`);
      } else if (e.type === 'work_item_reclaimed') {
        say(
          `${when}  ${who} reclaims  ${what}: ${d.previous_owner}'s lease expired (attempt ${d.attempt}), ` +
            `${d.status === 'pending' ? 'back in the queue' : `now ${d.status}`}`,
        );
        if (d.status !== 'pending') fail(`${what} ran out of attempts: ${d.error}`);
      }
    };
    const stopTail = new AbortController();
    const tailing = (async () => {
      for await (const e of inst.events.tail({ after: lastShown, signal: stopTail.signal, pollMs: 100 })) {
        show(e);
      }
    })();

    // 3. Start the workers. Each is its own process with its own connection to the same store.
    say(`Starting ${WORKERS} workers (lease ${LEASE_MS / 1000}s, heartbeat every ${LEASE_MS / 4000}s):`);
    const workerJs = fileURLToPath(new URL('./worker.js', import.meta.url));
    const exits: Array<Promise<void>> = [];
    for (let n = 1; n <= WORKERS; n++) {
      const name = `worker-${n}`;
      const child = fork(workerJs, [INSTANCE_DIR, name, String(LEASE_MS)], {
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      });
      workers.set(name, child);
      child.on('message', (m: WorkerMessage) => {
        if (m.type === 'lease_lost') {
          say(`${at(Date.now())}  ${name.padEnd(9)} lost      "${m.title}": too slow, its lease expired`);
        } else if (m.type === 'replayed') {
          run.replayed.push(m.id);
          // Shown after the claim it belongs to, which the log tail may not have printed yet.
          replays.set(
            m.id,
            `${at(Date.now())}  ${name.padEnd(9)} replays   "${m.title}": its step "${m.step}" came from the record the killed worker committed, not run again`,
          );
          if (claims.has(`${name} ${m.id}`)) flushReplay(m.id);
        } else if (!run.victim && m.nth === KILL_ON_CLAIM) {
          run.victim = { worker: name, id: m.id, title: m.title, killedAt: Date.now() };
          child.kill('SIGKILL');
          showKill();
        } else if (child.connected) {
          child.send('go');
        }
      });
      exits.push(
        new Promise((done) => {
          child.once('exit', (code, signal) => {
            run.exits.set(
              name,
              code === 0
                ? 'exited with code 0 (queue finished)'
                : `ended by ${signal ?? `exit code ${code}`}`,
            );
            if (name !== run.victim?.worker && code !== 0 && !stopping) {
              fail(`${name} stopped unexpectedly (${run.exits.get(name)}); see its error above`);
            }
            done();
          });
        }),
      );
    }

    // 4. Wait until every worker has exited on its own (queue finished), a failure, or the timeout.
    const allExited = Promise.all(exits);
    const timer = setTimeout(() => fail(`timed out after ${TIMEOUT_MS / 1000}s`), TIMEOUT_MS);
    await Promise.race([allExited, failed]);
    clearTimeout(timer);
    if (run.problems.length > 0) {
      stopWorkers();
      await allExited;
    }
    stopTail.abort();
    await tailing;
    for (const e of await inst.events.read({ after: lastShown, limit: 100_000 })) show(e);
    for (const id of [...replays.keys()]) flushReplay(id);
    say();

    // 5. What happened, checked against the store.
    const counts = await inst.work.counts();
    say(
      `Work items by status: ${Object.entries(counts)
        .map(([s, n]) => `${s} ${n}`)
        .join(', ')}`,
    );
    const verify = await inst.events.verify();
    say(
      verify.ok
        ? `Hash chain verified: ${verify.events} events, head ${verify.head?.slice(0, 16)}...`
        : `Hash chain BROKEN at event #${verify.broken?.position}: ${verify.broken?.reason}`,
    );
    const claimEvents = await inst.events.read({ type: 'work_item_claimed', limit: 100_000 });
    const owners = new Map<string, string[]>();
    for (const e of claimEvents) {
      owners.set(e.work_item_id ?? '', [...(owners.get(e.work_item_id ?? '') ?? []), e.actor ?? '?']);
    }
    const retried = [...owners].filter(([, who]) => who.length > 1);
    say(`Claimed exactly once: ${owners.size - retried.length} of ${owners.size} items.`);
    for (const [id, who] of retried) {
      say(`Reclaimed after an expired lease: "${titles.get(id)}", claimed by ${who.join(' then ')}.`);
    }
    const byHow = new Map<string, string[]>();
    for (const [w, how] of [...run.exits].sort()) byHow.set(how, [...(byHow.get(how) ?? []), w]);
    say(`Workers: ${[...byHow].map(([how, names]) => `${names.join(', ')} ${how}`).join('; ')}.`);
    say();

    if (counts.done !== PLAN.length) {
      const left = await inst.work.list({ status: ['pending', 'in_flight', 'waiting_human', 'failed'] });
      fail(`${left.length} item(s) not done: ${left.map((i) => `"${i.title}" (${i.status})`).join(', ')}`);
    }
    if (!verify.ok) fail('the event log hash chain does not verify');
    if (!run.victim) fail('no worker reached its 2nd claim, so nothing was killed');
    else if ((owners.get(run.victim.id)?.length ?? 0) < 2) {
      fail(`the killed worker's item "${run.victim.title}" was never reclaimed`);
    } else if (!run.replayed.includes(run.victim.id)) {
      fail(`the killed worker's item "${run.victim.title}" ran its recorded step again`);
    }
    const cli = `node dist/cli/main.js --dir ${relative(process.cwd(), INSTANCE_DIR)}`;
    if (run.problems.length > 0) {
      say('DEMO FAILED:');
      for (const p of run.problems) say(`  - ${p}`);
      say(`Inspect the store with: ${cli} list`);
      return 1;
    }

    // 6. The human-readable views, regenerated from the store.
    const dashboard = await regenerateDashboard(inst);
    const retro = await retrospective(inst, { since: new Date(startedAt).toISOString() });
    say(`Dashboard: ${rel(dashboard.path)}`);
    say(`Retro:     ${rel(retro.path)}`);
    say();
    say('Explore the store with the CLI:');
    for (const cmd of ['list', 'events', 'verify']) say(`  ${cli} ${cmd}`);
    say(`or in a browser (prints the URL and a sign-in token): ${cli} serve`);
    return 0;
  } finally {
    await inst.close();
  }
}

let stopping = false;
/** Ends any worker still running (only on failure: normally they all exit by themselves). */
function stopWorkers(): void {
  stopping = true;
  for (const child of workers.values()) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
}

process.on('exit', stopWorkers);
try {
  process.exitCode = await main();
} catch (err) {
  stopWorkers();
  say(`DEMO FAILED: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 1;
}
