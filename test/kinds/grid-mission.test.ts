// Kind `grid-mission` (.grid/STATE.md): schema and defaults, the format rules (§3.1), the logical rules
// (§3.2, §3.3), the status and phase transitions (§7), and every cell of the role permission matrix (§4).
import { describe, expect, it } from 'vitest';
import type { CommitContext } from '../../src/core/kind.js';
import type { JsonObject } from '../../src/core/types.js';
import { gridMissionKind } from '../../src/kinds/grid-mission/kind.js';
import type { GridMission } from '../../src/kinds/grid-mission/model.js';
import {
  GRID_PERMISSION_TABLE,
  GRID_PERMISSIONS,
  GRID_ROLES,
  type GridRole,
  STATUS_TRANSITIONS,
} from '../../src/kinds/grid-mission/rules.js';
import { MISSION_STATUSES } from '../../src/kinds/grid-mission/schema.js';
import { getKind, validateSchema } from '../../src/kinds/registry.js';
import { clone, example, makeCtx } from './ctx.js';
import { expectRefused } from './expect-refusal.js';

const NOW = Date.parse('2026-01-24T17:00:00Z');
const seed = () => example('grid/seed') as unknown as GridMission;
const j = (b: GridMission) => b as unknown as JsonObject;

function ctxFor(over: Partial<CommitContext> = {}): CommitContext {
  return makeCtx({
    kind: 'grid-mission',
    id: 'mission',
    actor: 'mc',
    actor_kind: 'system',
    now: NOW,
    ...over,
  });
}

/** What the store does: schema first, then the kind's check (which may normalize `next`). */
async function commit(next: GridMission, prev: GridMission | null, over: Partial<CommitContext> = {}) {
  const body = j(next);
  validateSchema(gridMissionKind, body);
  const effects = await gridMissionKind.check!(body, prev ? j(prev) : null, ctxFor(over));
  return { body: body as unknown as GridMission, effects };
}

/** A stored version of `b`, as the kind leaves it (defaults filled, updated_at set). */
async function stored(b: GridMission = seed()): Promise<GridMission> {
  return (await commit(b, null)).body;
}

