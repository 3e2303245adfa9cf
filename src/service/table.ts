// The operation table: every operation of the service, the one list the CLI, the bundle workflows, MCP
// tools, HTTP routes and OpenAPI are built from. The service's own operations name no kind; the kinds'
// (KindExtensions.serviceOperations, e.g. a task-ir's escalate) come from src/kinds/.
import { InvalidInputError } from '../errors.js';
import { KIND_SERVICE_OPERATIONS } from '../kinds/service-operations.js';
import type { Operation, OperationGroup } from './operation.js';
import { DOCUMENT_OPERATIONS } from './operations/documents.js';
import { EVENT_OPERATIONS } from './operations/events.js';
import { FILE_OPERATIONS } from './operations/files.js';
import { LIMIT_OPERATIONS } from './operations/limits.js';
import { METRICS_OPERATIONS } from './operations/metrics.js';
import { REPORT_OPERATIONS } from './operations/reports.js';
import { RESUME_OPERATIONS } from './operations/resume.js';
import { WORK_OPERATIONS } from './operations/work.js';
import { WORKFLOW_RUN_OPERATIONS } from './operations/workflow-runs.js';

type AnyOperation = Operation<never, unknown>;

const SERVICE_OPERATIONS = [
  ...WORK_OPERATIONS,
  ...LIMIT_OPERATIONS,
  ...RESUME_OPERATIONS,
  ...EVENT_OPERATIONS,
  ...DOCUMENT_OPERATIONS,
  ...FILE_OPERATIONS,
  ...REPORT_OPERATIONS,
  ...METRICS_OPERATIONS,
  ...WORKFLOW_RUN_OPERATIONS,
] as unknown as AnyOperation[];

/** Where a kind's operations of a group go: after the group's way to run any kind's named operation. */
const KIND_SLOT: Partial<Record<OperationGroup, string>> = { documents: 'apply', files: 'apply_file' };

/** The service's operations with the kinds' placed in their groups (at a group's end when it has no slot). */
function withKindOperations(
  service: readonly AnyOperation[],
  kinds: readonly AnyOperation[],
): AnyOperation[] {
  const slot = (group: OperationGroup): string | undefined =>
    KIND_SLOT[group] ?? service.findLast((op) => op.group === group)?.name;
  const out: AnyOperation[] = [];
  for (const op of service) {
    out.push(op);
    if (slot(op.group) === op.name) out.push(...kinds.filter((k) => k.group === op.group));
  }
  out.push(...kinds.filter((k) => slot(k.group) === undefined));
  if (out.length !== service.length + kinds.length)
    throw new Error('a kind operation has no place in the table');
  return out;
}

/**
 * Every operation, grouped by area (work items, events, documents, state files, reports and instance, the
 * runs of a Workflow SDK World).
 */
export const OPERATIONS: readonly AnyOperation[] = withKindOperations(
  SERVICE_OPERATIONS,
  KIND_SERVICE_OPERATIONS as readonly AnyOperation[],
);

const byName = new Map(OPERATIONS.map((op) => [op.name, op]));
if (byName.size !== OPERATIONS.length) throw new Error('two operations share a name');

/** The name of every operation of the table, in table order (the names `invoke` and `runOperation` take). */
export const OPERATION_NAMES: readonly string[] = OPERATIONS.map((op) => op.name);

/** The operation, or INVALID_INPUT listing the known ones. */
export function getOperation(name: string): Operation<Record<string, unknown>, unknown> {
  const op = byName.get(name);
  if (!op) {
    throw new InvalidInputError(
      `unknown operation ${JSON.stringify(name)}; known: ${OPERATION_NAMES.join(', ')}`,
      { field: 'operation' },
    );
  }
  return op as unknown as Operation<Record<string, unknown>, unknown>;
}
