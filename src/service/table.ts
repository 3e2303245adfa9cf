// The operation table: every operation of the service, the one list the CLI, the bundle workflows, MCP
// tools, HTTP routes and OpenAPI are built from. The service's own operations name no kind; the kinds'
// (KindExtensions.serviceOperations, e.g. a task-ir's escalate) come from src/kinds/: the built-in kinds'
// when the table loads, and those of a kind registered later when it is registered.
import { InvalidInputError } from '../errors.js';
import {
  declaredOperations,
  KIND_SERVICE_OPERATIONS,
  onDeclaredOperations,
} from '../kinds/service-operations.js';
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

const table: AnyOperation[] = [];
const names: string[] = [];
const byName = new Map<string, AnyOperation>();

/** The table with the built-in kinds' operations and those of the kinds registered later (`later`). */
function rebuild(later: readonly AnyOperation[]): void {
  const next = withKindOperations(SERVICE_OPERATIONS, [
    ...(KIND_SERVICE_OPERATIONS as readonly AnyOperation[]),
    ...later,
  ]);
  const index = new Map(next.map((op) => [op.name, op]));
  if (index.size !== next.length) throw new Error('two operations share a name');
  table.splice(0, table.length, ...next);
  names.splice(0, names.length, ...next.map((op) => op.name));
  byName.clear();
  for (const [name, op] of index) byName.set(name, op);
}
rebuild(declaredOperations() as AnyOperation[]);
// A kind registered from now on declares its operations here: refused when one's name is served already.
onDeclaredOperations({
  accept(ops, replacing) {
    for (const op of ops) {
      if (byName.has(op.name) && !replacing.some((r) => r.name === op.name)) {
        throw new InvalidInputError(
          `operation ${JSON.stringify(op.name)} is in the table already: a kind's operation takes a name of its own`,
          { field: 'serviceOperations' },
        );
      }
    }
  },
  apply: (ops) => rebuild(ops as AnyOperation[]),
});

/**
 * Every operation, grouped by area (work items, events, documents, state files, reports and instance, the
 * runs of a Workflow SDK World), the kinds' in their groups. A kind registered later adds its operations to
 * this same list.
 */
export const OPERATIONS: readonly AnyOperation[] = table;

/** The name of every operation of the table, in table order (the names `invoke` and `runOperation` take). */
export const OPERATION_NAMES: readonly string[] = names;

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