describe('grid-mission: registration and schema', () => {
  it('is registered with its file codec, operations and CLI group', () => {
    const k = getKind('grid-mission');
    // The registry hands out the kind with its file parser followed by the store's JSON policy.
    expect(k.schema).toBe(gridMissionKind.schema);
    expect(k.check).toBe(gridMissionKind.check);
    expect(k.cli).toBe('grid');
    expect(k.file?.defaultPath('mission')).toBe('.grid/STATE.md');
    expect(k.operations?.map((o) => o.name)).toEqual(
      expect.arrayContaining([
        'update-position',
        'register-agent',
        'complete-agent',
        'add-warning',
        'add-blocker',
        'resolve-blocker',
        'transition-phase',
        'set-status',
      ]),
    );
    for (const o of k.operations ?? []) expect(o.name).toMatch(/^[a-z]+(-[a-z]+)*$/);
  });

  it("the seed's example validates clean and is stored unchanged but for updated_at", async () => {
    const { body, effects } = await commit(seed(), null);
    // Only the event every write appends (§5.1 step 7).
    expect(effects?.events?.map((e) => e.type)).toEqual(['grid_state_updated']);
    expect(body).toEqual({ ...seed(), updated_at: '2026-01-24T17:00:00Z' });
    // At the example's own updated_at, nothing changes at all.
    const same = await commit(seed(), null, { now: Date.parse('2026-01-24T16:45:32Z') });
    expect(same.body).toEqual(seed());
  });

  it('fills every default of §2.2 and §2.3 into a minimal state', async () => {
    const minimal = {
      version: '1.0',
      session_id: 'sess-20260124T143000Z-abc123',
      mission_id: 'mission-20260124T140000Z-saas-dashboard',
      cluster: 'SaaS',
      created_at: '2026-01-24T14:00:00Z',
      updated_at: '2026-01-24T14:00:00Z',
      status: 'planning',
      mode: 'guided',
      phases: { total: 2, current: 1 },
      position: { phase: 1, block: 0, wave: 0, thread: 0, thread_total: 0 },
      progress: {},
      resume: { can_resume: true },
    } as unknown as GridMission;
    const { body } = await commit(minimal, null);
    expect(body).toEqual({
      ...minimal,
      updated_at: '2026-01-24T17:00:00Z',
      phases: { total: 2, current: 1, completed: [], definitions: [] },
      progress: { blocks_complete: 0, blocks_total: 0, threads_complete: 0, threads_total: 0, percent: 0 },
      agents: { active: [], completed: [] },
      persistent: { decisions: [], artifacts: [], tech_stack: {} },
      resume: {
        checkpoint_file: null,
        last_agent: null,
        last_commit: null,
        can_resume: true,
        resume_position: { phase: 1, block: 1, thread: 1 },
      },
      budget: { total_cost_usd: 0, session_cost_usd: 0, spawns_this_session: 0 },
      warnings: [],
      blockers: [],
      energy: 9000,
    });
  });

  it.each([
    'version',
    'session_id',
    'mission_id',
    'cluster',
    'created_at',
    'updated_at',
    'status',
    'mode',
    'phases',
    'position',
    'progress',
    'resume',
  ])('requires %s (§2.1)', async (field) => {
    const b = seed() as unknown as JsonObject;
    delete b[field];
    await expectRefused(
      () => commit(b as unknown as GridMission, null),
      'VALIDATION_FAILED',
      `/${field}`,
      'schema.required',
    );
  });

  it('requires phases.total, phases.current and resume.can_resume (§2.1); refuses unknown fields', async () => {
    const b = seed();
    delete (b.phases as Partial<GridMission['phases']>).total;
    await expectRefused(() => commit(b, null), 'VALIDATION_FAILED', '/phases/total', 'schema.required');
    const c = seed();
    delete (c.resume as Partial<GridMission['resume']>).can_resume;
    await expectRefused(() => commit(c, null), 'VALIDATION_FAILED', '/resume/can_resume', 'schema.required');
    const d = { ...seed(), transcript: [] } as unknown as GridMission;
    await expectRefused(
      () => commit(d, null),
      'VALIDATION_FAILED',
      '/transcript',
      'schema.additionalProperties',
    );
  });

  it('sets updated_at to the time of every write, whatever the writer sends', async () => {
    const b = { ...seed(), updated_at: '2030-01-01T00:00:00Z' };
    expect((await commit(b, null, { now: Date.parse('2026-01-24T18:30:15.250Z') })).body.updated_at).toBe(
      '2026-01-24T18:30:15.250Z',
    );
  });
});

// ---------------------------------------------------------------------------------------------------
// §3.1 format rules: one valid and one violating body per rule

type Mutate = (b: GridMission) => void;
const withBlocker: Mutate = (b) => {
  b.blockers = [
    { id: 'blocker-001', type: 'external_api', description: 'API down', added_at: '2026-01-24T16:00:00Z' },
  ];
};

