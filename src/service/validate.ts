// Validates an operation's input against its JSON Schema with ajv. The built package ships each
// operation's validator precompiled (scripts/compile-validators.mjs: ajv standalone code), so a workflow
// process pays neither ajv's load nor its compile (about 130 ms together); from sources the schemas are
// compiled on first use. The core's own checker then runs on the same fields: it words the refusal (the
// first bad field, as every edge has always said it) and applies what JSON Schema cannot say (the JSON
// policy, byte sizes, calendar dates).
import { createRequire } from 'node:module';
import { checkInput } from '../core/input.js';
import { InvalidInputError } from '../errors.js';
import { type JsonSchema, specOf } from './json-schema.js';
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

const cache = new Map<string, Validator>();
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

/** The operation's validator: precompiled when the build made one, else compiled now (once). */
async function validatorFor(op: Operation<never, unknown>): Promise<Validator> {
  let v = cache.get(op.name);
  if (v) return v;
  try {
    v = ((await import(`./validators/${op.name}.js`)) as { default: Validator }).default;
  } catch {
    v = compile(op.input);
  }
  cache.set(op.name, v);
  return v;
}

/** Compiles an input or output schema with the runtime ajv (tests check every schema this way). */
export function compileSchema(schema: JsonSchema): Validator {
  return compile(schema);
}

/**
 * Checks `input` against the operation's input schema; returns it (an absent input is `{}`). Throws
 * INVALID_INPUT naming the first bad field, and nothing has run.
 */
export async function validateInput<I>(op: Operation<I, unknown>, input: unknown): Promise<I> {
  const value = input === undefined ? {} : input;
  const valid = (await validatorFor(op as Operation<never, unknown>))(value);
  const spec = specOf(op.input);
  // The core's checker words the refusal, and holds what JSON Schema cannot say; it runs either way.
  if (spec) checkInput(op.name, value, spec);
  if (!valid) {
    const v = cache.get(op.name)!;
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
