// The operations of kind `grid-mission` (`agentstate grid …`): pure body → body functions; each result is
// committed through the kind's check with the role that would run it, as the store does.
import { describe, expect, it } from 'vitest';
import { checkInput } from '../../src/core/input.js';
import type { OperationContext } from '../../src/core/kind.js';
import type { JsonObject } from '../../src/core/types.js';
import { gridMissionKind } from '../../src/kinds/grid-mission/kind.js';
import type { GridMission } from '../../src/kinds/grid-mission/model.js';
import { validateSchema } from '../../src/kinds/registry.js';
import { clone, example, makeCtx, refusal } from './ctx.js';

const NOW = Date.parse('2026-01-24T17:00:00Z');
const ops = new Map((gridMissionKind.operations ?? []).map((o) => [o.name, o]));
const seed = () => example('grid/seed') as unknown as GridMission;

function run(
  name: string,
  body: GridMission | null,
  args: Record<string, unknown>,
  ctx: Partial<OperationContext> = {},
): GridMission {
  const op = ops.get(name);
  if (!op) throw new Error(`no operation ${name}`);
  const before = body && clone(body);
  // As the store runs a kind operation: its arguments checked against its declared input first.
  const checked = checkInput<Record<string, unknown>>(op.name, args, op.input);
  const out = op.apply(body as unknown as JsonObject | null, checked, {
    now: NOW,
    actor: 'executor-003',
    role: null,
    ...ctx,
  }) as unknown as GridMission;
  if (body) expect(body, 'operations must not mutate their input').toEqual(before);
  return out;
}

/** Commits `next` over `prev` as the store would, with `role` (null = the system, i.e. MC). */
async function commit(next: GridMission, prev: GridMission | null, role: string | null = null, now = NOW) {
  const body = clone(next) as unknown as JsonObject;
  validateSchema(gridMissionKind, body);
  const effects = await gridMissionKind.check!(
    body,
    prev ? (prev as unknown as JsonObject) : null,
    makeCtx({ kind: 'grid-mission', id: 'mission', actor_kind: role ? 'model' : 'system', role, now }),
  );
  return { body: body as unknown as GridMission, effects };
}

const stored = async () => (await commit(seed(), null)).body;

