// A small test kind with a JSON file view (`.todo/<id>.json`), shared by the view tests.
import type { KindDefinition } from '../../src/core/kind.js';
import type { JsonObject } from '../../src/core/types.js';
import { InvalidInputError, ValidationFailedError } from '../../src/errors.js';

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
