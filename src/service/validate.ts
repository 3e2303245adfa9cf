// Checks an operation's input once, at the table. Every input schema of the table is generated from one of
// the core's input specs (`inputSchema`; a test holds it), and the core's checker holds everything the schema
// says and what JSON Schema cannot (the JSON policy, byte sizes, calendar dates, the time grammar), wording
// the refusal by its first bad field: it is the one check. What it returns is a checked command
// (`checkedCommand`), which the core's public method the operation hands it to takes without checking it
// again. ajv compiles the published schemas for the tests that hold them to the checker and the results.
import { createRequire } from 'node:module';
import { checkedCommand } from '../core/input.js';
import { type JsonSchema, specOf } from '../core/json-schema.js';
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

let ajv: { compile(schema: object): Validator } | undefined;

/** Compiles an input or output schema with ajv (tests check every schema and result this way). */
export function compileSchema(schema: JsonSchema): Validator {
  if (!ajv) {
    const Ajv2020 = createRequire(import.meta.url)('ajv/dist/2020.js') as {
      default: new (o: object) => { compile(s: object): Validator };
    };
    ajv = new Ajv2020.default({
      allErrors: false,
      strict: true,
      validateFormats: false,
      unicodeRegExp: true,
    });
  }
  return ajv.compile(schema);
}

/**
 * Checks `input` against the operation's input spec, once: returns the checked command (an absent input is
 * `{}`). Throws INVALID_INPUT naming the first bad field, and nothing has run.
 */
export function validateInput<I>(op: Operation<I, unknown>, input: unknown): I {
  const spec = specOf(op.input);
  if (!spec) throw new Error(`operation ${op.name}: its input schema was not built by inputSchema`);
  return checkedCommand<I>(op.name, input, spec) as I;
}
