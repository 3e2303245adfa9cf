// The view tests' fixture: a small test kind with a JSON file view (`.todo/<id>.json`), registered for the
// file, and a fresh project folder and instance per test (`fresh()`), closed when the next opens or the file ends.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import type { KindDefinition } from '../../src/core/kind.js';
import type { JsonObject } from '../../src/core/types.js';
import { InvalidInputError, ValidationFailedError } from '../../src/errors.js';
import { type Instance, openInstance } from '../../src/instance/instance.js';
import { registerKind } from '../../src/kinds/registry.js';
import { targetFor, type ViewTarget } from '../../src/views/files.js';
import { tempDir } from '../helpers/tmp.js';

/** Kind `test-todo`: `{ items: string[], phase? }`, no blank item; its file is the body plus a `$agentstate` stamp. */
export const todoKind: KindDefinition = {
  name: 'test-todo',
  description: 'a todo list kept in .todo/<id>.json (test kind)',
  schema: {
    type: 'object',
    required: ['items'],
    additionalProperties: false,
    properties: { items: { type: 'array', items: { type: 'string' } }, phase: { type: 'string' } },
  },
  check(next) {
    if ((next.items as string[]).some((i) => i.trim() === '')) {
      throw new ValidationFailedError('items must not be blank', {
        pointer: '/items',
        rule: 'no-blank-items',
      });
    }
    return undefined;
  },
  file: {
    defaultPath: (id) => `.todo/${id}.json`,
    idFromPath: (p) => /(?:^|\/)\.todo\/([^/]+)\.json$/.exec(p)?.[1] ?? null,
    parse(text) {
      let data: JsonObject;
      try {
        data = JSON.parse(text) as JsonObject;
      } catch (err) {
        throw new InvalidInputError(`not JSON: ${(err as Error).message}`);
      }
      const { $agentstate, ...body } = data;
      return { body, stamp: ($agentstate as never) ?? null };
    },
    render: (body, stamp) => `${JSON.stringify({ $agentstate: stamp, ...body }, null, 2)}\n`,
  },
};

const root = tempDir();
let n = 0;
/** The current test's instance (an ESM live binding: it follows `fresh()`). */
export let inst: Instance;
/** The current test's project folder. */
export let project: string;

beforeAll(() => registerKind(todoKind));
afterAll(async () => {
  await inst?.close();
});

/** Opens a new project folder and instance for the next test, closing the previous instance. */
export async function fresh(): Promise<void> {
  await inst?.close();
  n += 1;
  project = join(root, `p${n}`);
  mkdirSync(project, { recursive: true });
  inst = await openInstance({ dir: join(root, `i${n}`) });
}

/** The file of test-todo `plan` in the current project. */
export const file = (): string => join(project, '.todo/plan.json');
export const target = (): ViewTarget => targetFor('test-todo', 'plan', project);