describe('grid-mission operations', () => {
  it('every operation declares its input with the shared checker and kebab-case names', () => {
    expect([...ops.keys()]).toEqual([
      'init',
      'update-position',
      'update-progress',
      'register-agent',
      'heartbeat',
      'complete-agent',
      'add-warning',
      'add-blocker',
      'resolve-blocker',
      'transition-phase',
      'set-status',
    ]);
    for (const op of ops.values()) {
      expect(op.summary.length).toBeGreaterThan(10);
      if (op.positional) expect(Object.keys(op.input)).toContain(op.positional);
      expect(() => checkInput(op.name, { nope: 1 }, op.input)).toThrow(/unknown field/);
    }
  });

  it('operations other than init need the mission; init refuses an existing one', async () => {
    const err = await refusal(() => run('add-warning', null, { message: 'x' }));
    expect(err.code).toBe('NOT_FOUND');
    expect((await refusal(() => run('init', seed(), { cluster: 'x' }))).code).toBe('INVALID_INPUT');
  });

  it('arguments are checked: unknown fields, wrong types, enums', async () => {
    const b = await stored();
    expect((await refusal(() => run('add-warning', b, { message: 'x', level: 'fatal' }))).code).toBe(
      'INVALID_INPUT',
    );
    expect((await refusal(() => run('update-position', b, { thread: 'two' }))).code).toBe('INVALID_INPUT');
    expect((await refusal(() => run('add-blocker', b, { description: 'x' }))).details.field).toBe('type');
    expect((await refusal(() => run('update-position', b, {}))).code).toBe('INVALID_INPUT');
  });

  it('init creates a valid planning mission that MC may commit', async () => {
    const b = run(
      'init',
      null,
      { cluster: 'SaaS Dashboard MVP', phases: 3, mode: 'guided' },
      { actor: 'mc' },
    );
    expect(b).toMatchObject({
      version: '1.0',
      cluster: 'SaaS Dashboard MVP',
      mission_id: 'mission-20260124T170000Z-saas-dashboard-mvp',
      created_at: '2026-01-24T17:00:00Z',
      status: 'planning',
      mode: 'guided',
      phases: { total: 3, current: 1, completed: [], definitions: [] },
      energy: 9000,
    });
    expect(b.session_id).toMatch(/^sess-20260124T170000Z-[a-z0-9]{6}$/);
    expect((await commit(b, null)).body).toEqual(b);
    // Pure: the same inputs give the same mission.
    expect(
      run('init', null, { cluster: 'SaaS Dashboard MVP', phases: 3, mode: 'guided' }, { actor: 'mc' }),
    ).toEqual(b);
  });

  it('update-position (executor): thread, wave, resume point', async () => {
    const prev = await stored();
    const next = run('update-position', prev, {
      thread: 3,
      last_agent: 'executor-003',
      last_commit: 'a1b2c3d',
    });
    expect(next.position).toEqual({ ...prev.position, thread: 3 });
    expect(next.resume).toMatchObject({ last_agent: 'executor-003', last_commit: 'a1b2c3d' });
    await commit(next, prev, 'executor');
    // A new block gets its id; its old name goes.
    const moved = run('update-position', prev, { block: 4, thread: 1 });
    expect(moved.position).toMatchObject({ block: 4, block_id: '01-04', thread: 1 });
    expect(moved.position.block_name).toBeUndefined();
    await commit(moved, prev, 'planner');
    // Past the thread total is refused by the kind (§3.2).
    await expect(commit(run('update-position', prev, { thread: 9 }), prev, 'executor')).rejects.toMatchObject(
      {
        details: { rule: 'logic.thread-total', pointer: '/position/thread' },
      },
    );
    // A recognizer may not move the position (§4).
    await expect(commit(next, prev, 'recognizer')).rejects.toMatchObject({ code: 'PERMISSION_DENIED' });
  });

  it('update-progress (MC): counts, and a percent that follows them', async () => {
    const prev = await stored();
    const next = run('update-progress', prev, { threads_complete: 10, blocks_complete: 3 });
    expect(next.progress).toEqual({
      blocks_complete: 3,
      blocks_total: 12,
      threads_complete: 10,
      threads_total: 48,
      percent: 20.83,
    });
    await commit(next, prev, 'mc');
    const byBlocks = run('update-progress', prev, {
      threads_total: 0,
      threads_complete: 0,
      blocks_complete: 6,
    });
    expect(byBlocks.progress.percent).toBe(50);
    await commit(byBlocks, prev, 'mc');
    await expect(commit(next, prev, 'executor')).rejects.toMatchObject({
      code: 'PERMISSION_DENIED',
      details: { pointer: '/progress/blocks_complete' },
    });
  });

  it('register-agent, heartbeat and complete-agent (executor)', async () => {
    const prev = await stored();
    const reg = run('register-agent', prev, {
      agent: 'executor-004',
      task: 'Implementing billing endpoints',
    });
    expect(reg.agents.active[1]).toEqual({
      id: 'executor-004',
      type: 'executor',
      spawned_at: '2026-01-24T17:00:00Z',
      task: 'Implementing billing endpoints',
      phase: '01-foundation',
      block: '01-03',
      last_heartbeat: '2026-01-24T17:00:00Z',
    });
    const v2 = (await commit(reg, prev, 'executor')).body;
    expect(
      (await refusal(() => run('register-agent', v2, { agent: 'executor-004', task: 'again' }))).code,
    ).toBe('INVALID_INPUT');
    const beat = run('heartbeat', v2, { agent: 'executor-004' }, { now: NOW + 60_000 });
    expect(beat.agents.active[1]!.last_heartbeat).toBe('2026-01-24T17:01:00Z');
    const v3 = (await commit(beat, v2, 'executor', NOW + 60_000)).body;
    const done = run(
      'complete-agent',
      v3,
      { agent: 'executor-003', result: 'success' },
      { now: NOW + 120_000 },
    );
    expect(done.agents.active.map((a) => a.id)).toEqual(['executor-004']);
    // spawned 16:30, done 17:02 → 32 minutes
    expect(done.agents.completed.at(-1)).toEqual({
      id: 'executor-003',
      type: 'executor',
      result: 'success',
      duration_seconds: 1920,
    });
    await commit(done, v3, 'executor', NOW + 120_000);
    const err = await refusal(() => run('complete-agent', done, { agent: 'executor-003' }));
    expect(err).toMatchObject({ code: 'NOT_FOUND', details: { field: 'agent' } });
    // A memory agent may not touch the agents registry.
    await expect(commit(reg, prev, 'memory')).rejects.toMatchObject({
      code: 'PERMISSION_DENIED',
      details: { pointer: '/agents/active', role: 'memory' },
    });
  });

  it('register-agent needs a type, phase and block it can find', async () => {
    const prev = await stored();
    const err = await refusal(() => run('register-agent', prev, { agent: 'helper-1', task: 't' }));
    expect(err.details.field).toBe('type');
    const b = run('register-agent', prev, { agent: 'scout-001', task: 'Survey the repo', type: 'scout' });
    expect(b.agents.active[1]!.type).toBe('scout');
  });

  it('add-warning (recognizer, planner, executor; not memory or scout)', async () => {
    const prev = await stored();
    const next = run('add-warning', prev, { message: 'Flaky e2e test', source: 'recognizer-001' });
    expect(next.warnings.at(-1)).toEqual({
      level: 'warning',
      message: 'Flaky e2e test',
      source: 'recognizer-001',
      timestamp: '2026-01-24T17:00:00Z',
    });
    for (const role of ['recognizer', 'planner', 'executor', 'mc']) await commit(next, prev, role);
    for (const role of ['memory', 'scout']) {
      await expect(commit(next, prev, role)).rejects.toMatchObject({ code: 'PERMISSION_DENIED' });
    }
    // The source defaults to the writer.
    expect(run('add-warning', prev, { message: 'x', level: 'info' }).warnings.at(-1)).toMatchObject({
      source: 'executor-003',
      level: 'info',
    });
  });

  it('add-blocker and resolve-blocker (recognizer)', async () => {
    const prev = await stored();
    const one = run('add-blocker', prev, {
      description: 'STRIPE_KEY is missing',
      type: 'missing_credential',
      blocking_thread: '01-03-2',
    });
    expect(one.blockers).toEqual([
      {
        id: 'blocker-001',
        type: 'missing_credential',
        description: 'STRIPE_KEY is missing',
        blocking_thread: '01-03-2',
        added_at: '2026-01-24T17:00:00Z',
      },
    ]);
    const v2 = (await commit(one, prev, 'recognizer')).body;
    const two = run('add-blocker', v2, { description: 'Rate limited', type: 'external_api' });
    expect(two.blockers.map((x) => x.id)).toEqual(['blocker-001', 'blocker-002']);
    const v3 = (await commit(two, v2, 'recognizer')).body;
    expect(
      (
        await refusal(() =>
          run('add-blocker', v3, { description: 'dup', type: 'dependency', id: 'blocker-002' }),
        )
      ).code,
    ).toBe('INVALID_INPUT');
    const resolved = run('resolve-blocker', v3, { blocker: 'blocker-001' });
    expect(resolved.blockers.map((x) => x.id)).toEqual(['blocker-002']);
    await commit(resolved, v3, 'recognizer');
    expect((await refusal(() => run('resolve-blocker', v3, { blocker: 'blocker-009' }))).code).toBe(
      'NOT_FOUND',
    );
    await expect(commit(one, prev, 'executor')).rejects.toMatchObject({
      code: 'PERMISSION_DENIED',
      details: { pointer: '/blockers', role: 'executor' },
    });
  });

  it('transition-phase (MC) does what §7.2 does', async () => {
    const prev = await stored();
    const next = run('transition-phase', prev, {}, { actor: 'mc' });
    expect(next.phases).toMatchObject({ current: 2, completed: ['01-foundation'] });
    expect(next.phases.definitions.map((d) => [d.id, d.status])).toEqual([
      ['01-foundation', 'complete'],
      ['02-core', 'in_progress'],
      ['03-polish', 'pending'],
    ]);
    expect(next.phases.definitions[0]!.completed_at).toBe('2026-01-24T17:00:00Z');
    expect(next.phases.definitions[1]!.started_at).toBe('2026-01-24T17:00:00Z');
    expect(next.position).toEqual({
      phase: 2,
      phase_id: '02-core',
      phase_name: 'Core Features',
      block: 1,
      block_id: '02-01',
      wave: 1,
      thread: 1,
      thread_total: 4,
    });
    const { effects } = await commit(next, prev, 'mc');
    expect(effects?.events?.[0]).toMatchObject({ type: 'grid_phase_advanced', data: { from: 1, to: 2 } });
    // Only MC may: a planner may not write phases.current.
    await expect(commit(next, prev, 'planner')).rejects.toMatchObject({
      code: 'PERMISSION_DENIED',
      details: { pointer: '/phases/current' },
    });
    // Naming a phase that is not the next one is an invalid transition.
    const err = await refusal(() => run('transition-phase', prev, { next_phase: '03-polish' }));
    expect(err).toMatchObject({ code: 'INVALID_TRANSITION', details: { rule: 'phase-transition' } });
    // From the last phase there is nowhere to go.
    const v2 = (await commit(next, prev)).body;
    const v3 = (await commit(run('transition-phase', v2, {}), v2)).body;
    expect(v3.phases).toMatchObject({ current: 3, completed: ['01-foundation', '02-core'] });
    expect((await refusal(() => run('transition-phase', v3, {}))).code).toBe('INVALID_TRANSITION');
  });

  it('set-status (MC) follows §7.1; blocking needs a checkpoint file', async () => {
    const prev = await stored();
    const blocked = run('set-status', prev, { status: 'blocked', checkpoint_file: '.grid/CHECKPOINT.md' });
    const v2 = (await commit(blocked, prev, 'mc')).body;
    expect(v2).toMatchObject({ status: 'blocked', resume: { checkpoint_file: '.grid/CHECKPOINT.md' } });
    await expect(commit(run('set-status', prev, { status: 'blocked' }), prev, 'mc')).rejects.toMatchObject({
      details: { rule: 'logic.blocked-checkpoint' },
    });
    const err = await refusal(() => run('set-status', v2, { status: 'complete' }));
    expect(err).toMatchObject({
      code: 'INVALID_TRANSITION',
      details: { from: 'blocked', to: 'complete', rule: 'status-transition' },
    });
    const resumed = run('set-status', v2, { status: 'in_progress', checkpoint_file: null });
    const v3 = (await commit(resumed, v2, 'mc')).body;
    const complete = (await commit(run('set-status', v3, { status: 'complete' }), v3, 'mc')).body;
    expect((await refusal(() => run('set-status', complete, { status: 'in_progress' }))).code).toBe(
      'INVALID_TRANSITION',
    );
    // Only MC writes the status (§4.1).
    await expect(commit(blocked, prev, 'executor')).rejects.toMatchObject({
      code: 'PERMISSION_DENIED',
      details: { pointer: '/status' },
    });
  });

  it('a whole mission: init → plan → run → phase → complete', async () => {
    let v = (await commit(run('init', null, { cluster: 'Tiny', phases: 2 }, { actor: 'mc' }), null)).body;
    // The planner defines the phases …
    const planned = clone(v);
    planned.phases.definitions = [
      {
        id: '01-build',
        name: 'Build',
        status: 'pending',
        blocks: 1,
        blocks_complete: 0,
        started_at: null,
        completed_at: null,
      },
      {
        id: '02-ship',
        name: 'Ship',
        status: 'pending',
        blocks: 1,
        blocks_complete: 0,
        started_at: null,
        completed_at: null,
      },
    ];
    planned.position = {
      ...planned.position,
      phase_id: '01-build',
      phase_name: 'Build',
      block: 1,
      block_id: '01-01',
      wave: 1,
      thread: 1,
      thread_total: 2,
    };
    v = (await commit(planned, v, 'planner')).body;
    // … MC starts the mission …
    v = (await commit(run('set-status', v, { status: 'in_progress' }), v, 'mc')).body;
    // … an executor works …
    v = (await commit(run('register-agent', v, { agent: 'executor-001', task: 'Build it' }), v, 'executor'))
      .body;
    v = (
      await commit(
        run('update-position', v, { thread: 2, last_agent: 'executor-001', last_commit: 'abc1234' }),
        v,
        'executor',
      )
    ).body;
    v = (
      await commit(run('complete-agent', v, { agent: 'executor-001', duration_seconds: 60 }), v, 'executor')
    ).body;
    // … MC advances and completes.
    v = (
      await commit(
        run('update-progress', v, {
          blocks_total: 2,
          blocks_complete: 1,
          threads_total: 4,
          threads_complete: 2,
        }),
        v,
        'mc',
      )
    ).body;
    v = (await commit(run('transition-phase', v, {}), v, 'mc')).body;
    v = (await commit(run('set-status', v, { status: 'complete' }), v, 'mc')).body;
    expect(v).toMatchObject({
      status: 'complete',
      phases: { current: 2, completed: ['01-build'] },
      position: { phase: 2, phase_id: '02-ship', block_id: '02-01' },
      agents: { active: [], completed: [{ id: 'executor-001', result: 'success', duration_seconds: 60 }] },
      resume: { last_agent: 'executor-001', last_commit: 'abc1234' },
    });
  });
});
