// Operations on a `grid-mission` (`agentstate grid <operation> <doc id> …`): pure functions from the
// current body to the next, run by the store as one CAS commit. They do not check permissions or the
// seed's rules themselves — the kind's `check` does, on the commit, with the writer's role — except where
// an early, clearer refusal helps (unknown agent or blocker, a phase transition with no next phase).

import { createHash } from 'node:crypto';
import type { InputSpec } from '../../core/input.js';
import type { KindOperation, OperationContext } from '../../core/kind.js';
import type { JsonObject } from '../../core/types.js';
import { InvalidInputError, InvalidTransitionError, NotFoundError } from '../../errors.js';
import { checkTransition } from '../rules.js';
import type { GridMission } from './model.js';
import { fillDefaults, gridTime, STATUS_TRANSITIONS, timestampMs } from './rules.js';
import {
  AGENT_RESULTS,
  AGENT_TYPES,
  type AgentResult,
  type AgentType,
  BLOCKER_TYPES,
  type BlockerType,
  MISSION_STATUSES,
  type MissionStatus,
  MODES,
  type Mode,
  WARNING_LEVELS,
  type WarningLevel,
} from './schema.js';

type Args = Record<string, unknown>;

function define<A>(op: {
  name: string;
  summary: string;
  input: InputSpec;
  positional?: string;
  creates?: boolean;
  apply(body: GridMission, args: A, ctx: OperationContext): void;
  create?(args: A, ctx: OperationContext): GridMission;
}): KindOperation {
  return {
    name: op.name,
    summary: op.summary,
    input: op.input,
    ...(op.positional ? { positional: op.positional } : {}),
    apply(body: JsonObject | null, raw: Args, ctx: OperationContext): JsonObject {
      // The store checked `raw` against op.input before calling (every kind operation's contract).
      const args = raw as A;
      if (op.create) {
        if (body !== null) {
          throw new InvalidInputError(`${op.name}: the mission already exists; update it instead`, {
            operation: op.name,
          });
        }
        return op.create(args, ctx) as unknown as JsonObject;
      }
      if (body === null) {
        throw new NotFoundError(`${op.name}: there is no mission yet; create it with \`grid init\``, {
          operation: op.name,
        });
      }
      const next = fillDefaults(structuredClone(body)) as unknown as GridMission;
      op.apply(next, args, ctx);
      return next as unknown as JsonObject;
    },
  };
}

const pad = (n: number, width: number) => String(n).padStart(width, '0');
const compactTime = (ms: number) =>
  new Date(ms)
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');

function slug(s: string): string {
  const x = s
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 48)
    .replace(/-+$/, '');
  return x || 'mission';
}

/** The phase number a phase id starts with (`02-core` → 2), or null. */
export function phaseNumber(phaseId: string): number | null {
  const m = /^(\d{2})-/.exec(phaseId);
  return m ? Number(m[1]) : null;
}

function findActive(b: GridMission, op: string, id: string) {
  const i = b.agents.active.findIndex((a) => a.id === id);
  if (i < 0) {
    throw new NotFoundError(
      `${op}: agent ${id} is not active (active: ${b.agents.active.map((a) => a.id).join(', ') || 'none'})`,
      { operation: op, field: 'agent', agent: id },
    );
  }
  return { index: i, agent: b.agents.active[i]! };
}

function nextId(prefix: string, ids: string[]): string {
  const re = new RegExp(`^${prefix}-(\\d{3})$`);
  const max = ids.reduce((m, id) => Math.max(m, Number(re.exec(id)?.[1] ?? 0)), 0);
  return `${prefix}-${pad(max + 1, 3)}`;
}

// ---------------------------------------------------------------------------------------------------

