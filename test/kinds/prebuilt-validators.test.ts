// The validators the build writes (scripts/gen-validators.mjs → dist/kinds/validators/): one per built-in kind,
// made from the schema the kind has now (a stale one would validate an old schema), answering as ajv's
// compiled validator does on good and bad bodies, and used only while the kind's schema is that schema.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { ValidateFunction } from 'ajv';
import { describe, expect, it } from 'vitest';
import { AJV_OPTIONS, getKind, kindNames, schemaHash } from '../../src/kinds/registry.js';
import { example } from './ctx.js';

const require = createRequire(import.meta.url);
const DIST = new URL('../../dist/kinds/validators/', import.meta.url);
const index = JSON.parse(readFileSync(new URL('index.json', DIST), 'utf8')) as Record<string, string>;
const Ajv2020 = require('ajv/dist/2020.js').default as new (
  o: object,
) => { compile(s: object): ValidateFunction };

const GOOD: Record<string, string[]> = {
  'agent-run': ['agent-run.minimal', 'agent-run.full'],
  'task-ir': ['task-ir.minimal', 'task-ir.open', 'task-ir.resolved'],
  'grid-mission': ['grid/seed'],
  'aios-workflow': ['aios/minimal'],
  'workflow-sessions': ['sessions/deploy', 'sessions/empty'],
};

describe('prebuilt kind validators', () => {
  it('exist for every built-in kind with a schema, made from the schema it has now', () => {
    for (const name of kindNames()) {
      const kind = getKind(name);
      if (kind.schema) expect(index[name], name).toBe(schemaHash(kind.schema));
    }
  });

  it('answer as ajv compiled from the schema does, on good bodies and bad ones', () => {
    for (const name of Object.keys(index)) {
      const prebuilt = require(new URL(`${name}.cjs`, DIST).pathname) as ValidateFunction;
      const compiled = new Ajv2020(AJV_OPTIONS).compile(getKind(name).schema);
      const bodies: unknown[] = [{}, { unknown: 1 }, [], 'x', { sessions: 'no' }];
      for (const e of GOOD[name] ?? []) {
        const good = example(e);
        bodies.push(good);
        // The same body with each top-level field broken in turn.
        for (const k of Object.keys(good)) bodies.push({ ...good, [k]: { broken: [1, null] } });
      }
      let valid = 0;
      for (const body of bodies) {
        const a = prebuilt(body);
        const b = compiled(body);
        expect(a, `${name}: ${JSON.stringify(body).slice(0, 80)}`).toBe(b);
        if (a) valid++;
        else expect(prebuilt.errors?.[0]?.schemaPath).toBe(compiled.errors?.[0]?.schemaPath);
      }
      if (GOOD[name]) expect(valid, name).toBeGreaterThanOrEqual(GOOD[name]!.length);
    }
  });

  it('are not used for a kind registered again with another schema (the built registry compiles it)', async () => {
    type Registry = typeof import('../../src/kinds/registry.js');
    const dist = (await import(new URL('../registry.js', DIST).href)) as Registry;
    const json = dist.getKind('json');
    dist.validateSchema(json, { anything: 1 });
    dist.registerKind({ ...json, schema: { type: 'object', required: ['must'] } });
    expect(() => dist.validateSchema(dist.getKind('json'), { anything: 1 })).toThrow(/must/);
    dist.registerKind(json);
    dist.validateSchema(dist.getKind('json'), { anything: 1 });
  });
});
