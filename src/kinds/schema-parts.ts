// The pieces the kinds' JSON Schemas (draft 2020-12) are built from, written once: the envelope every
// kind's schema shares, a closed object, a list, a `$defs` reference, a non-empty string, an id. Each
// helper returns the plain schema object with its keys in the order the shipped schemas/*.schema.json
// files have them (they are generated from these objects: `npx tsx scripts/gen-schemas.ts`).

type Properties = Record<string, unknown>;

/** A non-empty string. */
export const text = { type: 'string', minLength: 1 };

/** The `$defs.id` of the kinds that have one: a non-empty string of at most 200 characters. */
export const idDef = { type: 'string', minLength: 1, maxLength: 200 };

/** A reference to `#/$defs/<name>`. */
export const ref = (name: string) => ({ $ref: `#/$defs/${name}` });

/** ISO-8601 date-time: date, `T`, time, optional fraction and offset. */
export const ISO_8601_PATTERN =
  '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}(:[0-9]{2}(\\.[0-9]{1,9})?)?(Z|[+-][0-9]{2}:?[0-9]{2})?$';

/** The `$defs.time` of the kinds whose times are checked by pattern (rule `iso-8601`). */
export const iso8601TimeDef = {
  type: 'string',
  pattern: ISO_8601_PATTERN,
  'x-rule': 'iso-8601',
  description: 'ISO-8601 date-time, e.g. 2026-01-31T10:00:00Z.',
};

/**
 * A closed object: only `properties`, the `required` ones present (no `required` key when none is), with
 * an optional description.
 */
export function closed(required: readonly string[], properties: Properties, description?: string) {
  return {
    type: 'object',
    ...(description === undefined ? {} : { description }),
    ...(required.length > 0 ? { required: [...required] } : {}),
    additionalProperties: false,
    properties,
  };
}

/** An array of `items`, with an optional description. */
export function listOf(items: unknown, description?: string) {
  return { type: 'array', ...(description === undefined ? {} : { description }), items };
}

/**
 * The schema of one kind's document: the draft, the kind's URN, the Kernel ABI, a title and description,
 * a closed top-level object (its `required` and `properties`) and its `$defs`.
 */
export function kindSchema(s: {
  kind: string;
  title: string;
  description: string;
  required: readonly string[];
  properties: Properties;
  $defs: Properties;
}) {
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    $id: `urn:agentstate:schema:${s.kind}:1.0.0`,
    'x-kernel-abi': '1.0.0',
    title: s.title,
    description: s.description,
    ...closed(s.required, s.properties),
    $defs: s.$defs,
  };
}
