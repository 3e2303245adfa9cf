// verify and instance export/import of a Workflow SDK World (issue 42), on both backends: a World driven
// through createWorldStorage (every kind of event: lazy starts, a run started before it was created, retries,
// hooks received, disposed and in conflict over a token, waits, attributes, runs ended with their hooks and
// waits released) verifies clean; each table changed behind the World's back (a run's status and output, a
// step's status and attempt, a hook's token, a wait's status, a row deleted, a row added) is reported naming
// the table and the row; a log rewritten with its hashes recomputed is replayed through the World's rules;
// and an export imported into a fresh instance of either backend keeps every row and stream chunk and
// verifies clean. The clock is injected; nothing waits for wall time.
import { join } from 'node:path';
import type { Storage } from '@workflow/world';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import type { PostgresBackend } from '../../src/backends/postgres/backend.js';
import { formatVerify } from '../../src/cli/format.js';
import type { DumpRecord } from '../../src/core/backend.js';
import { computeEventHash } from '../../src/core/hash.js';
import { checkRecords, IntegrityChecker } from '../../src/core/integrity/verify.js';
import { exportInstance, importInstance } from '../../src/core/portable.js';
import type { IntegrityProblem } from '../../src/core/types.js';
import type { Instance } from '../../src/instance/instance.js';
import { createWorldStorage } from '../../src/workflow-world/storage.js';
import { createWorldStreams } from '../../src/workflow-world/streams.js';
import { type BackendUnderTest, backendsForThisFile } from '../helpers/backends.js';
import { PG_URL } from '../helpers/postgres.js';
import { tempDir } from '../helpers/tmp.js';

const backends = await backendsForThisFile({ pooled: true });
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

/** Problems as `table key field problem`, sorted, for comparing. */
const summary = (problems: IntegrityProblem[]) =>
  problems.map((p) => [p.problem, p.table, p.key, p.field ?? ''].join(' ')).sort();

// ---- tampering with SQL ------------------------------------------------------------------------------

type Where = Record<string, string>;

/** SQL on the instance's World tables as someone with write access runs it (no agentstate code). */
interface Tamperer {
  row(table: string, where: Where): Promise<Record<string, unknown>>;
  update(table: string, where: Where, set: Record<string, unknown>): Promise<void>;
  remove(table: string, where: Where): Promise<void>;
  insert(table: string, row: Record<string, unknown>): Promise<void>;
}

function tamperer(b: BackendUnderTest, inst: Instance): Tamperer {
  if (b.name === 'sqlite') {
    const run = <T>(fn: (db: Database.Database) => T): T => {
      const db = new Database(inst.paths.db);
      try {
        return fn(db);
      } finally {
        db.close();
      }
    };
    const cond = (w: Where) => Object.keys(w).map((c) => `${c} = ?`);
    return {
      async row(table, where) {
        return run(
          (db) =>
            db
              .prepare(`SELECT * FROM ${table} WHERE ${cond(where).join(' AND ')}`)
              .get(...Object.values(where)) as Record<string, unknown>,
        );
      },
      async update(table, where, set) {
        run((db) =>
          db
            .prepare(
              `UPDATE ${table} SET ${Object.keys(set)
                .map((c) => `${c} = ?`)
                .join(', ')} WHERE ${cond(where).join(' AND ')}`,
            )
            .run(...Object.values(set), ...Object.values(where)),
        );
      },
      async remove(table, where) {
        run((db) =>
          db.prepare(`DELETE FROM ${table} WHERE ${cond(where).join(' AND ')}`).run(...Object.values(where)),
        );
      },
      async insert(table, row) {
        run((db) =>
          db
            .prepare(
              `INSERT INTO ${table} (${Object.keys(row).join(', ')}) VALUES (${Object.keys(row)
                .map(() => '?')
                .join(', ')})`,
            )
            .run(...Object.values(row)),
        );
      },
    };
  }
  const backend = inst.backend as PostgresBackend;
  const s = `"${backend.schema}"`;
  const q = async (sql: string, params: unknown[]) => {
    const client = new pg.Client({ connectionString: PG_URL });
    client.on('error', () => {});
    await client.connect();
    try {
      return (await client.query(sql, params)).rows as Array<Record<string, unknown>>;
    } finally {
      await client.end();
    }
  };
  const cond = (w: Where, from: number) => [
    'instance = $1',
    ...Object.keys(w).map((c, i) => `${c} = $${from + i}`),
  ];
  return {
    async row(table, where) {
      const rows = await q(`SELECT * FROM ${s}.${table} WHERE ${cond(where, 2).join(' AND ')}`, [
        backend.instance,
        ...Object.values(where),
      ]);
      return rows[0]!;
    },
    async update(table, where, set) {
      const n = Object.keys(set).length;
      await q(
        `UPDATE ${s}.${table} SET ${Object.keys(set)
          .map((c, i) => `${c} = $${i + 2}`)
          .join(', ')}
         WHERE ${cond(where, n + 2).join(' AND ')}`,
        [backend.instance, ...Object.values(set), ...Object.values(where)],
      );
    },
    async remove(table, where) {
      await q(`DELETE FROM ${s}.${table} WHERE ${cond(where, 2).join(' AND ')}`, [
        backend.instance,
        ...Object.values(where),
      ]);
    },
    async insert(table, row) {
      const cols = ['instance', ...Object.keys(row)];
      await q(
        `INSERT INTO ${s}.${table} (${cols.join(', ')}) VALUES (${cols.map((_, i) => `$${i + 1}`).join(', ')})`,
        [backend.instance, ...Object.values(row)],
      );
    },
  };
}

