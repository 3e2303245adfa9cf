// The HTTP routes of the operation table: every operation a network edge may offer (not `local`), reads as
// GET with the input in the query string, writes as POST with a JSON body, at /api/v1/<name>.

import type { Operation } from '../service/operation.js';
import { inputFromParams } from '../service/params.js';
import { OPERATIONS } from '../service/table.js';

/** The query parameter that names the instance (`host/name`) on every route. */
export const INSTANCE_PARAM = 'instance';

/** One generated route. */
export interface OperationRoute {
  method: 'GET' | 'POST';
  path: string;
  op: Operation<Record<string, unknown>, unknown>;
}

/**
 * Every operation the HTTP API answers once, in table order (a streaming one, watch_events, is served as
 * Server-Sent Events at GET /api/v1/events).
 */
export const OPERATION_ROUTES: readonly OperationRoute[] = OPERATIONS.filter(
  (op) => op.local !== true && op.streams !== true,
).map((op) => ({
  method: op.writes ? 'POST' : 'GET',
  path: `/api/v1/${op.name}`,
  op: op as unknown as Operation<Record<string, unknown>, unknown>,
}));

/**
 * An operation's input from a query string, typed by its schema (see `inputFromParams`); `instance` is the
 * route's, not the operation's.
 */
export function inputFromQuery(
  op: Operation<never, unknown>,
  params: URLSearchParams,
): Record<string, unknown> {
  return inputFromParams(op, params, INSTANCE_PARAM);
}