const init = define<{
  cluster: string;
  mode?: Mode;
  phases?: number;
  mission_id?: string;
  session_id?: string;
  version?: string;
}>({
  name: 'init',
  summary: 'Create the mission: status planning, phase 1 of N, nothing started.',
  input: {
    cluster: { type: 'string', required: true },
    mode: { type: 'string', enum: MODES },
    phases: { type: 'int', min: 1, max: 99 },
    mission_id: { type: 'name' },
    session_id: { type: 'name' },
    version: { type: 'name' },
  },
  positional: 'cluster',
  apply() {},
  create(a, ctx) {
    const at = gridTime(ctx.now);
    const stamp = compactTime(ctx.now);
    const random = createHash('sha256')
      .update(`${ctx.actor}\n${ctx.now}\n${a.cluster}`)
      .digest('hex')
      .slice(0, 6);
    return fillDefaults({
      version: a.version ?? '1.0',
      session_id: a.session_id ?? `sess-${stamp}-${random}`,
      mission_id: a.mission_id ?? `mission-${stamp}-${slug(a.cluster)}`,
      cluster: a.cluster,
      created_at: at,
      updated_at: at,
      status: 'planning',
      mode: a.mode ?? 'autopilot',
      phases: { total: a.phases ?? 1, current: 1 },
      position: { phase: 1, block: 0, wave: 0, thread: 0, thread_total: 0 },
      progress: {},
      resume: { can_resume: true },
    }) as unknown as GridMission;
  },
});

const updatePosition = define<{
  block?: number;
  block_id?: string;
  block_name?: string;
  wave?: number;
  thread?: number;
  thread_total?: number;
  last_agent?: string;
  last_commit?: string;
}>({
  name: 'update-position',
  summary:
    'Move within the current phase (block, wave, thread); record the last agent and commit for resuming.',
  input: {
    block: { type: 'int', min: 0 },
    block_id: { type: 'name' },
    block_name: { type: 'string' },
    wave: { type: 'int', min: 0 },
    thread: { type: 'int', min: 0 },
    thread_total: { type: 'int', min: 0 },
    last_agent: { type: 'name' },
    last_commit: { type: 'name' },
  },
  apply(b, a) {
    if (Object.values(a).every((v) => v === undefined)) {
      throw new InvalidInputError('update-position: give at least one field to change', {
        operation: 'update-position',
      });
    }
    const pos = b.position;
    if (a.block !== undefined && a.block !== pos.block) {
      pos.block = a.block;
      const nn = phaseNumber(pos.phase_id ?? '') ?? pos.phase;
      pos.block_id = `${pad(nn, 2)}-${pad(a.block, 2)}`;
      delete pos.block_name;
    }
    if (a.block_id !== undefined) pos.block_id = a.block_id;
    if (a.block_name !== undefined) pos.block_name = a.block_name;
    if (a.wave !== undefined) pos.wave = a.wave;
    if (a.thread !== undefined) pos.thread = a.thread;
    if (a.thread_total !== undefined) pos.thread_total = a.thread_total;
    if (a.last_agent !== undefined) b.resume.last_agent = a.last_agent;
    if (a.last_commit !== undefined) b.resume.last_commit = a.last_commit;
  },
});

const updateProgress = define<{
  blocks_complete?: number;
  blocks_total?: number;
  threads_complete?: number;
  threads_total?: number;
}>({
  name: 'update-progress',
  summary: 'Set the block and thread counts; the percent follows them (threads when counted, else blocks).',
  input: {
    blocks_complete: { type: 'int', min: 0 },
    blocks_total: { type: 'int', min: 0 },
    threads_complete: { type: 'int', min: 0 },
    threads_total: { type: 'int', min: 0 },
  },
  apply(b, a) {
    const p = b.progress;
    Object.assign(
      p,
      Object.fromEntries(Object.entries(a).filter(([, v]) => v !== undefined)) as Partial<typeof p>,
    );
    const ratio =
      p.threads_total > 0
        ? p.threads_complete / p.threads_total
        : p.blocks_total > 0
          ? p.blocks_complete / p.blocks_total
          : 0;
    p.percent = Math.round(ratio * 10_000) / 100;
  },
});

