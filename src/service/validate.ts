// Checks an operation's input once, at the table. Every input schema of the table is generated from one of
// the core's input specs (`inputSchema`), and the core's checker holds everything the schema says and what
// JSON Schema cannot (the JSON policy, byte sizes, calendar dates, the time grammar), wording the refusal by
// its first bad field: it is the one check. What it returns is a checked command (`checkedCommand`), which
// the core's public method the operation hands it to takes without checking it again. A schema not built
// from a spec (none in the table today) is checked by ajv, compiled on first use.
import { createRequire } from 'node:module';
import { checkedCommand } from '../core/input.js';
import { type JsonSchema, specOf } from '../core/json-schema.js';
import { InvalidInputError } from '../errors.js';
import type { Operation } from './operation.js';

/** A compiled validator: true when valid, with ajv's errors on the function otherwise. */
export type Validator = ((data: unknown) => boolean) & {
  errors?: Array<{
    instancePath: string;
    message?: string;
    keyword: string;
    params: Record<string, unknown>;
  }> | null;
};

/** The ajv options the precompiled validators are built with too (keep the build script in step). */
export const AJV_OPTIONS = { allErrors: false, strict: true, validateFormats: false, unicodeRegExp: true };

const cache = new WeakMap<JsonSchema, Validator>();
let ajv: { compile(schema: object): Validator } | undefined;

function compile(schema: JsonSchema): Validator {
  if (!ajv) {
    const Ajv2020 = createRequire(import.meta.url)('ajv/dist/2020.js') as {
      default: new (o: object) => { compile(s: object): Validator };
    };
    ajv = new Ajv2020.default(AJV_OPTIONS);
  }
  return ajv.compile(schema);
}

/** The validator of a schema not built from a spec, compiled once. */
function validatorFor(schema: JsonSchema): Validator {
  let v = cache.get(schema);
  if (!v) {
    v = compile(schema);
    cache.set(schema, v);
  }
  return v;
}

/** Compiles an input or output schema with the runtime ajv (tests check every schema this way). */
export function compileSchema(schema: JsonSchema): Validator {
  return compile(schema);
}

/**
 * Checks `input` against the operation's input schema, once: returns the checked command (an absent input is
 * `{}`). Throws INVALID_INPUT naming the first bad field, and nothing has run.
 */
export function validateInput<I>(op: Operation<I, unknown>, input: unknown): I {
  const spec = specOf(op.input);
  if (spec) return checkedCommand<I>(op.name, input, spec) as I;
  const value = input === undefined ? {} : input;
  const v = validatorFor(op.input);
  if (!v(value)) {
    const e = mostSpecific(v.errors ?? []);
    const field = e?.instancePath ? e.instancePath.slice(1).split('/')[0] : undefined;
    throw new InvalidInputError(
      `${op.name}: ${e ? `${e.instancePath || 'input'} ${wording(e, value)}` : 'input is invalid'}`,
      { operation: op.name, ...(field ? { field } : {}) },
    );
  }
  return value as I;
}

type AjvError = NonNullable<Validator['errors']>[number];

/**
 * The error that says most about what is wrong. A value that fits no branch of an `anyOf` (a status, or a
 * list of statuses) fails every branch: the branch that got furthest into the value (the deepest path)
 * names the real problem (`/status/0` is not a status), not the first branch's type.
 */
function mostSpecific(errors: AjvError[]): AjvError | undefined {
  let best: AjvError | undefined;
  for (const e of errors) {
    if (e.keyword === 'anyOf') continue;
    if (!best || e.instancePath.split('/').length > best.instancePath.split('/').length) best = e;
  }
  return best ?? errors[0];
}

/** ajv's message, with the allowed values and the given one for an enum (ajv says only "allowed values"). */
function wording(e: AjvError, input: unknown): string {
  if (e.keyword === 'enum' && Array.isArray(e.params.allowedValues)) {
    let got: unknown = input;
    for (const seg of e.instancePath.split('/').slice(1)) {
      got = (got as Record<string, unknown> | undefined)?.[seg.replace(/~1/g, '/').replace(/~0/g, '~')];
    }
    return `must be one of ${e.params.allowedValues.map(String).join(', ')}, got ${JSON.stringify(got)}`;
  }
  return e.message ?? 'is invalid';
}
