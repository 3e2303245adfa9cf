// The JSON Schema subset operations are described with, and the input schemas built from the core's input
// specs (one definition of every field, checked by the core's checker): the core's, so that a kind can
// declare an operation of the service table (../core/kind.ts) without importing the service.
import { type FieldSpec, type InputSpec, LIMITS } from './input.js';

/** The subset of JSON Schema (2020-12) the operation table uses; plain data, so MCP and OpenAPI take it as is. */
export interface JsonSchema {
  type?: string | string[];
  description?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  items?: JsonSchema;
  maxItems?: number;
  minItems?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  format?: string;
  enum?: readonly unknown[];
  minimum?: number;
  maximum?: number;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  const?: unknown;
  $ref?: string;
  $defs?: Record<string, JsonSchema>;
  default?: unknown;
}

/** The schema of an operation's input: an object with exactly its properties. */
export type ObjectSchema = JsonSchema & { type: 'object'; properties: Record<string, JsonSchema> };

/**
 * Text every backend stores and hashes the same: no NUL and no unpaired surrogate (`u`-mode patterns, as
 * ajv and JSON Schema use them, see a lone surrogate as its own code point).
 */
const PORTABLE = '^[^\\u0000\\ud800-\\udfff]*$';
/** A name: portable text without control characters. */
const NAME = '^[^\\u0000-\\u001f\\u007f\\ud800-\\udfff]+$';

function field(spec: FieldSpec): JsonSchema {
  if (spec.many !== undefined) {
    const one = field({ ...spec, many: undefined });
    return { anyOf: [one, { type: 'array', items: one, maxItems: spec.many }] };
  }
  const nullable = (s: JsonSchema): JsonSchema =>
    spec.nullable && s.type !== undefined ? { ...s, type: [s.type as string, 'null'] } : s;
  switch (spec.type) {
    case 'string':
    case 'text': {
      const max = spec.max ?? (spec.type === 'text' ? LIMITS.error : LIMITS.title);
      return nullable({
        type: 'string',
        maxLength: max,
        pattern: spec.pattern?.source ?? PORTABLE,
        ...(spec.enum ? { enum: spec.enum } : {}),
      });
    }
    case 'name':
      return nullable({
        type: 'string',
        minLength: 1,
        maxLength: spec.max ?? LIMITS.name,
        pattern: NAME,
        ...(spec.enum ? { enum: spec.enum } : {}),
      });
    case 'int':
      return nullable({
        type: 'integer',
        minimum: spec.min ?? Number.MIN_SAFE_INTEGER,
        maximum: spec.max ?? Number.MAX_SAFE_INTEGER,
      });
    case 'bool':
      return nullable({ type: 'boolean' });
    case 'json':
      // Any JSON value (null included); the store's JSON policy and size limit apply.
      return {};
    case 'object':
      return nullable({ type: 'object' });
    case 'names':
      return nullable({
        type: 'array',
        maxItems: spec.max ?? LIMITS.blockedBy,
        items: { type: 'string', minLength: 1, maxLength: LIMITS.name, pattern: NAME },
      });
    case 'time':
      // The one time grammar (core/time.ts parseTime): ISO-8601, or a duration such as 5m counted from now.
      return nullable({ type: 'string', minLength: 1, maxLength: LIMITS.title });
  }
}

/** The input spec each input schema was built from (the core's checker runs on it for messages). */
const specs = new WeakMap<JsonSchema, InputSpec>();

/** The spec an input schema was built from by `inputSchema`. */
export function specOf(schema: JsonSchema): InputSpec | undefined {
  return specs.get(schema);
}

/**
 * The JSON Schema of an input spec: an object with exactly these fields. `descriptions` adds a line per
 * field (tool schemas show them to models).
 */
export function inputSchema(
  spec: InputSpec,
  descriptions: Partial<Record<string, string>> = {},
): ObjectSchema {
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  for (const [name, f] of Object.entries(spec)) {
    const d = descriptions[name];
    properties[name] = d === undefined ? field(f) : { ...field(f), description: d };
    if (f.required) required.push(name);
  }
  const schema: ObjectSchema = {
    type: 'object',
    properties,
    ...(required.length > 0 ? { required } : {}),
    additionalProperties: false,
  };
  specs.set(schema, spec);
  return schema;
}
