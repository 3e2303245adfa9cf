// The HTTP routes of the operation table: every operation a network edge may offer (not `local`), reads as
// GET with the input in the query string, writes as POST with a JSON body, at /api/v1/<name>.

import type { JsonSchema } from '../core/json-schema.js';
import { InvalidInputError } from '../errors.js';
import type { Operation } from '../service/operation.js';
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

/** Sets an own property, even `__proto__` (so the validator sees it and refuses it as unknown). */
function put(o: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(o, key, { value, enumerable: true, writable: true, configurable: true });
}

const types = (s: JsonSchema): string[] => {
  if (s.anyOf) return s.anyOf.flatMap(types);
  if (s.type === undefined) return ['json'];
  return Array.isArray(s.type) ? s.type : [s.type];
};

function scalar(key: string, raw: string, t: string[]): unknown {
  if (t.includes('json') || (t.includes('object') && !t.includes('string'))) {
    try {
      return JSON.parse(raw);
    } catch {
      throw new InvalidInputError(`${key} must be JSON in the query string`, { field: key });
    }
  }
  if ((t.includes('integer') || t.includes('number')) && !t.includes('string')) {
    return /^-?\d+(\.\d+)?$/.test(raw) ? Number(raw) : raw;
  }
  if (t.includes('boolean') && !t.includes('string')) {
    return raw === 'true' ? true : raw === 'false' ? false : raw;
  }
  if (t.includes('null') && raw === 'null' && !t.includes('string')) return null;
  return raw;
}

/**
 * An operation's input from a query string, typed by its schema: numbers, booleans and JSON fields parsed,
 * a repeated parameter an array (only where the schema takes one). Unknown parameters pass through for the
 * operation's validator to refuse; `instance` is the route's, not the operation's.
 */
export function inputFromQuery(
  op: Operation<never, unknown>,
  params: URLSearchParams,
): Record<string, unknown> {
  const input: Record<string, unknown> = {};
  const props = op.input.properties;
  for (const key of new Set(params.keys())) {
    if (key === INSTANCE_PARAM) continue;
    const values = params.getAll(key);
    const schema = Object.hasOwn(props, key) ? props[key]! : undefined;
    if (!schema) {
      put(input, key, values.length === 1 ? values[0] : values);
      continue;
    }
    const t = types(schema);
    if (t.includes('array')) {
      const item = schema.anyOf?.find((s) => s.type === 'array')?.items ?? schema.items ?? {};
      const it = types(item);
      const parsed = values.map((v) => scalar(key, v, it));
      put(input, key, values.length === 1 && t.some((x) => x !== 'array') ? parsed[0] : parsed);
      continue;
    }
    if (values.length > 1) {
      throw new InvalidInputError(`${key} is given ${values.length} times; it takes one value`, {
        field: key,
      });
    }
    put(input, key, scalar(key, values[0]!, t));
  }
  return input;
}
