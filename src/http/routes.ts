// The HTTP routes of the operation table: every operation a network edge may offer (not `local`), reads as
// GET with the input in the query string, writes as POST with a JSON body, at /api/v1/<name>.

import { InvalidInputError } from '../errors.js';
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
 * Server-Sent Events at GET /api/v1/events), the operations of kinds registered so far included: a server
 * serves the routes of the table as it is when the server is made.
 */
export function operationRoutes(): OperationRoute[] {
  return OPERATIONS.filter((op) => op.local !== true && op.streams !== true).map((op) => ({
    method: op.writes ? 'POST' : 'GET',
    path: `/api/v1/${op.name}`,
    op: op as unknown as Operation<Record<string, unknown>, unknown>,
  }));
}

/** The routes of the table as it loaded (`operationRoutes()` has those of kinds registered since). */
export const OPERATION_ROUTES: readonly OperationRoute[] = operationRoutes();

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

/**
 * The largest page a paged route (an operation that declares `page`) answers: a larger `limit` is
 * INVALID_INPUT (400) naming it, and the next page is linked instead (`nextPageLink`).
 */
export const MAX_PAGE_SIZE = 1000;

/** Refuses a paged route's page size over `MAX_PAGE_SIZE` (INVALID_INPUT on the limit field, with `max`). */
export function checkPageSize(op: Pick<Operation, 'name' | 'page'>, input: unknown): void {
  if (!op.page || input === null || typeof input !== 'object') return;
  const field = op.page.limit;
  const limit = (input as Record<string, unknown>)[field];
  // Anything but a number is left for the operation's schema to refuse.
  if (typeof limit === 'number' && limit > MAX_PAGE_SIZE) {
    throw new InvalidInputError(
      `${field} ${limit} is over the HTTP API's page size cap of ${MAX_PAGE_SIZE}: ask for at most ${MAX_PAGE_SIZE} and follow the Link header's rel="next" for the rest`,
      { field, max: MAX_PAGE_SIZE },
    );
  }
}

/**
 * The `Link` header of a paged route's answer when its page is full (as many records as the limit asked
 * for, or the operation's default): `<path?query>; rel="next"` (RFC 8288), the same query with the
 * operation's next-page fields in place of those it had — a reference relative to the request's URL, so it
 * holds behind a proxy. Null for a short page (the last one) and for an operation that does not page.
 */
export function nextPageLink(
  op: Pick<Operation, 'page'>,
  url: URL,
  input: Record<string, unknown>,
  result: unknown,
): string | null {
  const page = op.page;
  if (!page) return null;
  const records = page.list === undefined ? result : (result as Record<string, unknown> | null)?.[page.list];
  if (!Array.isArray(records) || records.length === 0) return null;
  const limit = typeof input[page.limit] === 'number' ? (input[page.limit] as number) : page.defaultLimit;
  if (records.length < limit) return null;
  const params = new URLSearchParams(url.search);
  for (const [k, v] of Object.entries(page.next(records[records.length - 1], input))) {
    params.set(k, typeof v === 'string' ? v : JSON.stringify(v));
  }
  return `<${url.pathname}?${params}>; rel="next"`;
}
