// The ten workflows of the agent bundle: name → payload handling → service call. The library, the
// CLI and `bun skill/scripts/<Name>.ts` all run them through here, so they behave identically.
import { checkInput } from '../core/input.js';
import type {
  AnnotateInput,
  AppendEventInput,
  ClaimInput,
  CommitInput,
  EnqueueInput,
  ResolveInput,
} from '../core/types.js';
import { InvalidInputError } from '../errors.js';
import type { Instance } from '../instance/instance.js';
import { scaffold } from '../instance/scaffold.js';
import { regenerateDashboard } from '../reports/dashboard.js';
import { type RetroInput, retrospective } from '../reports/retro.js';

export interface WorkflowDef {
  /** One line for `--help` and the skill docs. */
  summary: string;
  run(inst: Instance, payload: unknown): Promise<unknown>;
}

export const WORKFLOWS = {
  ScaffoldFolders: {
    summary: 'Create the instance layout and run migrations (idempotent).',
    async run(inst, payload) {
      checkInput('ScaffoldFolders', payload, {});
      const result = scaffold(inst);
      await regenerateDashboard(inst);
      return result;
    },
  },
  EnqueueWorkItem: {
    summary: 'Insert a pending work item (an existing idempotency_key returns the existing item).',
    run: (inst, payload) => inst.work.enqueue(payload as EnqueueInput),
  },
  ClaimWorkItem: {
    summary: 'Atomically claim the highest-priority ready item under a lease; null when none is ready.',
    run: (inst, payload) => inst.work.claim(payload as ClaimInput),
  },
  ResolveWorkItem: {
    summary: 'Finish a claimed item as done or failed (LEASE_LOST if the lease is no longer yours).',
    run: (inst, payload) => inst.work.resolve(payload as ResolveInput),
  },
  GetWorkItem: {
    summary: 'Read one work item by id (exit 1 when there is none).',
    async run(inst, payload) {
      const p = checkInput<{ id: string }>('GetWorkItem', payload, { id: { type: 'name', required: true } });
      return inst.work.get(p.id);
    },
  },
  AnnotateWorkItem: {
    summary: "Merge metadata (e.g. session_id) into an item's notes; emits work_item_annotated.",
    run: (inst, payload) => inst.work.annotate(payload as AnnotateInput),
  },
  AppendEvent: {
    summary: 'Append an event to the hash-chained, append-only log.',
    run: (inst, payload) => inst.events.append(payload as AppendEventInput),
  },
  ReplayPending: {
    summary: 'Reclaim expired leases, re-emit every unfinished item as work_item_replayed, return them.',
    async run(inst, payload) {
      checkInput('ReplayPending', payload, {});
      return inst.work.replayPending();
    },
  },
  RegenerateDashboard: {
    summary: 'Rewrite dashboard.md from the store; returns its path and the event position it reflects.',
    async run(inst, payload) {
      checkInput('RegenerateDashboard', payload, {});
      return regenerateDashboard(inst);
    },
  },
  CommitState: {
    summary: 'Compare-and-swap commit of a versioned document (STATE_CONFLICT if it moved on).',
    run: (inst, payload) => inst.docs.commit(payload as CommitInput),
  },
  GetState: {
    summary: 'Read a versioned document: the latest version, or {version}, or only {paths} (a projection).',
    async run(inst, payload) {
      const p = checkInput<{ kind: string; id: string; version?: number; paths?: string[] }>(
        'GetState',
        payload,
        {
          kind: { type: 'name', required: true },
          id: { type: 'name', required: true },
          version: { type: 'int', min: 1 },
          paths: { type: 'names' },
        },
      );
      if (p.paths !== undefined) {
        if (p.version !== undefined) {
          throw new InvalidInputError('GetState: give either version or paths, not both', { field: 'paths' });
        }
        return inst.docs.project({ kind: p.kind, id: p.id, paths: p.paths });
      }
      return inst.docs.get(p);
    },
  },
  RetrospectiveSummary: {
    summary: 'Write a Markdown retro of a time window to retros/ and return it.',
    run: (inst, payload) => retrospective(inst, payload as RetroInput),
  },
} satisfies Record<string, WorkflowDef>;

export type WorkflowName = keyof typeof WORKFLOWS;

export const WORKFLOW_NAMES = Object.keys(WORKFLOWS) as WorkflowName[];

export function isWorkflowName(name: string): name is WorkflowName {
  return Object.hasOwn(WORKFLOWS, name);
}

/**
 * Runs a workflow against an open instance with a payload object, exactly as the CLI and the
 * skill scripts do.
 * @example await runWorkflow(inst, 'EnqueueWorkItem', { title: 'triage inbox' })
 */
export function runWorkflow(inst: Instance, name: WorkflowName, payload: unknown = {}): Promise<unknown> {
  return WORKFLOWS[name].run(inst, payload ?? {});
}