const formatCases: Array<[rule: string, pointer: string, valid: Mutate, invalid: Mutate]> = [
  [
    'format.session-id',
    '/session_id',
    (b) => {
      b.session_id = 'sess-20260125T090000-zz99aa';
    },
    (b) => {
      b.session_id = 'sess-2026-01-24-abc123';
    },
  ],
  [
    'format.mission-id',
    '/mission_id',
    (b) => {
      b.mission_id = 'mission-20260124T140000-saas-v2';
    },
    (b) => {
      b.mission_id = 'mission-SaaS Dashboard';
    },
  ],
  [
    'format.phase-id',
    '/position/phase_id',
    (b) => {
      b.position.phase_id = '01-foundation-v2';
    },
    (b) => {
      b.position.phase_id = '1-foundation';
    },
  ],
  [
    'format.phase-id',
    '/persistent/decisions/0/affects_phases/1',
    (b) => {
      b.persistent.decisions[0]!.affects_phases[1] = '02-core';
    },
    (b) => {
      b.persistent.decisions[0]!.affects_phases[1] = 'core';
    },
  ],
  [
    'format.block-id',
    '/position/block_id',
    (b) => {
      b.position.block_id = '01-10';
    },
    (b) => {
      b.position.block_id = '01-3';
    },
  ],
  [
    'format.block-id',
    '/agents/active/0/block',
    (b) => {
      b.agents.active[0]!.block = '01-04';
    },
    (b) => {
      b.agents.active[0]!.block = 'block-4';
    },
  ],
  [
    'format.decision-id',
    '/persistent/decisions/0/id',
    (b) => {
      b.persistent.decisions[0]!.id = 'dec-100';
    },
    (b) => {
      b.persistent.decisions[0]!.id = 'dec-1';
    },
  ],
  [
    'format.artifact-id',
    '/persistent/artifacts/1/id',
    (b) => {
      b.persistent.artifacts[1]!.id = 'art-999';
    },
    (b) => {
      b.persistent.artifacts[1]!.id = 'artifact-002';
    },
  ],
  [
    'format.blocker-id',
    '/blockers/0/id',
    withBlocker,
    (b) => {
      withBlocker(b);
      b.blockers[0]!.id = 'blk-001';
    },
  ],
  [
    'format.agent-id',
    '/agents/active/0/id',
    (b) => {
      b.agents.active[0]!.id = 'recognizer-010';
    },
    (b) => {
      b.agents.active[0]!.id = 'coder-003';
    },
  ],
  [
    'format.agent-id',
    '/agents/completed/2/id',
    (b) => {
      b.agents.completed[2]!.id = 'memory-002';
    },
    (b) => {
      b.agents.completed[2]!.id = 'executor-2';
    },
  ],
  [
    'format.timestamp',
    '/created_at',
    (b) => {
      b.created_at = '2026-01-24T14:00:00.000Z';
    },
    (b) => {
      b.created_at = '2026-01-24 14:00:00';
    },
  ],
  [
    'format.timestamp',
    '/warnings/0/timestamp',
    (b) => {
      b.warnings[0]!.timestamp = '2026-01-24T15:30:00';
    },
    (b) => {
      b.warnings[0]!.timestamp = '2026-01-24T15:30:00+01:00';
    },
  ],
  [
    'format.timestamp',
    '/phases/definitions/0/started_at',
    (b) => {
      b.phases.definitions[0]!.started_at = null;
    },
    (b) => {
      b.phases.definitions[0]!.started_at = 'yesterday';
    },
  ],
  [
    'format.status',
    '/status',
    (b) => {
      b.status = 'failed';
    },
    (b) => {
      (b as { status: string }).status = 'done';
    },
  ],
  [
    'format.mode',
    '/mode',
    (b) => {
      b.mode = 'hands_on';
    },
    (b) => {
      (b as { mode: string }).mode = 'manual';
    },
  ],
  [
    'format.phase-status',
    '/phases/definitions/1/status',
    (b) => {
      b.phases.definitions[1]!.status = 'in_progress';
    },
    (b) => {
      (b.phases.definitions[1] as { status: string }).status = 'started';
    },
  ],
  [
    'format.agent-type',
    '/agents/active/0/type',
    (b) => {
      b.agents.active[0]!.type = 'scout';
    },
    (b) => {
      (b.agents.active[0] as { type: string }).type = 'coder';
    },
  ],
  [
    'format.agent-result',
    '/agents/completed/0/result',
    (b) => {
      b.agents.completed[0]!.result = 'timeout';
    },
    (b) => {
      (b.agents.completed[0] as { result: string }).result = 'ok';
    },
  ],
  [
    'format.artifact-type',
    '/persistent/artifacts/0/type',
    (b) => {
      b.persistent.artifacts[0]!.type = 'model';
    },
    (b) => {
      (b.persistent.artifacts[0] as { type: string }).type = 'document';
    },
  ],
  [
    'format.blocker-type',
    '/blockers/0/type',
    (b) => {
      withBlocker(b);
      b.blockers[0]!.type = 'permission';
    },
    (b) => {
      withBlocker(b);
      (b.blockers[0] as { type: string }).type = 'other';
    },
  ],
  [
    'format.warning-level',
    '/warnings/0/level',
    (b) => {
      b.warnings[0]!.level = 'warning';
    },
    (b) => {
      (b.warnings[0] as { level: string }).level = 'error';
    },
  ],
];

describe('grid-mission: §3.1 format rules', () => {
  it.each(formatCases)('%s at %s: a valid value passes', async (_rule, _pointer, valid) => {
    const b = seed();
    valid(b);
    await expect(commit(b, null)).resolves.toBeDefined();
  });

  it.each(formatCases)(
    '%s at %s: a violating value is refused naming the field',
    async (rule, pointer, _v, invalid) => {
      const b = seed();
      invalid(b);
      await expectRefused(() => commit(b, null), 'VALIDATION_FAILED', pointer, rule);
    },
  );

  it.each(formatCases)(
    '%s at %s: check alone (without the schema) names the same rule',
    async (rule, pointer, _v, invalid) => {
      const b = seed();
      invalid(b);
      await expectRefused(
        () => gridMissionKind.check!(j(b), null, ctxFor()),
        'VALIDATION_FAILED',
        pointer,
        rule,
      );
    },
  );
});