/** Rewrites a row's body (JSON text) with `edit`. */
async function editBody(
  t: Tamperer,
  table: string,
  where: Where,
  edit: (body: Record<string, unknown>) => void,
) {
  const body = JSON.parse((await t.row(table, where)).body as string) as Record<string, unknown>;
  edit(body);
  await t.update(table, where, { body: JSON.stringify(body) });
}

describe.each(backends)('$name: verify checks the World tables against the log', (b) => {
  it('a World driven through the storage verifies clean, its rows counted', async () => {
    const { inst } = await seeded(b);
    const r = await inst.events.verify();
    expect(r.problems).toEqual([]);
    expect(r.ok).toBe(true);
    expect(r.checked.workflow_runs).toBe(3);
    expect(formatVerify(r)).toMatch(
      /^ok: 30 events, chain intact;.* the Workflow World's tables \(3 runs, with their steps, hooks and waits\) match the log\n/,
    );
  });
});

/** One change behind the World's back, and the problems verify must report for it (`problem table key field`). */
interface Case {
  name: string;
  tamper(t: Tamperer, ids: Seeded): Promise<void>;
  expect(ids: Seeded): string[];
}

const cases: Case[] = [
  {
    name: "a run's status and output",
    async tamper(t, ids) {
      await t.update('workflow_runs', { run_id: ids.done }, { status: 'failed' });
      await editBody(t, 'workflow_runs', { run_id: ids.done }, (body) => {
        body.status = 'failed';
        body.output = { $t: 'bytes', v: 'AAAA' };
      });
    },
    expect: (ids) => [
      `row_differs workflow_runs ${ids.done} status`,
      `row_differs workflow_runs ${ids.done} body.status`,
      `row_differs workflow_runs ${ids.done} body.output`,
    ],
  },
  {
    name: "a run's updated_at",
    tamper: (t, ids) => t.update('workflow_runs', { run_id: ids.live }, { updated_at: T0 + 1 }),
    expect: (ids) => [`row_differs workflow_runs ${ids.live} updated_at`],
  },
  {
    name: "a step's status and attempt",
    async tamper(t, ids) {
      const where = { run_id: ids.live, step_id: ids.retried };
      await t.update('workflow_steps', where, { status: 'running' });
      await editBody(t, 'workflow_steps', where, (body) => {
        body.attempt = 7;
      });
    },
    expect: (ids) => [
      `row_differs workflow_steps ${ids.live}/${ids.retried} status`,
      `row_differs workflow_steps ${ids.live}/${ids.retried} body.attempt`,
    ],
  },
  {
    name: "a hook's token",
    async tamper(t, ids) {
      await t.update('workflow_hooks', { hook_id: ids.hook }, { token: 'tok_forged' });
      await editBody(t, 'workflow_hooks', { hook_id: ids.hook }, (body) => {
        body.token = 'tok_forged';
      });
    },
    expect: (ids) => [
      `row_differs workflow_hooks ${ids.hook} token`,
      `row_differs workflow_hooks ${ids.hook} body.token`,
    ],
  },
  {
    name: "a wait's status",
    tamper: (t, ids) =>
      t.update('workflow_waits', { run_id: ids.live, correlation_id: ids.waiting }, { status: 'completed' }),
    expect: (ids) => [`row_differs workflow_waits ${ids.live}/${ids.waiting} status`],
  },
  {
    name: "a run's row deleted",
    tamper: (t, ids) => t.remove('workflow_runs', { run_id: ids.lazy }),
    expect: (ids) => [`row_missing workflow_runs ${ids.lazy} `],
  },
  {
    name: "a step's row deleted",
    tamper: (t, ids) => t.remove('workflow_steps', { run_id: ids.live, step_id: ids.step }),
    expect: (ids) => [`row_missing workflow_steps ${ids.live}/${ids.step} `],
  },
  {
    name: 'a live hook deleted (its token freed behind the log)',
    tamper: (t, ids) => t.remove('workflow_hooks', { hook_id: ids.hook }),
    expect: (ids) => [`row_missing workflow_hooks ${ids.hook} `],
  },
  {
    name: 'a wait deleted',
    tamper: (t, ids) => t.remove('workflow_waits', { run_id: ids.live, correlation_id: ids.completedWait }),
    expect: (ids) => [`row_missing workflow_waits ${ids.live}/${ids.completedWait} `],
  },
  {
    name: 'a run no event created',
    async tamper(t, ids) {
      const row = await t.row('workflow_runs', { run_id: ids.done });
      await t.insert('workflow_runs', { ...withoutInstance(row), run_id: 'wrun_forged' });
    },
    expect: () => ['event_missing workflow_runs wrun_forged '],
  },
  {
    name: 'a step no event created',
    async tamper(t, ids) {
      const row = await t.row('workflow_steps', { run_id: ids.live, step_id: ids.step });
      await t.insert('workflow_steps', { ...withoutInstance(row), step_id: 'step_forged' });
    },
    expect: (ids) => [`event_missing workflow_steps ${ids.live}/step_forged `],
  },
  {
    name: 'a disposed hook brought back',
    async tamper(t, ids) {
      const row = await t.row('workflow_hooks', { hook_id: ids.hook });
      await t.insert('workflow_hooks', { ...withoutInstance(row), hook_id: 'hook_gone', token: 'tok_gone' });
    },
    expect: () => ['event_missing workflow_hooks hook_gone '],
  },
  {
    name: 'a wait of a run that ended brought back',
    async tamper(t, ids) {
      const row = await t.row('workflow_waits', { run_id: ids.live, correlation_id: ids.waiting });
      await t.insert('workflow_waits', {
        ...withoutInstance(row),
        run_id: ids.done,
        correlation_id: 'wait_b',
      });
    },
    expect: (ids) => [`event_missing workflow_waits ${ids.done}/wait_b `],
  },
];

