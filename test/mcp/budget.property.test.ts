// The result budget as a property (issue 40): random instances (items with payloads from nothing to 300k
// characters, events with large data, batch enqueues, documents from tiny to 400k characters) and random
// calls of every tool under a random budget — every result, refusals included, is within the budget, and
// every structured result matches the tool's output schema as the official 1.x client checks it.
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Instance } from '../../src/instance/instance.js';
import { MIN_MAX_RESULT_CHARS } from '../../src/mcp/budget.js';
import { backendsForThisFile } from '../helpers/backends.js';
import { connect } from './helpers.js';

const TOOLS = [
  'resume',
  'claim',
  'claim_many',
  'get_document',
  'history',
  'read_events',
  'list_items',
  'list_documents',
  'get_item',
  'list_steps',
];

const big = (n: number) => ({ text: 'ü|+'.repeat(Math.ceil(n / 3)).slice(0, n), list: [1, 2, 3] });

const instanceArb = fc.record({
  payloads: fc.array(
    fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 2_000 }), fc.integer({ min: 0, max: 300_000 })),
    {
      maxLength: 25,
    },
  ),
  batch: fc.integer({ min: 0, max: 200 }),
  events: fc.array(fc.integer({ min: 0, max: 250_000 }), { maxLength: 6 }),
  docChars: fc.oneof(fc.integer({ min: 0, max: 500 }), fc.integer({ min: 1_000, max: 400_000 })),
  claimed: fc.integer({ min: 0, max: 10 }),
});

const callArb = fc.oneof(
  fc.record({
    name: fc.constant('resume'),
    args: fc.record({ full: fc.boolean(), after: fc.constant(0) }, { requiredKeys: [] }),
  }),
  fc.record({ name: fc.constant('claim'), args: fc.constant({}) }),
  fc.record({
    name: fc.constant('claim_many'),
    args: fc.record({ limit: fc.integer({ min: 1, max: 1000 }) }),
  }),
  fc.record({
    name: fc.constant('get_document'),
    args: fc.record(
      {
        paths: fc.constantFrom(['/doc'], ['/doc/rows'], ['/doc/rows/0', '/title'], ['/missing']),
        max_chars: fc.integer({ min: 200, max: 1_000_000 }),
      },
      { requiredKeys: [] },
    ),
  }),
  fc.record({
    name: fc.constant('history'),
    args: fc.record({ limit: fc.integer({ min: 1, max: 10_000 }) }, { requiredKeys: [] }),
  }),
  fc.record({
    name: fc.constant('read_events'),
    args: fc.record(
      {
        after: fc.integer({ min: 0, max: 5 }),
        limit: fc.integer({ min: 1, max: 100_000 }),
        reverse: fc.boolean(),
        type: fc.constantFrom('work_item_enqueued', 'note'),
      },
      { requiredKeys: [] },
    ),
  }),
  fc.record({
    name: fc.constant('list_items'),
    args: fc.record({ limit: fc.integer({ min: 1, max: 100_000 }) }, { requiredKeys: [] }),
  }),
  fc.record({ name: fc.constant('list_documents'), args: fc.constant({}) }),
  fc.record({ name: fc.constant('get_item'), args: fc.constant({ id: 'first' }) }),
  fc.record({ name: fc.constant('list_steps'), args: fc.constant({ id: 'first' }) }),
);

type Shape = typeof instanceArb extends fc.Arbitrary<infer T> ? T : never;

async function fill(inst: Instance, shape: Shape): Promise<string[]> {
  const ids: string[] = [];
  for (const [k, n] of shape.payloads.entries()) {
    ids.push(
      (await inst.work.enqueue({ title: `item ${k} | ü+ ${'t'.repeat(k * 30)}`, payload: big(n) })).id,
    );
  }
  if (shape.batch > 0) {
    const many = await inst.work.enqueueMany(
      Array.from({ length: shape.batch }, (_, k) => ({
        title: `batch ${k} ✓`,
        payload: { k, note: 'n'.repeat(300) },
      })),
    );
    ids.push(...many.map((w) => w.id));
  }
  for (const n of shape.events) await inst.events.append({ type: 'note', data: big(n) });
  const rows = Array.from({ length: Math.max(1, Math.floor(shape.docChars / 100)) }, (_, k) => ({
    k,
    v: 'r'.repeat(90),
  }));
  await inst.docs.commit({
    kind: 'json',
    id: 'doc|ü',
    expected_version: 0,
    body: { title: 'the doc', doc: { rows } },
  });
  if (shape.claimed > 0)
    await inst.work.claimMany({ worker: 'w', limit: shape.claimed, lease_ms: 86_400_000 });
  return ids;
}

const backends = await backendsForThisFile();
const ajv = new AjvJsonSchemaValidator();

for (const b of backends.slice(0, 1)) {
  describe(`every result within the budget (${b.name})`, () => {
    let insts: Instance[] = [];
    beforeAll(() => {
      insts = [];
    });
    afterAll(async () => {
      for (const i of insts) await i.close().catch(() => {});
    });

    it('random instances, random calls, random budgets', async () => {
      await fc.assert(
        fc.asyncProperty(
          instanceArb,
          fc.integer({ min: MIN_MAX_RESULT_CHARS, max: 60_000 }),
          fc.array(callArb, { minLength: 3, maxLength: 8 }),
          async (shape, budget, calls) => {
            const inst = await b.open();
            insts.push(inst);
            const ids = await fill(inst, shape);
            const { client, close } = await connect(inst, {
              tools: TOOLS,
              maxResultChars: budget,
              worker: 'w',
            });
            try {
              const schemas = new Map(
                (await client.listTools()).tools.map((t) => [
                  t.name,
                  t.outputSchema as Record<string, unknown>,
                ]),
              );
              for (const c of calls) {
                const args: Record<string, unknown> = { ...c.args };
                if (c.name === 'get_document' || c.name === 'history')
                  Object.assign(args, { kind: 'json', id: 'doc|ü' });
                if (args.id === 'first') args.id = ids[0] ?? 'none';
                const r = await client.callTool({ name: c.name, arguments: args });
                const size = JSON.stringify({
                  content: r.content,
                  structuredContent: r.structuredContent,
                }).length;
                expect(size, `${c.name} ${JSON.stringify(args)} at ${budget}`).toBeLessThanOrEqual(budget);
                if (r.structuredContent) {
                  const v = ajv.getValidator(schemas.get(c.name) as never)(r.structuredContent);
                  expect(v.valid, `${c.name}: ${v.errorMessage}`).toBe(true);
                }
              }
            } finally {
              await close();
            }
          },
        ),
        { numRuns: 30 },
      );
    }, 300_000);
  });
}