// ---------------------------------------------------------------------------------------------------
// §3.2 and §3.3 logical rules

const logicCases: Array<[rule: string, pointer: string, valid: Mutate, invalid: Mutate]> = [
  [
    'logic.current-phase',
    '/phases/current',
    (b) => {
      b.phases.total = 1;
    },
    (b) => {
      b.phases.total = 0;
    },
  ],
  [
    'logic.completed-phases',
    '/phases/completed',
    (b) => {
      // planning and failed missions are exempt from the count
      b.status = 'planning';
      b.phases.completed = ['01-foundation'];
    },
    (b) => {
      b.phases.completed = ['01-foundation'];
    },
  ],
  [
    'logic.position-phase',
    '/position/phase',
    (b) => {
      b.position.phase = 1;
    },
    (b) => {
      b.position.phase = 2;
    },
  ],
  [
    'logic.thread-total',
    '/position/thread',
    (b) => {
      b.position.thread = 4;
    },
    (b) => {
      b.position.thread = 5;
    },
  ],
  [
    'logic.progress-percent',
    '/progress/percent',
    (b) => {
      // by blocks: 2 / 12 = 16.67 (within 0.1)
      b.progress.percent = 16.7;
    },
    (b) => {
      b.progress.percent = 50;
    },
  ],
  [
    'logic.unique-active-agents',
    '/agents/active/1/id',
    (b) => {
      b.agents.active.push({ ...b.agents.active[0]!, id: 'executor-004' });
    },
    (b) => {
      b.agents.active.push({ ...b.agents.active[0]! });
    },
  ],
  [
    'logic.blocked-checkpoint',
    '/resume/checkpoint_file',
    (b) => {
      b.status = 'blocked';
      b.resume.checkpoint_file = '.grid/CHECKPOINT.md';
    },
    (b) => {
      b.status = 'blocked';
    },
  ],
  [
    'logic.timestamp-valid',
    '/created_at',
    (b) => {
      b.created_at = '2024-02-29T14:00:00Z';
    },
    (b) => {
      b.created_at = '2026-02-30T14:00:00Z';
    },
  ],
  [
    'logic.timestamp-valid',
    '/agents/active/0/spawned_at',
    (b) => {
      b.agents.active[0]!.spawned_at = '2026-01-24T16:30:00.123Z';
    },
    (b) => {
      // §3.1 allows milliseconds without Z; §3.3 (strptime) does not
      b.agents.active[0]!.spawned_at = '2026-01-24T16:30:00.123';
    },
  ],
  [
    'logic.chronological-order',
    '/updated_at',
    (b) => {
      b.created_at = '2026-01-24T17:00:00Z';
      b.updated_at = '2026-01-24T17:00:00Z';
    },
    // Written after created_at, but the write time (17:00:00) that replaces it is before.
    (b) => {
      b.created_at = '2026-01-24T17:00:01Z';
      b.updated_at = '2026-01-24T17:00:01Z';
    },
  ],
  [
    'logic.phase-chronology',
    '/phases/definitions/0/completed_at',
    (b) => {
      b.phases.definitions[0]!.completed_at = '2026-01-24T14:05:00Z';
    },
    (b) => {
      b.phases.definitions[0]!.completed_at = '2026-01-24T14:04:59Z';
    },
  ],
  [
    'logic.unique-ids',
    '/persistent/decisions/1/id',
    (b) => {
      b.persistent.decisions[1]!.id = 'dec-003';
    },
    (b) => {
      b.persistent.decisions[1]!.id = 'dec-001';
    },
  ],
  [
    'logic.unique-ids',
    '/blockers/1/id',
    (b) => {
      withBlocker(b);
      b.blockers.push({ ...b.blockers[0]!, id: 'blocker-002' });
    },
    (b) => {
      withBlocker(b);
      b.blockers.push({ ...b.blockers[0]! });
    },
  ],
];