const registerAgent = define<{
  agent: string;
  type?: AgentType;
  task: string;
  phase?: string;
  block?: string;
}>({
  name: 'register-agent',
  summary: 'Add an agent to the active agents (spawned and heartbeat now), in the current phase and block.',
  input: {
    agent: { type: 'name', required: true },
    type: { type: 'string', enum: AGENT_TYPES },
    task: { type: 'string', required: true },
    phase: { type: 'name' },
    block: { type: 'name' },
  },
  positional: 'agent',
  apply(b, a, ctx) {
    if (b.agents.active.some((x) => x.id === a.agent)) {
      throw new InvalidInputError(`register-agent: agent ${a.agent} is already active`, {
        operation: 'register-agent',
        field: 'agent',
      });
    }
    const type = a.type ?? (AGENT_TYPES as readonly string[]).find((t) => a.agent.startsWith(`${t}-`));
    const phase = a.phase ?? b.position.phase_id;
    const block = a.block ?? b.position.block_id;
    for (const [field, v] of [
      ['type', type],
      ['phase', phase],
      ['block', block],
    ] as const) {
      if (v === undefined) {
        throw new InvalidInputError(
          `register-agent: give ${field} (it cannot be taken from the agent id or the current position)`,
          { operation: 'register-agent', field },
        );
      }
    }
    const at = gridTime(ctx.now);
    b.agents.active.push({
      id: a.agent,
      type: type as AgentType,
      spawned_at: at,
      task: a.task,
      phase: phase as string,
      block: block as string,
      last_heartbeat: at,
    });
  },
});

const heartbeat = define<{ agent: string }>({
  name: 'heartbeat',
  summary: "Set an active agent's last heartbeat to now.",
  input: { agent: { type: 'name', required: true } },
  positional: 'agent',
  apply(b, a, ctx) {
    findActive(b, 'heartbeat', a.agent).agent.last_heartbeat = gridTime(ctx.now);
  },
});

const completeAgent = define<{ agent: string; result?: AgentResult; duration_seconds?: number }>({
  name: 'complete-agent',
  summary: 'Move an agent from the active agents to the completed ones, with its result and duration.',
  input: {
    agent: { type: 'name', required: true },
    result: { type: 'string', enum: AGENT_RESULTS },
    duration_seconds: { type: 'int', min: 0 },
  },
  positional: 'agent',
  apply(b, a, ctx) {
    const { index, agent } = findActive(b, 'complete-agent', a.agent);
    const since = timestampMs(agent.spawned_at);
    const measured = since === null ? 0 : Math.max(0, Math.floor((ctx.now - since) / 1000));
    b.agents.active.splice(index, 1);
    b.agents.completed.push({
      id: agent.id,
      type: agent.type,
      result: a.result ?? 'success',
      duration_seconds: a.duration_seconds ?? measured,
    });
  },
});

const addWarning = define<{ message: string; level?: WarningLevel; source?: string }>({
  name: 'add-warning',
  summary: 'Record a non-blocking warning (source: the writer unless given).',
  input: {
    message: { type: 'string', required: true },
    level: { type: 'string', enum: WARNING_LEVELS },
    source: { type: 'name' },
  },
  positional: 'message',
  apply(b, a, ctx) {
    b.warnings.push({
      level: a.level ?? 'warning',
      message: a.message,
      source: a.source ?? ctx.actor,
      timestamp: gridTime(ctx.now),
    });
  },
});

const addBlocker = define<{ description: string; type: BlockerType; blocking_thread?: string; id?: string }>({
  name: 'add-blocker',
  summary: 'Record a blocking issue (id blocker-NNN, the next free number unless given).',
  input: {
    description: { type: 'string', required: true },
    type: { type: 'string', enum: BLOCKER_TYPES, required: true },
    blocking_thread: { type: 'name' },
    id: { type: 'name' },
  },
  positional: 'description',
  apply(b, a, ctx) {
    const id =
      a.id ??
      nextId(
        'blocker',
        b.blockers.map((x) => x.id),
      );
    if (b.blockers.some((x) => x.id === id)) {
      throw new InvalidInputError(`add-blocker: blocker ${id} already exists`, {
        operation: 'add-blocker',
        field: 'id',
      });
    }
    b.blockers.push({
      id,
      type: a.type,
      description: a.description,
      ...(a.blocking_thread === undefined ? {} : { blocking_thread: a.blocking_thread }),
      added_at: gridTime(ctx.now),
    });
  },
});