function withoutInstance(row: Record<string, unknown>): Record<string, unknown> {
  const { instance: _instance, ...rest } = row;
  return rest;
}

describe.each(backends)('$name: verify reports a World table changed behind the log', (b) => {
  for (const c of cases) {
    it(c.name, async () => {
      const { inst, ids } = await seeded(b);
      expect((await inst.events.verify()).ok).toBe(true);
      await c.tamper(tamperer(b, inst), ids);
      const r = await inst.events.verify();
      expect(summary(r.problems)).toEqual([...c.expect(ids)].sort());
      expect(r.ok).toBe(false);
      // Each names its table and row in the words verify prints.
      for (const p of r.problems) expect(p.message).toContain(`${p.table} ${p.key}`);
    });
  }
});

/** Every record of the instance's dump. */
async function dumped(inst: Instance): Promise<DumpRecord[]> {
  const out: DumpRecord[] = [];
  for await (const r of inst.backend.dump!()) out.push(r as DumpRecord);
  return out;
}

/**
 * Rewrites the data of the first World event `pick` chooses, and every hash from it on, as someone who can
 * rewrite the whole log would: the chain stays intact. Returns the event's position.
 */
function rewriteEvent(
  records: DumpRecord[],
  pick: (data: Record<string, unknown>) => boolean,
  edit: (data: Record<string, unknown>) => void,
): number {
  const events = records.flatMap((r) => (r.t === 'event' ? [r.row] : []));
  const i = events.findIndex((e) => e.type === 'workflow_event' && pick(JSON.parse(e.data)));
  const e = events[i]!;
  const data = JSON.parse(e.data) as Record<string, unknown>;
  edit(data);
  e.data = JSON.stringify(data);
  for (let j = i; j < events.length; j++) {
    const x = events[j]!;
    if (j > 0) x.prev_hash = events[j - 1]!.hash;
    x.hash = computeEventHash(x.prev_hash, x);
  }
  return e.position;
}

