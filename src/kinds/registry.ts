// The kind registry: built-in kinds plus any the application registers, and schema validation with ajv.

import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import type { ErrorObject, ValidateFunction } from 'ajv';
import { checkJsonValue } from '../core/input.js';
import type { KindDefinition } from '../core/kind.js';
import type { JsonObject } from '../core/types.js';
import { InvalidInputError, ValidationFailedError } from '../errors.js';
import { agentRunKind } from './agent-run/kind.js';
import { aiosWorkflowKind } from './aios-workflow/kind.js';
import { claimEventTypes } from './event-owners.js';
import { checkFileId } from './file-id.js';
import { gridMissionKind } from './grid-mission/kind.js';
import { jsonKind } from './json/kind.js';
import { schemaRule } from './rules.js';
import { scheduleKind } from './schedule/kind.js';
import { declareServiceOperations } from './service-operations.js';
import { taskIrKind } from './task-ir/kind.js';
import { workflowSessionsKind } from './workflow-sessions/kind.js';

/**
 * The kind as the registry hands it out: a file view's parser is followed by the store's JSON policy
 * (depth, reserved keys, finite numbers), so what a hand-edited file holds is refused before any rule,
 * clone or render walks it.
 */
function guarded(def: KindDefinition): KindDefinition {
  const file = def.file;
  if (!file) return def;
  return {
    ...def,
    file: {
      ...file,
      parse(text) {
        const parsed = file.parse(text);
        checkJsonValue(parsed.body, 'the file');
        return parsed;
      },
    },
  };
}

const kinds = new Map<string, KindDefinition>();
for (const k of [
  jsonKind,
  agentRunKind,
  taskIrKind,
  gridMissionKind,
  aiosWorkflowKind,
  workflowSessionsKind,
  scheduleKind,
]) {
  declareServiceOperations(k.name, k.serviceOperations);
  kinds.set(k.name, guarded(k));
  claimEventTypes(k.name, k.emits);
}

/**
 * Adds (or replaces) a kind. A kind with a `file` view and no `checkId` gets `checkFileId`: its ids
 * become file names, so ids such as `../x` are refused before they are stored. The service operations it
 * declares join the table (replacing those it declared before); one the table cannot serve, or whose name
 * another operation has, is refused with INVALID_INPUT and nothing is registered.
 */
export function registerKind(def: KindDefinition): void {
  if (!/^[a-z][a-z0-9-]{0,63}$/.test(def.name)) {
    throw new InvalidInputError(
      `kind name ${JSON.stringify(def.name)} must be lowercase letters, digits and '-'`,
    );
  }
  declareServiceOperations(def.name, def.serviceOperations);
  const old = kinds.get(def.name);
  if (ajv && validators.has(def.name) && typeof old?.schema.$id === 'string')
    ajv.removeSchema(old.schema.$id);
  const name = def.name;
  kinds.set(
    name,
    guarded(def.file && !def.checkId ? { ...def, checkId: (id) => checkFileId(id, name) } : def),
  );
  validators.delete(name);
  claimEventTypes(name, def.emits);
}

/** The kind, or INVALID_INPUT listing the known ones. */
export function getKind(name: string): KindDefinition {
  const k = kinds.get(name);
  if (!k) {
    throw new InvalidInputError(
      `unknown kind ${JSON.stringify(name)}; known kinds: ${[...kinds.keys()].join(', ')}`,
      {
        field: 'kind',
      },
    );
  }
  return k;
}

/** The names of the registered kinds, in the order they were registered. */
export function kindNames(): string[] {
  return [...kinds.keys()];
}

// ajv costs tens of ms to load and a schema as much to compile; only document commands pay for it, once per
// process, and not at all for a built-in kind whose validator the build wrote (scripts/gen-validators.mjs).
let ajv: { compile(schema: object): ValidateFunction; removeSchema(keyOrRef: string): unknown } | undefined;
const validators = new Map<string, ValidateFunction>();
const require = createRequire(import.meta.url);

/** The options every kind validator is compiled with (at run time, and by the build's standalone code). */
export const AJV_OPTIONS = { allErrors: false, strict: false, validateFormats: false } as const;

function compiler() {
  if (!ajv) {
    const Ajv2020 = require('ajv/dist/2020.js') as {
      default: new (
        o: object,
      ) => { compile(s: object): ValidateFunction; removeSchema(keyOrRef: string): unknown };
    };
    ajv = new Ajv2020.default(AJV_OPTIONS);
  }
  return ajv;
}

/** A schema's identity for the prebuilt validators: the SHA-256 of its JSON. */
export function schemaHash(schema: object): string {
  return createHash('sha256').update(JSON.stringify(schema)).digest('hex');
}

let prebuilt: Record<string, string> | null | undefined;

/** The validator the build wrote for this kind's schema, or null (none, or written for another schema). */
function prebuiltValidator(kind: KindDefinition): ValidateFunction | null {
  if (prebuilt === undefined) {
    try {
      prebuilt = require('./validators/index.json') as Record<string, string>;
    } catch {
      // Run from the sources (tests), or a build without them: ajv compiles.
      prebuilt = null;
    }
  }
  const hash = prebuilt && Object.hasOwn(prebuilt, kind.name) ? prebuilt[kind.name] : undefined;
  if (hash === undefined || hash !== schemaHash(kind.schema)) return null;
  const mod = require(`./validators/${kind.name}.cjs`) as ValidateFunction | { default: ValidateFunction };
  return typeof mod === 'function' ? mod : mod.default;
}

function describe(kind: KindDefinition, e: ErrorObject): { pointer: string; rule: string; message: string } {
  let pointer = e.instancePath || '';
  const p = e.params as Record<string, unknown>;
  if (e.keyword === 'required' && typeof p.missingProperty === 'string') pointer += `/${p.missingProperty}`;
  if (e.keyword === 'additionalProperties' && typeof p.additionalProperty === 'string') {
    pointer += `/${p.additionalProperty}`;
  }
  const where = pointer === '' ? 'the document' : pointer;
  const detail =
    e.keyword === 'enum'
      ? ` (${(p.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')})`
      : '';
  const named = schemaRule(kind.schema, e.schemaPath);
  return {
    pointer: pointer || '/',
    rule: named ?? `schema.${e.keyword}`,
    message: `${where} ${named ? `breaks rule ${named}` : (e.message ?? 'is invalid')}${detail}`,
  };
}

/** Validates `body` against the kind's JSON Schema; throws VALIDATION_FAILED naming the field and rule. */
export function validateSchema(kind: KindDefinition, body: JsonObject): void {
  let v = validators.get(kind.name);
  if (!v) {
    v = prebuiltValidator(kind) ?? compiler().compile(kind.schema);
    validators.set(kind.name, v);
  }
  if (!v(body)) {
    const first = describe(kind, v.errors![0]!);
    throw new ValidationFailedError(`${kind.name}: ${first.message}`, {
      kind: kind.name,
      pointer: first.pointer,
      rule: first.rule,
    });
  }
}
