// The bundle workflows: name → payload spec → service call. The library, the CLI and
// `bun skill/scripts/<Name>.ts` all run them through here, so they behave identically.
import { DOC_INPUTS } from '../core/document-store.js';
import { APPEND_INPUT } from '../core/event-log.js';
import { checkInput, type InputSpec } from '../core/input.js';
import type {
  AnnotateInput,
  AppendEventInput,
  ClaimInput,
  CommitInput,
  EnqueueInput,
  HeartbeatInput,
  ReleaseInput,
  ResolveInput,
} from '../core/types.js';
import { WORK_INPUTS } from '../core/work-queue.js';
import { InvalidInputError } from '../errors.js';
import type { Instance } from '../instance/instance.js';
import { scaffold } from '../instance/scaffold.js';
import { regenerateDashboard } from '../reports/dashboard.js';
import { RETRO_INPUT, type RetroInput, retrospective } from '../reports/retro.js';

export interface WorkflowDef {
  /** One line for `--help` and the skill docs. */
  summary: string;
  /** The payload's fields; checked before the instance is even opened, so bad input writes nothing. */
  input: InputSpec;
  run(inst: Instance, payload: unknown): Promise<unknown>;
}

const { limit: _limit, ...CLAIM_ONE } = WORK_INPUTS.claim;

export const WORKFLOWS = {
  ScaffoldFolders: {
    summary: 'Create the instance layout and run migrations (idempotent).',
    input: {},
    async run(inst) {
      const result = scaffold(inst);
      await regenerateDashboard(inst);
      return result;
    },
  },
  EnqueueWorkItem: {
    summary: 'Insert a pending work item (an existing idempotency_key returns the existing item).',
    input: WORK_INPUTS.enqueue,
    run: (inst, payload) => inst.work.enqueue(payload as EnqueueInput),
  },
  ClaimWorkItem: {
    summary: 'Atomically claim the highest-priority ready item under a lease; null when none is ready.',
    input: CLAIM_ONE,
    run: (inst, payload) => inst.work.claim(payload as ClaimInput),
  },
  ResolveWorkItem: {
    summary: 'Finish a claimed item as done or failed (LEASE_LOST if the lease is no longer yours).',
    input: WORK_INPUTS.resolve,
    run: (inst, payload) => inst.work.resolve(payload as ResolveInput),
  },
  HeartbeatWorkItem: {
    summary: 'Extend your lease on a claimed item (LEASE_LOST if it is no longer yours).',
    input: WORK_INPUTS.heartbeat,
    run: (inst, payload) => inst.work.heartbeat(payload as HeartbeatInput),
  },
  ReleaseWorkItem: {
    summary: 'Hand a claimed item back to the queue without spending the attempt (graceful stop).',
    input: WORK_INPUTS.release,
    run: (inst, payload) => inst.work.release(payload as ReleaseInput),
  },
  GetWorkItem: {
    summary: 'Read one work item by id (exit 1 when there is none).',
    input: WORK_INPUTS.get,
    run: (inst, payload) => inst.work.get((payload as { id: string }).id),
  },
  AnnotateWorkItem: {
    summary: "Merge metadata (e.g. session_id) into an item's notes; emits work_item_annotated.",
    input: WORK_INPUTS.annotate,
    run: (inst, payload) => inst.work.annotate(payload as AnnotateInput),
  },
  AppendEvent: {
    summary: 'Append an event to the hash-chained, append-only log.',
    input: APPEND_INPUT,
    run: (inst, payload) => inst.events.append(payload as AppendEventInput),
  },
  ReplayPending: {
    summary: 'Reclaim expired leases, re-emit every unfinished item as work_item_replayed, return them.',
    input: {},
    run: (inst) => inst.work.replayPending(),
  },
  RegenerateDashboard: {
    summary: 'Rewrite dashboard.md from the store; returns its path and the event position it reflects.',
    input: {},
    run: (inst) => regenerateDashboard(inst),
  },
  RetrospectiveSummary: {
    summary: 'Write a Markdown retro of a time window to retros/ and return it.',
    input: RETRO_INPUT,
    run: (inst, payload) => retrospective(inst, payload as RetroInput),
  },
  CommitState: {
    summary: 'Compare-and-swap commit of a versioned document (STATE_CONFLICT if it moved on).',
    input: DOC_INPUTS.commit,
    run: (inst, payload) => inst.docs.commit(payload as CommitInput),
  },
  GetState: {
    summary: 'Read a versioned document: the latest version, or {version}, or only {paths} (a projection).',
    input: { ...DOC_INPUTS.get, paths: { type: 'names' } },
    async run(inst, payload) {
      const p = payload as { kind: string; id: string; version?: number; paths?: string[] };
      if (p.paths === undefined) return inst.docs.get(p);
      if (p.version !== undefined) {
        throw new InvalidInputError('GetState: give either version or paths, not both', { field: 'paths' });
      }
      return inst.docs.project({ kind: p.kind, id: p.id, paths: p.paths });
    },
  },
} satisfies Record<string, WorkflowDef>;

export type WorkflowName = keyof typeof WORKFLOWS;

export const WORKFLOW_NAMES = Object.keys(WORKFLOWS) as WorkflowName[];

export function isWorkflowName(name: string): name is WorkflowName {
  return Object.hasOwn(WORKFLOWS, name);
}

/** Checks a workflow payload against its spec (INVALID_INPUT naming the field). */
export function checkPayload(name: WorkflowName, payload: unknown): unknown {
  return checkInput(name, payload ?? {}, WORKFLOWS[name].input);
}

/**
 * Runs a workflow against an open instance with a payload object, exactly as the CLI and the
 * skill scripts do.
 * @example await runWorkflow(inst, 'EnqueueWorkItem', { title: 'triage inbox' })
 */
export async function runWorkflow(
  inst: Instance,
  name: WorkflowName,
  payload: unknown = {},
): Promise<unknown> {
  return WORKFLOWS[name].run(inst, checkPayload(name, payload));
}
