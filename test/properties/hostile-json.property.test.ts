// Property test (issue 10): generated hostile JSON — prototype keys, deep nesting, numbers JSON cannot
// carry, odd strings — through commit, merge patch, JSON Patch and annotate on every kind. Each call either
// stores exactly what a reference model says (and nothing reserved), or is refused with a typed error that
// is never INTERNAL and writes nothing. FC_SEED replays a seed.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/core/json.js';
import type { CommitInput, JsonObject } from '../../src/core/types.js';
import { type Instance, openInstance } from '../../src/instance/instance.js';
import { appendUntil, FULL_EXAMPLE_EVENTS } from '../helpers/events.js';
import { tempDir } from '../helpers/tmp.js';

const seed = process.env.FC_SEED === undefined ? undefined : Number(process.env.FC_SEED);
const params = { numRuns: 60, ...(seed === undefined ? {} : { seed }) };

/** The keys the store's JSON policy refuses (docs/concepts.md), written out here on purpose. */
const RESERVED_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

const dir = tempDir();
let inst: Instance;
beforeAll(async () => {
  inst = await openInstance({ dir: join(dir, 'i') });
  await inst.docs.commit({
    kind: 'task-ir',
    id: 'task-example',
    expected_version: 0,
    body: example('task-ir.resolved'),
  });
  await appendUntil(inst, FULL_EXAMPLE_EVENTS);
});
afterAll(async () => {
  await inst.close();
});

function example(name: string): JsonObject {
  const path = new URL(`../kinds/examples/${name}`, import.meta.url);
  return JSON.parse(
    readFileSync(name.endsWith('.json') ? path : new URL(`${path}.json`), 'utf8'),
  ) as JsonObject;
}

/** An own enumerable key, even `__proto__` (an assignment would set the prototype instead). */
function put(obj: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
}

const keyArb = fc.oneof(
  {
    arbitrary: fc.constantFrom(...RESERVED_KEYS, 'toString', 'valueOf', 'hasOwnProperty', 'toJSON'),
    weight: 2,
  },
  {
    arbitrary: fc.constantFrom('', 'a', 'b', 'status', 'facts', '\u2028', '😀', 'a\u0000b', '\ud800', '~1/'),
    weight: 3,
  },
  { arbitrary: fc.string({ maxLength: 8 }), weight: 3 },
);
const leafArb = fc.oneof(
  fc.double(), // NaN, ±Infinity and -0 among them
  fc.constantFrom(0, -0, 1e308, Number.MAX_SAFE_INTEGER + 2, 10n, Number.NaN),
  fc.string({ unit: 'binary', maxLength: 6 }), // lone surrogates among them
  fc.constantFrom('\u0000', '\u2028', 'é', '"\\'),
  fc.boolean(),
  fc.constant(null),
);
const { value: valueArb } = fc.letrec<{ value: unknown; object: Record<string, unknown> }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    leafArb,
    tie('object'),
    fc.array(tie('value'), { maxLength: 3 }),
  ),
  object: fc.array(fc.tuple(keyArb, tie('value')), { maxLength: 4 }).map((entries) => {
    const o: Record<string, unknown> = {};
    for (const [k, v] of entries) put(o, k, v);
    return o;
  }),
}));
/** A value nested `depth` levels (around the 256 limit). */
const deepArb = fc.integer({ min: 250, max: 300 }).map((depth) => {
  let v: unknown = 1;
  for (let i = 0; i < depth; i++) v = i % 2 ? [v] : { d: v };
  return v;
});
const hostileArb = fc.oneof({ arbitrary: valueArb, weight: 5 }, { arbitrary: deepArb, weight: 1 });
const objectArb = fc
  .tuple(fc.array(fc.tuple(keyArb, hostileArb), { minLength: 1, maxLength: 4 }))
  .map(([entries]) => {
    const o: Record<string, unknown> = {};
    for (const [k, v] of entries) put(o, k, v);
    return o as JsonObject;
  });

const isObj = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** RFC 7396 over own keys only. */
function mergeModel(target: unknown, patch: unknown): unknown {
  if (!isObj(patch)) return patch;
  const out: Record<string, unknown> = {};
  if (isObj(target)) for (const k of Object.keys(target)) put(out, k, target[k]);
  for (const k of Object.keys(patch)) {
    if (patch[k] === null) delete out[k];
    else put(out, k, mergeModel(Object.hasOwn(out, k) ? out[k] : null, patch[k]));
  }
  return out;
}

function hasReservedKey(v: unknown): boolean {
  if (Array.isArray(v)) return v.some(hasReservedKey);
  if (!isObj(v)) return false;
  return Object.keys(v).some((k) => RESERVED_KEYS.has(k) || hasReservedKey(v[k]));
}

/** Every refusal is typed; none is INTERNAL (exit 10). */
const TYPED = new Set([
  'INVALID_INPUT',
  'VALIDATION_FAILED',
  'PERMISSION_DENIED',
  'PROVENANCE_REQUIRED',
  'AMBIGUITY_UNRESOLVED',
  'INVALID_TRANSITION',
  'STATE_CONFLICT',
]);

