// instance export and import of a Workflow SDK World (issue 42), on both backends: a World driven through
// createWorldStorage (every kind of event: lazy starts, a run started before it was created, retries, hooks
// received, disposed and in conflict over a token, waits, attributes, runs ended with their hooks and waits
// released) and its streams, exported and imported into a fresh instance of either backend, keeps every row
// and stream chunk, verifies, and goes on. The clock is injected; nothing waits for wall time.
import { join } from 'node:path';
import type { Storage } from '@workflow/world';
import { afterAll, describe, expect, it } from 'vitest';
import type { DumpRecord } from '../../src/core/backend.js';
import { exportInstance, importInstance } from '../../src/core/portable.js';
import type { Instance } from '../../src/instance/instance.js';
import { createWorldStorage } from '../../src/workflow-world/storage.js';
import { createWorldStreams } from '../../src/workflow-world/streams.js';
import { type BackendUnderTest, backendsForThisFile } from '../helpers/backends.js';
import { tempDir } from '../helpers/tmp.js';

const backends = await backendsForThisFile();
const root = tempDir();

const T0 = Date.UTC(2026, 0, 15, 12, 0, 0);
const bytes = (...b: number[]) => new Uint8Array(b);

/** `wrun_` and a ULID whose time is `ms`, its random part `tail` (16 Crockford characters). */
function runIdAt(ms: number, tail: string): string {
  const crockford = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
  let time = '';
  for (let t = ms, i = 0; i < 10; i++, t = Math.floor(t / 32)) time = crockford[t % 32]! + time;
  return `wrun_${time}${tail}`;
}

const open: Instance[] = [];
afterAll(async () => {
  await Promise.all(open.map((i) => i.close()));
});

const created = (input: Uint8Array) => ({
  eventType: 'run_created' as const,
  eventData: { deploymentId: 'dpl|1', workflowName: 'workflow//./src/w//ƒ|1', input },
});

/** The ids of what `seed` made. */
interface Seeded {
  /** A run left running, with a completed step, a pending retried step, a live hook, two waits. */
  live: string;
  /** A run that completed (its hook and wait released at its end). */
  done: string;
  /** A run created by its run_started (a synthetic run_created), whose first step started lazily, then failed. */
  lazy: string;
  /** The live run's steps, hook and waits. */
  step: string;
  retried: string;
  hook: string;
  token: string;
  waiting: string;
  completedWait: string;
}

/** Every kind of World event, through the storage, the clock moving 10 ms before each; and a stream. */
async function seed(inst: Instance, clock: { now: number }): Promise<Seeded> {
  const s: Storage = createWorldStorage(inst);
  const tick = () => {
    clock.now += 10;
  };
  const ev = async (runId: string, req: Record<string, unknown>) => {
    tick();
    return s.events.create(runId, req as never);
  };
  const ids: Seeded = {
    live: runIdAt(T0, 'A000000000000001'),
    done: runIdAt(T0, 'A000000000000002'),
    // No ULID: a run_started may create a run of any id, which run_created would refuse.
    lazy: 'wrun_lazy|ü',
    step: 'step_ü|1',
    retried: 'step_2',
    hook: 'hook|ä+1',
    token: 'tok|€+x 漢',
    waiting: 'wait_1',
    completedWait: 'wait_0',
  };
  const { live, done, lazy } = ids;
  await ev(live, created(bytes(0x5b, 0, 0xff, 0x5d)));
  await ev(live, { eventType: 'run_started' });
  await ev(live, {
    eventType: 'attr_set',
    correlationId: 'attr_1',
    eventData: { changes: [{ key: 'team', value: 'blue' }], writer: { type: 'workflow' } },
  });
  await ev(live, {
    eventType: 'step_created',
    correlationId: ids.step,
    eventData: { stepName: 'step//add', input: bytes(1, 0, 2) },
  });
  await ev(live, { eventType: 'step_started', correlationId: ids.step });
  await ev(live, {
    eventType: 'step_completed',
    correlationId: ids.step,
    eventData: { result: bytes(0, 0, 7) },
  });
  await ev(live, {
    eventType: 'step_created',
    correlationId: ids.retried,
    eventData: { stepName: 'step//flaky', input: bytes(9) },
  });
  await ev(live, { eventType: 'step_started', correlationId: ids.retried });
  await ev(live, {
    eventType: 'step_retrying',
    correlationId: ids.retried,
    eventData: { error: { message: 'try again' }, retryAfter: new Date(clock.now + 5) },
  });
  clock.now += 10;
  await ev(live, { eventType: 'step_started', correlationId: ids.retried });
  await ev(live, {
    eventType: 'step_retrying',
    correlationId: ids.retried,
    eventData: { error: { message: 'and again' } },
  });
  await ev(live, {
    eventType: 'hook_created',
    correlationId: ids.hook,
    eventData: { token: ids.token, metadata: bytes(4, 2) },
  });
  await ev(live, { eventType: 'hook_received', correlationId: ids.hook, eventData: { payload: bytes(1) } });
  await ev(live, {
    eventType: 'hook_created',
    correlationId: 'hook_gone',
    eventData: { token: 'tok_gone' },
  });
  await ev(live, { eventType: 'hook_disposed', correlationId: 'hook_gone' });
  await ev(live, {
    eventType: 'wait_created',
    correlationId: ids.completedWait,
    eventData: { resumeAt: new Date(clock.now + 1) },
  });
  await ev(live, { eventType: 'wait_completed', correlationId: ids.completedWait });
  await ev(live, {
    eventType: 'wait_created',
    correlationId: ids.waiting,
    eventData: { resumeAt: new Date(clock.now + 60_000) },
  });

  await ev(done, created(bytes(2)));
  await ev(done, { eventType: 'run_started' });
  // The token is held by the live run's hook: a hook_conflict, and no hook.
  await ev(done, { eventType: 'hook_created', correlationId: 'hook_b', eventData: { token: ids.token } });
  await ev(done, { eventType: 'hook_created', correlationId: 'hook_c', eventData: { token: 'tok_c' } });
  await ev(done, {
    eventType: 'wait_created',
    correlationId: 'wait_b',
    eventData: { resumeAt: new Date(clock.now + 1) },
  });
  await ev(done, { eventType: 'run_completed', eventData: { output: bytes(0, 42, 0) } });

  // run_started carrying the run's creation data creates it; a lazy step_started creates its step.
  await ev(lazy, {
    eventType: 'run_started',
    eventData: { deploymentId: 'dpl|1', workflowName: 'workflow//lazy', input: bytes(3) },
  });
  await ev(lazy, {
    eventType: 'step_started',
    correlationId: 'step_lazy',
    eventData: { stepName: 'step//lazy', input: bytes(5) },
  });
  await ev(lazy, {
    eventType: 'step_failed',
    correlationId: 'step_lazy',
    eventData: { error: { message: 'no' } },
  });
  await ev(lazy, {
    eventType: 'run_failed',
    eventData: { error: { message: 'no' }, errorCode: 'USER_ERROR' },
  });

  const streams = createWorldStreams(inst);
  await streams.writeMulti(live, 'strm_live|ü', [bytes(0, 1, 0), 'héllo', bytes()]);
  await streams.close(live, 'strm_live|ü');
  await streams.write('wrun_none', 'strm_health', bytes(0xff));
  return ids;
}

