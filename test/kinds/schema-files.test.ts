// The shipped schemas/*.schema.json: identical to the kinds' TypeScript schema objects, marked with
// $id and x-kernel-abi, compilable by a strict draft 2020-12 validator, and checking good and bad bodies.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { ValidateFunction } from 'ajv';
import { describe, expect, it } from 'vitest';
import { agentRunSchema } from '../../src/kinds/agent-run/schema.js';
import { aiosWorkflowSchema } from '../../src/kinds/aios-workflow/schema.js';
import { gridMissionSchema } from '../../src/kinds/grid-mission/schema.js';
import { schemaRule } from '../../src/kinds/rules.js';
import { taskIrSchema } from '../../src/kinds/task-ir/schema.js';
import { workflowSessionsSchema } from '../../src/kinds/workflow-sessions/schema.js';
import { example } from './ctx.js';

const SCHEMAS = {
  'agent-run': agentRunSchema,
  'task-ir': taskIrSchema,
  'grid-mission': gridMissionSchema,
  'aios-workflow': aiosWorkflowSchema,
  'workflow-sessions': workflowSessionsSchema,
} as const;
type Name = keyof typeof SCHEMAS;

function file(name: Name): Record<string, unknown> {
  return JSON.parse(readFileSync(new URL(`../../schemas/${name}.schema.json`, import.meta.url), 'utf8'));
}

// A strict validator, as a consumer of the schema files would use it: unknown keywords are errors
// unless declared, so the two annotation keywords are declared.
const require = createRequire(import.meta.url);
const Ajv2020 = require('ajv/dist/2020.js') as {
  default: new (o: object) => { compile(s: object): ValidateFunction; addKeyword(k: string): unknown };
};
const ajv = new Ajv2020.default({ strict: true, allErrors: false, validateFormats: false });
ajv.addKeyword('x-kernel-abi');
ajv.addKeyword('x-rule');
const validators = {
  'agent-run': ajv.compile(file('agent-run')),
  'task-ir': ajv.compile(file('task-ir')),
  'grid-mission': ajv.compile(file('grid-mission')),
  'aios-workflow': ajv.compile(file('aios-workflow')),
  'workflow-sessions': ajv.compile(file('workflow-sessions')),
};

function errorsOf(name: Name, body: unknown) {
  const v = validators[name];
  return v(body) ? [] : (v.errors ?? []);
}

describe('schemas/*.schema.json', () => {
  it.each(Object.keys(SCHEMAS) as Name[])(
    '%s.schema.json equals the TypeScript schema object (regenerate: npx tsx scripts/gen-schemas.ts)',
    (name) => {
      expect(file(name)).toEqual(JSON.parse(JSON.stringify(SCHEMAS[name])));
    },
  );

  it.each(Object.keys(SCHEMAS) as Name[])('%s carries $id, draft 2020-12 and x-kernel-abi 1.0.0', (name) => {
    expect(file(name)).toMatchObject({
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      $id: `urn:agentstate:schema:${name}:1.0.0`,
      'x-kernel-abi': '1.0.0',
    });
  });

  it('accept the example documents', () => {
    for (const n of ['agent-run.minimal', 'agent-run.full'])
      expect(errorsOf('agent-run', example(n))).toEqual([]);
    for (const n of ['task-ir.minimal', 'task-ir.resolved', 'task-ir.open']) {
      expect(errorsOf('task-ir', example(n))).toEqual([]);
    }
    expect(errorsOf('grid-mission', example('grid/seed'))).toEqual([]);
  });

  type Case = [label: string, mutate: (b: Record<string, unknown>) => void, path: string];
  const agentRunCases: Case[] = [
    [
      'no run_id',
      (b) => {
        delete b.run_id;
      },
      '',
    ],
    [
      'unknown status',
      (b) => {
        b.status = 'done';
      },
      '/status',
    ],
    [
      'unknown field',
      (b) => {
        b.transcript = [];
      },
      '',
    ],
    [
      'negative spend',
      (b) => {
        b.budgets = { usd: { limit: 1, spent: -1 } };
      },
      '/budgets/usd/spent',
    ],
    [
      'evidence naming nothing',
      (b) => {
        b.facts = [{ id: 'f', statement: 's', evidence: [{}] }];
      },
      '/facts/0/evidence/0',
    ],
  ];
  it.each(agentRunCases)('agent-run refuses: %s', (_label, mutate, path) => {
    const b = example('agent-run.full') as Record<string, unknown>;
    mutate(b);
    expect(errorsOf('agent-run', b)[0]?.instancePath).toBe(path);
  });

  const taskIrCases: Case[] = [
    [
      'no goal',
      (b) => {
        delete b.goal;
      },
      '',
    ],
    [
      'ambiguity without question',
      (b) => {
        b.ambiguities = [{ id: 'q', status: 'open' }];
      },
      '/ambiguities/0',
    ],
    [
      'unknown ambiguity status',
      (b) => {
        b.ambiguities = [{ id: 'q', question: '?', status: 'guessed' }];
      },
      '/ambiguities/0/status',
    ],
  ];
  it.each(taskIrCases)('task-ir refuses: %s', (_label, mutate, path) => {
    const b = example('task-ir.open') as Record<string, unknown>;
    mutate(b);
    expect(errorsOf('task-ir', b)[0]?.instancePath).toBe(path);
  });

  it('a model field is refused by the schema with an x-rule annotation naming model-changes-are-events', () => {
    for (const [body, path] of [
      [{ ...example('agent-run.minimal'), current_model: 'gpt-x' }, '/current_model'],
      [{ ...example('agent-run.minimal'), environment: { model: 'gpt-x' } }, '/environment/model'],
    ] as const) {
      const e = errorsOf('agent-run', body)[0];
      expect(e?.instancePath).toBe(path);
      expect(schemaRule(agentRunSchema, e?.schemaPath ?? '')).toBe('model-changes-are-events');
    }
  });
});
