// The bundle workflows: each is a name for one operation of the service table. The library, the CLI and
// `bun skill/scripts/<Name>.ts` all run them through here, so they behave identically.
import type { Instance } from '../instance/instance.js';
import { runOperation } from '../service/invoke.js';
import { getOperation } from '../service/table.js';
import { validateInput } from '../service/validate.js';

export interface WorkflowDef {
  /** One line for `--help` and the skill docs. */
  summary: string;
  /** The operation of the service table the workflow runs (its input schema is the payload's). */
  operation: string;
}

export const WORKFLOWS = {
  ScaffoldFolders: {
    summary: 'Create the instance layout and run migrations (idempotent).',
    operation: 'scaffold',
  },
  EnqueueWorkItem: {
    summary: 'Insert a pending work item (an existing idempotency_key returns the existing item).',
    operation: 'enqueue',
  },
  ClaimWorkItem: {
    summary: 'Atomically claim the highest-priority ready item under a lease; null when none is ready.',
    operation: 'claim',
  },
  ResolveWorkItem: {
    summary: 'Finish a claimed item as done or failed (LEASE_LOST if the lease is no longer yours).',
    operation: 'resolve',
  },
  HeartbeatWorkItem: {
    summary: 'Extend your lease on a claimed item (LEASE_LOST if it is no longer yours).',
    operation: 'heartbeat',
  },
  ReleaseWorkItem: {
    summary: 'Hand a claimed item back to the queue without spending the attempt (graceful stop).',
    operation: 'release',
  },
  GetWorkItem: { summary: 'Read one work item by id (exit 1 when there is none).', operation: 'get_item' },
  AnnotateWorkItem: {
    summary: "Merge metadata (e.g. session_id) into an item's notes; emits work_item_annotated.",
    operation: 'annotate',
  },
  AppendEvent: {
    summary: 'Append an event to the hash-chained, append-only log.',
    operation: 'append_event',
  },
  ReplayPending: {
    summary: 'Reclaim expired leases, re-emit every unfinished item as work_item_replayed, return them.',
    operation: 'replay',
  },
  RegenerateDashboard: {
    summary: 'Rewrite dashboard.md from the store; returns its path and the event position it reflects.',
    operation: 'dashboard',
  },
  RetrospectiveSummary: {
    summary: 'Write a Markdown retro of a time window to retros/ and return it.',
    operation: 'retro',
  },
  CommitState: {
    summary: 'Compare-and-swap commit of a versioned document (STATE_CONFLICT if it moved on).',
    operation: 'commit',
  },
  GetState: {
    summary: 'Read a versioned document: the latest version, or {version}, or only {paths} (a projection).',
    operation: 'get_document',
  },
} satisfies Record<string, WorkflowDef>;

export type WorkflowName = keyof typeof WORKFLOWS;

export const WORKFLOW_NAMES = Object.keys(WORKFLOWS) as WorkflowName[];

export function isWorkflowName(name: string): name is WorkflowName {
  return Object.hasOwn(WORKFLOWS, name);
}

/**
 * Checks a workflow payload against its operation's input schema (INVALID_INPUT naming the field). The
 * payload is a JSON object; only an absent one (`undefined`) means `{}`, so `null` is refused like any
 * other non-object, as the process contract refuses it.
 */
export async function checkPayload(name: WorkflowName, payload: unknown): Promise<unknown> {
  return validateInput(getOperation(WORKFLOWS[name].operation), payload);
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
  return runOperation(inst, WORKFLOWS[name].operation, payload);
}
