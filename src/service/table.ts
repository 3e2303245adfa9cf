// The operation table: every operation of the service, the one list the CLI, the bundle workflows, MCP
// tools, HTTP routes and OpenAPI are built from.
import { InvalidInputError } from '../errors.js';
import type { Operation } from './operation.js';
import { DOCUMENT_OPERATIONS } from './operations/documents.js';
import { EVENT_OPERATIONS } from './operations/events.js';
import { FILE_OPERATIONS } from './operations/files.js';
import { REPORT_OPERATIONS } from './operations/reports.js';
import { RESUME_OPERATIONS } from './operations/resume.js';
import { WORK_OPERATIONS } from './operations/work.js';

/** Every operation, grouped by area (work items, events, documents, state files, reports and instance). */
export const OPERATIONS: readonly Operation<never, unknown>[] = [
  ...WORK_OPERATIONS,
  ...RESUME_OPERATIONS,
  ...EVENT_OPERATIONS,
  ...DOCUMENT_OPERATIONS,
  ...FILE_OPERATIONS,
  ...REPORT_OPERATIONS,
] as unknown as Operation<never, unknown>[];

const byName = new Map(OPERATIONS.map((op) => [op.name, op]));
if (byName.size !== OPERATIONS.length) throw new Error('two operations share a name');

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