describe('grid-mission: §3.2 and §3.3 logical rules', () => {
  it.each(logicCases)('%s at %s: a consistent body passes', async (_rule, _pointer, valid) => {
    const b = seed();
    valid(b);
    await expect(commit(b, null)).resolves.toBeDefined();
  });

  it.each(logicCases)(
    '%s at %s: an inconsistent one is refused naming the field',
    async (rule, pointer, _v, invalid) => {
      const b = seed();
      invalid(b);
      await expectRefused(() => commit(b, null), 'VALIDATION_FAILED', pointer, rule);
    },
  );

  it("progress percent: the seed's example counts threads (9/48 = 18.75), which is accepted too", async () => {
    const b = seed();
    expect(b.progress).toMatchObject({ blocks_complete: 2, blocks_total: 12, percent: 18.75 });
    await expect(commit(b, null)).resolves.toBeDefined();
    b.progress.threads_total = 0; // no thread counts: only the block counts decide
    await expectRefused(
      () => commit(b, null),
      'VALIDATION_FAILED',
      '/progress/percent',
      'logic.progress-percent',
    );
    b.progress.blocks_total = 0; // no block counts: the percent is not checked (§3.2)
    b.progress.blocks_complete = 0;
    await expect(commit(b, null)).resolves.toBeDefined();
  });

  it('mission_id and created_at are fixed once written (identity-immutable)', async () => {
    const prev = await stored();
    await expectRefused(
      () => commit({ ...clone(prev), mission_id: 'mission-20260124T140000Z-other' }, prev),
      'VALIDATION_FAILED',
      '/mission_id',
      'identity-immutable',
    );
    await expectRefused(
      () => commit({ ...clone(prev), created_at: '2026-01-24T13:00:00Z' }, prev),
      'VALIDATION_FAILED',
      '/created_at',
      'identity-immutable',
    );
  });
});

// ---------------------------------------------------------------------------------------------------
// §7 transitions

function withStatus(status: GridMission['status']): GridMission {
  const b = seed();
  b.status = status;
  b.resume.checkpoint_file = '.grid/CHECKPOINT.md';
  return b;
}

const statusPairs = MISSION_STATUSES.flatMap((from) => MISSION_STATUSES.map((to) => [from, to] as const));

describe('grid-mission: §7.1 status transitions', () => {
  it.each(statusPairs)('%s → %s', async (from, to) => {
    const prev = await stored(withStatus(from));
    const next = { ...clone(prev), status: to };
    const allowed = from === to || (STATUS_TRANSITIONS[from] ?? []).includes(to);
    if (allowed) {
      const { effects } = await commit(next, prev);
      if (from !== to) {
        expect(effects?.events?.filter((e) => e.type !== 'grid_state_updated')).toEqual([
          {
            type: 'grid_status_changed',
            data: { mission_id: prev.mission_id, from, to, role: 'mc' },
          },
        ]);
      }
    } else {
      const d = await expectRefused(
        () => commit(next, prev),
        'INVALID_TRANSITION',
        '/status',
        'status-transition',
      );
      expect(d).toMatchObject({ from, to });
    }
  });

  it('the table is the seed’s: planning → in_progress; in_progress → blocked | complete | failed; blocked → in_progress | failed', () => {
    expect(STATUS_TRANSITIONS).toEqual({
      planning: ['in_progress'],
      in_progress: ['blocked', 'complete', 'failed'],
      blocked: ['in_progress', 'failed'],
      complete: [],
      failed: [],
    });
  });

  it('a new document may start in any status (importing a mission under way)', async () => {
    for (const s of MISSION_STATUSES) await expect(commit(withStatus(s), null)).resolves.toBeDefined();
  });
});

/** The seed advanced to phase 2 as §7.2 does it. */
function advanced(b: GridMission): GridMission {
  const n = clone(b);
  n.phases.current = 2;
  n.phases.completed = ['01-foundation'];
  n.phases.definitions[0]!.status = 'complete';
  n.phases.definitions[0]!.completed_at = '2026-01-24T16:50:00Z';
  n.phases.definitions[1]!.status = 'in_progress';
  n.phases.definitions[1]!.started_at = '2026-01-24T16:50:00Z';
  n.position = {
    ...n.position,
    phase: 2,
    phase_id: '02-core',
    phase_name: 'Core Features',
    block: 1,
    block_id: '02-01',
    wave: 1,
    thread: 1,
  };
  return n;
}