const resolveBlocker = define<{ blocker: string }>({
  name: 'resolve-blocker',
  summary: 'Remove a resolved blocker.',
  input: { blocker: { type: 'name', required: true } },
  positional: 'blocker',
  apply(b, a) {
    const i = b.blockers.findIndex((x) => x.id === a.blocker);
    if (i < 0) {
      throw new NotFoundError(
        `resolve-blocker: no blocker ${a.blocker} (blockers: ${b.blockers.map((x) => x.id).join(', ') || 'none'})`,
        { operation: 'resolve-blocker', field: 'blocker', blocker: a.blocker },
      );
    }
    b.blockers.splice(i, 1);
  },
});

const transitionPhase = define<{ next_phase?: string; thread_total?: number }>({
  name: 'transition-phase',
  summary:
    'Complete the current phase and start the next (§7.2): current + 1, completed phases, position at its block 1, definitions updated.',
  input: { next_phase: { type: 'name' }, thread_total: { type: 'int', min: 1 } },
  positional: 'next_phase',
  apply(b, a, ctx) {
    const cur = b.phases.current;
    const defs = b.phases.definitions;
    const completedId = defs[cur - 1]?.id ?? b.position.phase_id;
    if (completedId === undefined) {
      throw new InvalidInputError(
        `transition-phase: phase ${cur} has no id (no phases.definitions entry, no position.phase_id)`,
        { operation: 'transition-phase' },
      );
    }
    const nextId = a.next_phase ?? defs[cur]?.id;
    if (nextId === undefined) {
      throw new InvalidTransitionError(
        `transition-phase: phase ${cur} is the last defined phase; give next_phase, or set the mission status to complete`,
        { from: String(cur), pointer: '/phases/current', rule: 'phase-transition' },
      );
    }
    const n = phaseNumber(nextId);
    if (n !== cur + 1) {
      throw new InvalidTransitionError(
        `transition-phase: the next phase must be phase ${cur + 1}, not ${JSON.stringify(nextId)}`,
        { from: String(cur), to: String(n ?? nextId), pointer: '/phases/current', rule: 'phase-transition' },
      );
    }
    const at = gridTime(ctx.now);
    const done = defs.find((d) => d.id === completedId);
    if (done && done.status !== 'complete') {
      done.status = 'complete';
      done.completed_at = at;
    }
    const started = defs.find((d) => d.id === nextId);
    if (started && started.status === 'pending') {
      started.status = 'in_progress';
      started.started_at = at;
    }
    b.phases.current = n;
    b.phases.completed = [...b.phases.completed, completedId];
    const threadTotal = a.thread_total ?? Math.max(1, b.position.thread_total);
    b.position = {
      phase: n,
      phase_id: nextId,
      ...(started ? { phase_name: started.name } : {}),
      block: 1,
      block_id: `${nextId.slice(0, 2)}-01`,
      wave: 1,
      thread: 1,
      thread_total: threadTotal,
    };
  },
});

const setStatus = define<{ status: MissionStatus; checkpoint_file?: string | null }>({
  name: 'set-status',
  summary:
    'Change the mission status (planning → in_progress → blocked | complete | failed; blocked → in_progress | failed). Blocking needs a checkpoint file.',
  input: {
    status: { type: 'string', enum: MISSION_STATUSES, required: true },
    checkpoint_file: { type: 'string', nullable: true },
  },
  positional: 'status',
  apply(b, a) {
    checkTransition(STATUS_TRANSITIONS, b.status, a.status, {
      pointer: '/status',
      rule: 'status-transition',
      subject: 'mission status',
    });
    b.status = a.status;
    if (a.checkpoint_file !== undefined) b.resume.checkpoint_file = a.checkpoint_file;
  },
});

/** The operations of kind `grid-mission`, exposed as `agentstate grid <name> <doc id> …`. */
export const gridOperations: KindOperation[] = [
  init,
  updatePosition,
  updateProgress,
  registerAgent,
  heartbeat,
  completeAgent,
  addWarning,
  addBlocker,
  resolveBlocker,
  transitionPhase,
  setStatus,
];
