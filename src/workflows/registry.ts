// The bundle workflows: each is a name for one operation of the service table. The library, the CLI and
// `bun skill/scripts/<Name>.ts` all run them through here, so they behave identically.
import type { Instance } from '../instance/instance.js';
import type { Operation } from '../service/operation.js';
import { execute } from '../service/run.js';
import { validateInput } from '../service/validate.js';

const GROUPS = {
  work: async () => (await import('../service/operations/work.js')).WORK_OPERATIONS,
  events: async () => (await import('../service/operations/events.js')).EVENT_OPERATIONS,
  documents: async () => (await import('../service/operations/documents.js')).DOCUMENT_OPERATIONS,
  reports: async () => (await import('../service/operations/reports.js')).REPORT_OPERATIONS,
  /** The operations the kinds bring (e.g. a task-ir's escalate), without loading the kinds themselves. */
  kinds: async () => (await import('../kinds/service-operations.js')).KIND_SERVICE_OPERATIONS,
};

/** A bundle workflow: the name (`EnqueueWorkItem`) of one operation of the service table. */
export interface WorkflowDef {
  /** One line for `--help` and the skill docs. */
  summary: string;
  /** The operation of the service table the workflow runs (its input schema is the payload's). */
  operation: string;
  /** The group of operations it is in: a workflow process loads that group only, not the whole table. */
  group: keyof typeof GROUPS;
}

/**
 * The bundle workflows by name, as `bun skill/scripts/<Name>.ts`, the CLI and `runWorkflow` run them.
 */
export const WORKFLOWS = {
  ScaffoldFolders: {
    summary: 'Create the instance layout and run migrations (idempotent).',
    operation: 'scaffold',
    group: 'reports',
  },
  EnqueueWorkItem: {
    summary: 'Insert a pending work item (an existing idempotency_key returns the existing item).',
    operation: 'enqueue',
    group: 'work',
  },
  ClaimWorkItem: {
    summary: 'Atomically claim the highest-priority ready item under a lease; null when none is ready.',
    operation: 'claim',
    group: 'work',
  },
  ResolveWorkItem: {
    summary: 'Finish a claimed item as done or failed (LEASE_LOST if the lease is no longer yours).',
    operation: 'resolve',
    group: 'work',
  },
  HeartbeatWorkItem: {
    summary: 'Extend your lease on a claimed item (LEASE_LOST if it is no longer yours).',
    operation: 'heartbeat',
    group: 'work',
  },
  ReleaseWorkItem: {
    summary: 'Hand a claimed item back to the queue without spending the attempt (graceful stop).',
    operation: 'release',
    group: 'work',
  },
  RetryWorkItem: {
    summary:
      'Put a failed or cancelled item back to pending with a fresh attempt budget; items its failure cancelled re-open.',
    operation: 'retry',
    group: 'work',
  },
  GetWorkItem: {
    summary: 'Read one work item by id (exit 1 when there is none).',
    operation: 'get_item',
    group: 'work',
  },
  AnnotateWorkItem: {
    summary: "Merge metadata (e.g. session_id) into an item's notes; emits work_item_annotated.",
    operation: 'annotate',
    group: 'work',
  },
  AppendEvent: {
    summary: 'Append an event to the hash-chained, append-only log.',
    operation: 'append_event',
    group: 'events',
  },
  ReplayPending: {
    summary: 'Reclaim expired leases, re-emit every unfinished item as work_item_replayed, return them.',
    operation: 'replay',
    group: 'work',
  },
  RegenerateDashboard: {
    summary: 'Rewrite dashboard.md from the store; returns its path and the event position it reflects.',
    operation: 'dashboard',
    group: 'reports',
  },
  RetrospectiveSummary: {
    summary: 'Write a Markdown retro of a time window to retros/ and return it.',
    operation: 'retro',
    group: 'reports',
  },
  CommitState: {
    summary: 'Compare-and-swap commit of a versioned document (STATE_CONFLICT if it moved on).',
    operation: 'commit',
    group: 'documents',
  },
  GetState: {
    summary: 'Read a versioned document: the latest version, or {version}, or only {paths} (a projection).',
    operation: 'get_document',
    group: 'documents',
  },
  EscalateAmbiguities: {
    summary:
      "Put a task-ir's open ambiguities to a human (escalated, each with a decision item, in one commit); idempotent.",
    operation: 'escalate',
    group: 'kinds',
  },
} satisfies Record<string, WorkflowDef>;

/** The name of a bundle workflow (a key of WORKFLOWS). */
export type WorkflowName = keyof typeof WORKFLOWS;

/** Every workflow name, in WORKFLOWS' order. */
export const WORKFLOW_NAMES = Object.keys(WORKFLOWS) as WorkflowName[];

/** Whether `name` is a bundle workflow's name. */
export function isWorkflowName(name: string): name is WorkflowName {
  return Object.hasOwn(WORKFLOWS, name);
}

/** The operation a workflow runs, loading only its group. */
export async function workflowOperation(name: WorkflowName): Promise<Operation<never, unknown>> {
  const def: WorkflowDef = WORKFLOWS[name];
  const op = (await GROUPS[def.group]()).find((o) => o.name === def.operation);
  if (!op) throw new Error(`workflow ${name}: no operation ${def.operation} in group ${def.group}`);
  return op as unknown as Operation<never, unknown>;
}

/**
 * Checks a workflow payload against its operation's input schema (INVALID_INPUT naming the field). The
 * payload is a JSON object; only an absent one (`undefined`) means `{}`, so `null` is refused like any
 * other non-object, as the process contract refuses it.
 */
export async function checkPayload(name: WorkflowName, payload: unknown): Promise<unknown> {
  return validateInput(await workflowOperation(name), payload);
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
  return execute(await workflowOperation(name), inst, payload);
}