async function head(): Promise<number> {
  return (await inst.events.head())?.position ?? 0;
}

let n = 0;
/** Commits `input` and checks the property; returns the stored body on success. */
async function commitChecked(input: CommitInput, expected?: unknown): Promise<void> {
  const before = { version: (await inst.docs.find(input.kind, input.id))?.version ?? 0, head: await head() };
  let result: Awaited<ReturnType<Instance['docs']['commit']>> | null = null;
  try {
    result = await inst.docs.commit(input);
  } catch (err) {
    const code = (err as { code?: string }).code ?? 'untyped';
    expect(TYPED.has(code), `${code}: ${(err as Error).message}`).toBe(true);
    expect({
      version: (await inst.docs.find(input.kind, input.id))?.version ?? 0,
      head: await head(),
    }).toEqual(before);
    return;
  }
  const stored = await inst.docs.get({ kind: input.kind, id: input.id });
  expect(canonicalJson(stored.body)).toBe(canonicalJson(result.body));
  expect(hasReservedKey(stored.body)).toBe(false);
  if (expected !== undefined) expect(canonicalJson(stored.body)).toBe(canonicalJson(expected));
}

const KINDS: Array<{ kind: string; body: () => JsonObject; extra?: Partial<CommitInput> }> = [
  { kind: 'json', body: () => ({ a: 1 }) },
  { kind: 'agent-run', body: () => example('agent-run.full'), extra: { actor: 'coder' } },
  { kind: 'task-ir', body: () => example('task-ir.minimal') },
  { kind: 'grid-mission', body: () => example('grid/seed.json'), extra: { actor: 'mc', role: 'mc' } },
  { kind: 'aios-workflow', body: () => example('aios/minimal.json') },
  { kind: 'workflow-sessions', body: () => example('sessions/deploy.json') },
];

describe('hostile JSON never bypasses a kind or ends INTERNAL', () => {
  for (const k of KINDS) {
    it(`${k.kind}: a hostile body, or a valid body with a hostile field, is stored as sent or refused`, async () => {
      await fc.assert(
        fc.asyncProperty(objectArb, fc.boolean(), async (hostile, inject) => {
          const id = `b${++n}`;
          let body: JsonObject = hostile;
          if (inject) {
            body = k.body();
            for (const key of Object.keys(hostile)) put(body, key, hostile[key]);
          }
          await commitChecked(
            { kind: k.kind, id, expected_version: 0, body, ...k.extra },
            k.kind === 'json' ? body : undefined,
          );
        }),
        params,
      );
    });

    it(`${k.kind}: merge patches and JSON Patches over a valid document`, async () => {
      const id = `p${++n}`;
      const base = k.body();
      const created = await inst.docs.commit({
        kind: k.kind,
        id,
        expected_version: 0,
        body: base,
        ...k.extra,
      });
      expect(created.version).toBe(1);
      const segArb = fc.oneof(keyArb, fc.constantFrom('-', '0', '1'));
      const pathArb = fc.array(segArb, { minLength: 1, maxLength: 3 }).map((s) => `/${s.join('/')}`);
      const opArb = fc.record({
        op: fc.constantFrom('add', 'replace', 'remove', 'copy', 'move', 'test'),
        path: pathArb,
        from: pathArb,
        value: hostileArb,
      });
      await fc.assert(
        fc.asyncProperty(objectArb, fc.array(opArb, { minLength: 1, maxLength: 3 }), async (patch, ops) => {
          const cur = await inst.docs.get({ kind: k.kind, id });
          await commitChecked(
            { kind: k.kind, id, expected_version: cur.version, merge_patch: patch, ...k.extra },
            k.kind === 'json' ? mergeModel(cur.body, patch) : undefined,
          );
          const now = await inst.docs.get({ kind: k.kind, id });
          await commitChecked({
            kind: k.kind,
            id,
            expected_version: now.version,
            json_patch: ops as unknown as CommitInput['json_patch'],
            ...k.extra,
          });
        }),
        params,
      );
    });
  }

  it('annotate: notes are merged as RFC 7396 says, or refused with the notes unchanged', async () => {
    const item = await inst.work.enqueue({ title: 'notes' });
    await fc.assert(
      fc.asyncProperty(objectArb, async (notes) => {
        const before = await inst.work.get(item.id);
        try {
          const after = await inst.work.annotate({ id: item.id, notes });
          expect(canonicalJson(after.notes)).toBe(canonicalJson(mergeModel(before.notes, notes)));
          expect(canonicalJson((await inst.work.get(item.id)).notes)).toBe(canonicalJson(after.notes));
        } catch (err) {
          expect((err as { code?: string }).code).toBe('INVALID_INPUT');
          expect((await inst.work.get(item.id)).notes).toEqual(before.notes);
        }
      }),
      params,
    );
  });
});
