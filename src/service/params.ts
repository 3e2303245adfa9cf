// An operation's input from text parameters — a query string (HTTP GET, the event stream), command-line
// flags (`agentstate call`) — typed by the operation's input schema: numbers, booleans and JSON fields
// parsed, a repeated parameter an array where the schema takes one. What does not fit is passed on as text,
// and unknown parameters pass through, for the operation's one check to refuse by name.
import type { JsonSchema } from '../core/json-schema.js';
import { InvalidInputError } from '../errors.js';
import type { Operation } from './operation.js';

/** Sets an own property, even `__proto__` (so the validator sees it and refuses it as unknown). */
function put(o: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(o, key, { value, enumerable: true, writable: true, configurable: true });
}

/** The JSON types a field's schema allows (`json`: any JSON value). */
export const types = (s: JsonSchema): string[] => {
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
 * The input `params` spell for `op` (`skip`: a parameter that is the edge's, not the operation's, such as
 * the HTTP routes' `instance`).
 */
export function inputFromParams(
  op: Operation<never, unknown>,
  params: URLSearchParams,
  skip?: string,
): Record<string, unknown> {
  const input: Record<string, unknown> = {};
  const props = op.input.properties;
  for (const key of new Set(params.keys())) {
    if (key === skip) continue;
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
