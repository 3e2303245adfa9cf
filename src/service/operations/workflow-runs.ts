// Workflow SDK World operations: the runs a World keeps in the store (src/workflow-world/), read-only, as the
// service table offers them to every edge (CLI `agentstate runs`, HTTP, MCP by --tools, the dashboard).

import {
  WORKFLOW_ID_CHARS,
  WORKFLOW_ID_PATTERN,
  WORKFLOW_RUN_STATUSES,
} from '../../core/codecs/workflow-events/codec.js';
import type { FieldSpec } from '../../core/input.js';
import { inputSchema } from '../../core/json-schema.js';
import { WORKFLOW_RUN_DETAIL, WORKFLOW_RUN_SUMMARIES } from '../../core/output-schemas.js';
import {
  listWorldRuns,
  showWorldRun,
  WORLD_PAGE,
  type WorldRunQuery,
  type WorldRunSummary,
  type WorldRunsQuery,
  type WorldStepView,
} from '../../workflow-world/inspect.js';
import { operation } from '../operation.js';

/** A run or step id, as the World's storage takes ids (a path or an object's key is none). */
const WORLD_ID: FieldSpec = {
  type: 'string',
  max: WORKFLOW_ID_CHARS,
  pattern: {
    source: WORKFLOW_ID_PATTERN,
    what: `a World id (1 to ${WORKFLOW_ID_CHARS} characters; no control characters, / or \\, no leading dot, not __proto__, constructor or prototype)`,
  },
};

const LIMIT: FieldSpec = { type: 'int', min: 1, max: WORLD_PAGE.max };

export const WORKFLOW_RUN_OPERATIONS = [
  operation({
    name: 'workflow_runs',
    group: 'workflow',
    description: "The Workflow SDK World's runs, newest first, by status and workflow name (default 100).",
    input: inputSchema(
      {
        status: { type: 'name', enum: WORKFLOW_RUN_STATUSES },
        workflow: { type: 'name', max: WORKFLOW_ID_CHARS },
        after: WORLD_ID,
        limit: LIMIT,
      },
      {
        status: 'only runs in this status',
        workflow: 'only runs of this workflow (its full name, e.g. workflow//./src/order//placeOrder)',
        after: 'page on: the runs after this one (the run_id of the last run a page showed)',
        limit: `at most this many runs (default ${WORLD_PAGE.default})`,
      },
    ),
    output: WORKFLOW_RUN_SUMMARIES,
    writes: false,
    // Newest first by (created_at, run_id), neither of which changes: the next page is after the last run.
    page: {
      limit: 'limit',
      defaultLimit: WORLD_PAGE.default,
      next: (last: WorldRunSummary) => ({ after: last.run_id }),
    },
    run: (inst, i: WorldRunsQuery) => listWorldRuns(inst.backend, i),
  }),
  operation({
    name: 'workflow_run',
    group: 'workflow',
    description:
      'One Workflow SDK World run (NOT_FOUND when there is none): its status, a page of its steps, live hooks, waits and streams.',
    input: inputSchema(
      { run_id: { ...WORLD_ID, required: true }, after: WORLD_ID, limit: LIMIT },
      {
        after: 'page on: the steps after this one (the step_id of the last step a page showed)',
        limit: `at most this many steps (default ${WORLD_PAGE.default})`,
      },
    ),
    output: WORKFLOW_RUN_DETAIL,
    writes: false,
    // The steps page, in the order they were created; the run, its hooks, waits and streams come with each.
    page: {
      list: 'steps',
      limit: 'limit',
      defaultLimit: WORLD_PAGE.default,
      next: (last: WorldStepView) => ({ after: last.step_id }),
    },
    run: (inst, i: WorldRunQuery) => showWorldRun(inst.backend, i),
  }),
] as const;