describe('grid-mission: §7.2 phase transitions', () => {
  it('advancing one phase, completing the previous one, is accepted and recorded as an event', async () => {
    const prev = await stored();
    const { effects } = await commit(advanced(prev), prev);
    expect(effects?.events?.filter((e) => e.type !== 'grid_state_updated')).toEqual([
      {
        type: 'grid_phase_advanced',
        data: {
          mission_id: prev.mission_id,
          from: 1,
          to: 2,
          completed: ['01-foundation'],
          phase_id: '02-core',
          role: 'mc',
        },
      },
    ]);
  });

  it('skipping a phase is refused', async () => {
    const prev = await stored();
    const next = advanced(prev);
    next.phases.total = 3;
    next.phases.current = 3;
    next.position.phase = 3;
    next.phases.completed = ['01-foundation', '02-core'];
    next.phases.definitions[1]!.status = 'complete';
    next.phases.definitions[1]!.completed_at = '2026-01-24T16:55:00Z';
    const d = await expectRefused(
      () => commit(next, prev),
      'INVALID_TRANSITION',
      '/phases/current',
      'phase-transition',
    );
    expect(d).toMatchObject({ from: '1', to: '3' });
  });

  it('going back a phase is refused', async () => {
    const prev = await stored(advanced(seed()));
    const back = seed();
    back.phases.definitions = prev.phases.definitions;
    await expectRefused(
      () => commit(back, prev),
      'INVALID_TRANSITION',
      '/phases/current',
      'phase-transition',
    );
  });

  it('completed phases cannot be taken back', async () => {
    // A planning mission is exempt from the completed-count rule (§3.2), so only the transition rule speaks.
    const prev = await stored({ ...advanced(seed()), status: 'planning' });
    const dropped = clone(prev);
    dropped.phases.completed = [];
    await expectRefused(
      () => commit(dropped, prev),
      'INVALID_TRANSITION',
      '/phases/completed',
      'phase-transition',
    );
  });

  it('a phase completed by the advance must be complete in its definition', async () => {
    const prev = await stored();
    const next = advanced(prev);
    next.phases.definitions[0]!.status = 'in_progress';
    next.phases.definitions[0]!.completed_at = null;
    await expectRefused(
      () => commit(next, prev),
      'INVALID_TRANSITION',
      '/phases/definitions/0/status',
      'phase-transition',
    );
  });

  it('phase definitions: pending → in_progress → complete; complete is final', async () => {
    const prev = await stored(advanced(seed()));
    const reopened = clone(prev);
    reopened.phases.definitions[0]!.status = 'in_progress';
    await expectRefused(
      () => commit(reopened, prev),
      'INVALID_TRANSITION',
      '/phases/definitions/0/status',
      'phase-status-transition',
    );
    const backToPending = clone(prev);
    backToPending.phases.definitions[1]!.status = 'pending';
    await expectRefused(
      () => commit(backToPending, prev),
      'INVALID_TRANSITION',
      '/phases/definitions/1/status',
      'phase-status-transition',
    );
    const skipped = clone(prev);
    skipped.phases.definitions[2]!.status = 'complete';
    await expect(commit(skipped, prev)).resolves.toBeDefined();
  });
});

// ---------------------------------------------------------------------------------------------------
// §4 permissions: every cell of the matrix