/** A fresh instance on `b` with a clock the test moves, seeded. */
let k = 0;
async function seeded(b: BackendUnderTest) {
  const clock = { now: T0 };
  const inst = await b.open(`wv${++k}`, { clock: () => clock.now });
  open.push(inst);
  const ids = await seed(inst, clock);
  return { inst, ids, clock };
}

/** Every record of the instance's dump. */
async function dumped(inst: Instance): Promise<DumpRecord[]> {
  const out: DumpRecord[] = [];
  for await (const r of inst.backend.dump!()) out.push(r as DumpRecord);
  return out;
}

/** The World's records of a dump (rows and chunks), in dump order. */
const worldRecords = (records: DumpRecord[]) => records.filter((r) => r.t.startsWith('workflow_'));
describe.each(backends)('$name: instance export and import carry the World', (b) => {
  it('every run, step, hook, wait and stream chunk arrives in a fresh instance of either backend, which verifies clean and keeps working', async () => {
    const { inst, ids, clock } = await seeded(b);
    const file = join(root, `world-${b.name}-${++k}.jsonl`);
    const counts = await exportInstance(inst.backend, { host: inst.host, name: inst.name }, file);
    expect(counts).toMatchObject({
      workflow_runs: 3,
      workflow_steps: 3,
      workflow_hooks: 1,
      workflow_waits: 2,
      // Three chunks and the close of one stream, one chunk of another.
      workflow_chunks: 5,
    });
    const before = worldRecords(await dumped(inst));
    for (const target of backends) {
      const dst = await target.open(`wv-into-${++k}`, { clock: () => clock.now });
      open.push(dst);
      const imported = await importInstance(dst.backend, dst.events, file);
      expect(imported).toMatchObject({ verified: true, workflow_runs: 3, workflow_chunks: 5 });
      expect(worldRecords(await dumped(dst))).toEqual(before);
      expect(await dst.events.verify()).toMatchObject({ ok: true, problems: [] });

      // The imported World goes on: its events take the next ids, its hook's token is still held.
      const s = createWorldStorage(dst);
      clock.now += 10;
      const next = await s.events.create(ids.live, {
        eventType: 'wait_completed',
        correlationId: ids.waiting,
      });
      expect(next.event?.eventId).toBe('evnt_00000000000000000000000019');
      expect(await s.hooks.getByToken(ids.token)).toMatchObject({ hookId: ids.hook, runId: ids.live });
      const chunks = await createWorldStreams(dst).getChunks(ids.live, 'strm_live|ü', { limit: 10 });
      expect(chunks.data.map((c) => Buffer.from(c.data).toString('hex'))).toEqual([
        '000100',
        Buffer.from('héllo').toString('hex'),
        '',
      ]);
      expect(chunks.done).toBe(true);
      expect((await dst.events.verify()).ok).toBe(true);
    }
  });
});