describe.each(backends)('$name: verify replays a rewritten log through the World rules', (b) => {
  it('an event rewritten with every hash after it: the rows disagree with the fold, or the rules refuse the event', async () => {
    const { inst, ids } = await seeded(b);
    const clean = await dumped(inst);
    expect(await checkRecords(clean)).toMatchObject({ ok: true, checked: { workflow_runs: 3 } });

    // The step's completion rewritten as a failure: the chain is intact, the step's row says completed.
    const failed = structuredClone(clean);
    rewriteEvent(
      failed,
      (d) => d.event_type === 'step_completed' && d.correlation_id === ids.step,
      (d) => {
        d.event_type = 'step_failed';
        d.event_data = { error: { message: 'forged' } };
      },
    );
    const step = `${ids.live}/${ids.step}`;
    expect(summary((await checkRecords(failed)).problems)).toEqual(
      [
        `row_differs workflow_steps ${step} status`,
        `row_differs workflow_steps ${step} body.status`,
        `row_differs workflow_steps ${step} body.output`,
        `row_differs workflow_steps ${step} body.error`,
      ].sort(),
    );

    // A resume of a hook that no event created: the rules refuse it there.
    const refused = structuredClone(clean);
    const at = rewriteEvent(
      refused,
      (d) => d.event_type === 'hook_received',
      (d) => {
        d.correlation_id = 'hook_unknown';
      },
    );
    const r = await checkRecords(refused);
    expect(summary(r.problems)).toEqual([`event_malformed events #${at} `]);
    expect(r.problems[0]!.message).toMatch(/hook_received of World run .* is one the World's rules refuse/);

    // A hook_conflict naming a run that did not hold the token.
    const conflict = structuredClone(clean);
    const c = rewriteEvent(
      conflict,
      (d) => d.event_type === 'hook_conflict',
      (d) => {
        (d.event_data as Record<string, unknown>).conflictingRunId = ids.lazy;
      },
    );
    const rc = await checkRecords(conflict);
    expect(summary(rc.problems)).toEqual([`event_malformed events #${c} `]);
    expect(rc.problems[0]!.message).toContain(`they record hook_conflict naming run ${ids.live}`);
  });

  it('a checker that has not loaded the World check (no @workflow/world) says the tables were not checked', async () => {
    const { inst } = await seeded(b);
    const records = await dumped(inst);
    const unloaded = new IntegrityChecker();
    for (const r of records) unloaded.add(r);
    const unchecked = unloaded.finish();
    expect(unchecked).toMatchObject({ ok: true, checked: { workflow_runs: null } });
    expect(formatVerify(unchecked)).toContain("the Workflow World's tables are not checked");
    const loaded = new IntegrityChecker();
    expect(await loaded.loadWorkflowCheck()).toBe(true);
    for (const r of records) loaded.add(r);
    expect(loaded.finish()).toMatchObject({ ok: true, checked: { workflow_runs: 3 } });
  });
});

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
      const v = await dst.events.verify();
      expect(v).toMatchObject({ ok: true, problems: [], checked: { workflow_runs: 3 } });

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

  it('a dump whose World row was changed is refused, and nothing is written', async () => {
    const { inst, ids } = await seeded(b);
    const file = join(root, `world-tampered-${b.name}-${++k}.jsonl`);
    await exportInstance(inst.backend, { host: inst.host, name: inst.name }, file);
    const { readFileSync, writeFileSync } = await import('node:fs');
    const lines = readFileSync(file, 'utf8').trimEnd().split('\n');
    const i = lines.findIndex((l) => l.includes('"t":"workflow_step"') && l.includes(ids.retried));
    const rec = JSON.parse(lines[i]!) as { row: { status: string } };
    rec.row.status = 'completed';
    lines[i] = JSON.stringify(rec);
    const tampered = `${file}.tampered.jsonl`;
    writeFileSync(tampered, `${lines.join('\n')}\n`);
    const dst = await b.open(`wv-refused-${++k}`);
    open.push(dst);
    await expect(importInstance(dst.backend, dst.events, tampered)).rejects.toMatchObject({
      code: 'INTEGRITY_VIOLATION',
      message: expect.stringContaining(`workflow_steps ${ids.live}/${ids.retried}: status is "completed"`),
    });
    expect(worldRecords(await dumped(dst))).toEqual([]);
    expect((await dst.events.read({})).length).toBe(0);
  });
});