/** One write per field group, each valid under every other rule (so only the permission decides). */
const FIELD_WRITES: Array<[path: string, pointer: string, mutate: Mutate]> = [
  [
    'version',
    '/version',
    (b) => {
      b.version = '1.1';
    },
  ],
  [
    'session_id',
    '/session_id',
    (b) => {
      b.session_id = 'sess-20260125T090000Z-zzz999';
    },
  ],
  [
    'cluster',
    '/cluster',
    (b) => {
      b.cluster = 'SaaS Dashboard v2';
    },
  ],
  [
    'status',
    '/status',
    (b) => {
      b.status = 'failed';
    },
  ],
  [
    'mode',
    '/mode',
    (b) => {
      b.mode = 'guided';
    },
  ],
  [
    'phases.total',
    '/phases/total',
    (b) => {
      b.phases.total = 4;
    },
  ],
  [
    'phases.definitions',
    '/phases/definitions',
    (b) => {
      b.phases.definitions[1]!.name = 'Core';
    },
  ],
  [
    'position',
    '/position/thread',
    (b) => {
      b.position.thread = 3;
    },
  ],
  [
    'position.block_name',
    '/position/block_name',
    (b) => {
      b.position.block_name = 'Routes';
    },
  ],
  [
    'progress',
    '/progress/blocks_complete',
    (b) => {
      b.progress.blocks_complete = 3;
      b.progress.percent = 25;
    },
  ],
  [
    'agents.active',
    '/agents/active',
    (b) => {
      b.agents.active[0]!.task = 'Implementing auth endpoints';
    },
  ],
  [
    'agents.completed',
    '/agents/completed',
    (b) => {
      b.agents.completed.push({ id: 'scout-001', type: 'scout', result: 'success', duration_seconds: 12 });
    },
  ],
  [
    'persistent.decisions',
    '/persistent/decisions',
    (b) => {
      b.persistent.decisions.push({
        id: 'dec-003',
        decision: 'Use zod',
        phase_decided: '01-foundation',
        affects_phases: ['01-foundation'],
        rationale: 'One validation library',
      });
    },
  ],
  [
    'persistent.artifacts',
    '/persistent/artifacts',
    (b) => {
      b.persistent.artifacts.push({
        id: 'art-003',
        type: 'api',
        path: 'openapi.yaml',
        created_phase: '01-foundation',
        used_by_phases: ['02-core'],
      });
    },
  ],
  [
    'persistent.tech_stack',
    '/persistent/tech_stack/runtime',
    (b) => {
      b.persistent.tech_stack.runtime = 'node-22';
    },
  ],
  [
    'resume.checkpoint_file',
    '/resume/checkpoint_file',
    (b) => {
      b.resume.checkpoint_file = '.grid/CHECKPOINT.md';
    },
  ],
  [
    'resume.last_agent',
    '/resume/last_agent',
    (b) => {
      b.resume.last_agent = 'executor-004';
    },
  ],
  [
    'resume.last_commit',
    '/resume/last_commit',
    (b) => {
      b.resume.last_commit = 'a1b2c3d';
    },
  ],
  [
    'resume.can_resume',
    '/resume/can_resume',
    (b) => {
      b.resume.can_resume = false;
    },
  ],
  [
    'resume.resume_position',
    '/resume/resume_position/thread',
    (b) => {
      b.resume.resume_position.thread = 3;
    },
  ],
  [
    'budget',
    '/budget/total_cost_usd',
    (b) => {
      b.budget.total_cost_usd = 2.5;
    },
  ],
  [
    'warnings',
    '/warnings',
    (b) => {
      b.warnings.push({
        level: 'warning',
        message: 'flaky test',
        source: 'recognizer-001',
        timestamp: '2026-01-24T16:50:00Z',
      });
    },
  ],
  ['blockers', '/blockers', withBlocker],
  [
    'energy',
    '/energy',
    (b) => {
      b.energy = 9001;
    },
  ],
  [
    'markdown_body',
    '/markdown_body',
    (b) => {
      b.markdown_body = '# Notes\n';
    },
  ],
  // Sending the same state again still writes updated_at.
  [
    'updated_at',
    '/updated_at',
    (b) => {
      b.updated_at = '2026-01-24T16:59:00Z';
    },
  ],
];

/** The seed's §4.2 rule, computed independently: a listed path covers itself and what lies inside it. */
function expectedAllowed(role: GridRole, path: string): boolean {
  const grant: '*' | readonly string[] = GRID_PERMISSIONS[role];
  return grant === '*' || grant.some((g) => path === g || path.startsWith(`${g}.`));
}

const cells = GRID_ROLES.flatMap((role) =>
  FIELD_WRITES.map(
    ([path, pointer, mutate]) => [role, path, expectedAllowed(role, path), pointer, mutate] as const,
  ),
);

describe('grid-mission: §4 role permissions', () => {
  it('the matrix is the seed’s §4.2 AGENT_PERMISSIONS', () => {
    expect(GRID_PERMISSIONS).toEqual({
      mc: '*',
      executor: [
        'position',
        'agents.active',
        'agents.completed',
        'warnings',
        'resume.last_agent',
        'resume.last_commit',
        'updated_at',
      ],
      planner: ['phases.definitions', 'position', 'persistent.decisions', 'warnings', 'updated_at'],
      recognizer: ['warnings', 'blockers', 'updated_at'],
      scout: [],
      memory: ['persistent.decisions', 'persistent.artifacts', 'persistent.tech_stack', 'updated_at'],
    });
  });

  it.each(cells)('%s writing %s: allowed=%s', async (role, _path, allowed, pointer, mutate) => {
    const prev = await stored();
    const next = clone(prev);
    mutate(next);
    if (allowed) {
      await expect(commit(next, prev, { role, actor_kind: 'model' })).resolves.toBeDefined();
    } else {
      const d = await expectRefused(
        () => commit(next, prev, { role, actor_kind: 'model' }),
        'PERMISSION_DENIED',
        pointer,
        'field-permission',
      );
      expect(d.role).toBe(role);
    }
  });

  const columnWrites: Record<string, string[]> = {
    position: ['position'],
    agents: ['agents.active', 'agents.completed'],
    persistent: ['persistent.decisions', 'persistent.artifacts', 'persistent.tech_stack'],
    warnings: ['warnings'],
    blockers: ['blockers'],
    status: ['status'],
  };
  const tableCells = GRID_ROLES.flatMap((role) =>
    GRID_PERMISSION_TABLE.columns.map(
      (column, c) => [role, column, GRID_PERMISSION_TABLE.rows[role][c]!] as const,
    ),
  );
  it.each(tableCells)('§4.1 table: %s / write %s = %s', async (role, column, cell) => {
    const prev = await stored();
    for (const path of columnWrites[column]!) {
      const [, , mutate] = FIELD_WRITES.find(([p]) => p === path)!;
      const next = clone(prev);
      mutate(next);
      const yes = cell === 'YES' || (cell === 'YES (decisions only)' && path === 'persistent.decisions');
      const attempt = commit(next, prev, { role });
      if (yes) await expect(attempt, `${role} ${path}`).resolves.toBeDefined();
      else await expect(attempt, `${role} ${path}`).rejects.toMatchObject({ code: 'PERMISSION_DENIED' });
    }
  });

  it('a refusal names the first forbidden field, the role and every field it may not write', async () => {
    const prev = await stored();
    const next = clone(prev);
    next.status = 'failed';
    next.position.thread = 3;
    next.budget.total_cost_usd = 3;
    const d = await expectRefused(
      () => commit(next, prev, { role: 'executor' }),
      'PERMISSION_DENIED',
      '/status',
      'field-permission',
    );
    expect(d).toMatchObject({ role: 'executor', fields: ['/status', '/budget/total_cost_usd'] });
  });

  it('scout may write nothing, not even a touch of updated_at', async () => {
    const prev = await stored();
    await expectRefused(
      () => commit({ ...clone(prev), updated_at: '2020-01-01T00:00:00Z' }, prev, { role: 'scout' }),
      'PERMISSION_DENIED',
      '/updated_at',
      'field-permission',
    );
  });

  it('only MC creates the mission', async () => {
    await expect(commit(seed(), null, { role: 'mc', actor_kind: 'model' })).resolves.toBeDefined();
    for (const role of GRID_ROLES.filter((r) => r !== 'mc')) {
      await expect(commit(seed(), null, { role })).rejects.toMatchObject({ code: 'PERMISSION_DENIED' });
    }
  });

  it('role names are case-insensitive (the seed writes MC, Executor …); unknown roles are refused', async () => {
    const prev = await stored();
    const next = clone(prev);
    next.position.thread = 3;
    await expect(commit(clone(next), prev, { role: 'Executor' })).resolves.toBeDefined();
    await expect(commit({ ...clone(prev), status: 'failed' }, prev, { role: 'MC' })).resolves.toBeDefined();
    const d = await expectRefused(
      () => commit(next, prev, { role: 'admin' }),
      'PERMISSION_DENIED',
      '/',
      'unknown-role',
    );
    expect(d.roles).toEqual([...GRID_ROLES]);
  });

  it('without a role: a human or the system writes as MC; a model or a tool is refused (role-required)', async () => {
    const prev = await stored();
    const next = { ...clone(prev), status: 'failed' as const };
    for (const actor_kind of ['human', 'system'] as const) {
      await expect(commit(clone(next), prev, { role: null, actor_kind })).resolves.toBeDefined();
    }
    for (const actor_kind of ['model', 'tool'] as const) {
      const d = await expectRefused(
        () => commit(clone(next), prev, { role: null, actor_kind, actor: 'executor-003' }),
        'PERMISSION_DENIED',
        '/',
        'role-required',
      );
      expect(d.actor_kind).toBe(actor_kind);
    }
  });
});
