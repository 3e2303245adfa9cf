// Property test: random sequences of commits, stale commits, retries, no-ops, forks and prunes
// against a simple in-memory model of versioned documents; the store must agree after every step.
import { join } from 'node:path';
import fc from 'fast-check';
import { expect, it } from 'vitest';
import { openInstance } from '../../src/instance/instance.js';
import { tempDir } from '../helpers/tmp.js';

type Body = { v: number; tag: string };

interface ModelDoc {
  latest: number;
  bodies: Map<number, Body>;
  /** Lowest version still readable (retention). */
  floor: number;
  writes: Map<string, { version: number; body: Body; expected: number }>;
}

type Op =
  | { op: 'commit'; doc: number; tag: string; stale: boolean; writeId: string | null }
  | { op: 'retry'; pick: number }
  | { op: 'noop'; doc: number }
  | { op: 'fork'; doc: number; back: number; to: number }
  | { op: 'prune'; doc: number; keep: number }
  | { op: 'read'; doc: number; back: number };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    arbitrary: fc.record({
      op: fc.constant('commit' as const),
      doc: fc.integer({ min: 0, max: 2 }),
      tag: fc.string({ maxLength: 6 }),
      stale: fc.boolean(),
      writeId: fc.option(fc.constantFrom('w1', 'w2', 'w3', 'w4', 'w5'), { nil: null }),
    }),
    weight: 5,
  },
  { arbitrary: fc.record({ op: fc.constant('retry' as const), pick: fc.nat() }), weight: 2 },
  {
    arbitrary: fc.record({ op: fc.constant('noop' as const), doc: fc.integer({ min: 0, max: 2 }) }),
    weight: 1,
  },
  {
    arbitrary: fc.record({
      op: fc.constant('fork' as const),
      doc: fc.integer({ min: 0, max: 2 }),
      back: fc.nat({ max: 3 }),
      to: fc.integer({ min: 3, max: 5 }),
    }),
    weight: 1,
  },
  {
    arbitrary: fc.record({
      op: fc.constant('prune' as const),
      doc: fc.integer({ min: 0, max: 5 }),
      keep: fc.integer({ min: 1, max: 3 }),
    }),
    weight: 1,
  },
  {
    arbitrary: fc.record({
      op: fc.constant('read' as const),
      doc: fc.integer({ min: 0, max: 5 }),
      back: fc.nat({ max: 4 }),
    }),
    weight: 2,
  },
);

const root = tempDir();
let run = 0;

async function codeOf(p: Promise<unknown>): Promise<string | null> {
  try {
    await p;
    return null;
  } catch (err) {
    return (err as { code?: string }).code ?? 'THROWN';
  }
}

it('documents agree with an in-memory model under random operation sequences', async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 40 }), async (ops) => {
      const inst = await openInstance({ dir: join(root, `run-${++run}`), durability: 'normal' });
      const model = new Map<string, ModelDoc>();
      const sentWrites: Array<{ id: string; writeId: string; expected: number; body: Body }> = [];
      const docOf = (id: string): ModelDoc => {
        let d = model.get(id);
        if (!d) {
          d = { latest: 0, bodies: new Map(), floor: 1, writes: new Map() };
          model.set(id, d);
        }
        return d;
      };
      try {
        for (const o of ops) {
          if (o.op === 'commit') {
            const id = `d${o.doc}`;
            const d = docOf(id);
            const expected = o.stale ? Math.max(0, d.latest - 1) : d.latest;
            const body: Body = { v: d.latest + 1, tag: o.tag };
            const stale = expected !== d.latest;
            const writeReused = o.writeId !== null && d.writes.has(o.writeId);
            const p = inst.docs.commit({
              kind: 'json',
              id,
              expected_version: expected,
              body,
              ...(o.writeId === null ? {} : { write_id: o.writeId }),
            });
            if (writeReused) {
              const prior = d.writes.get(o.writeId!)!;
              const same = prior.expected === expected && JSON.stringify(prior.body) === JSON.stringify(body);
              if (same) expect(((await p) as { version: number }).version).toBe(prior.version);
              else expect(await codeOf(p)).toBe('STATE_CONFLICT');
            } else if (stale) {
              expect(await codeOf(p)).toBe('STATE_CONFLICT');
            } else {
              const r = await p;
              expect(r).toMatchObject({ version: d.latest + 1, changed: true, replayed: false });
              d.latest += 1;
              d.bodies.set(d.latest, body);
              if (o.writeId !== null) {
                d.writes.set(o.writeId, { version: d.latest, body, expected });
                sentWrites.push({ id, writeId: o.writeId, expected, body });
              }
            }
          } else if (o.op === 'retry') {
            if (sentWrites.length === 0) continue;
            const w = sentWrites[o.pick % sentWrites.length]!;
            const p = inst.docs.commit({
              kind: 'json',
              id: w.id,
              expected_version: w.expected,
              body: w.body,
              write_id: w.writeId,
            });
            // A write id is remembered as long as its version is retained; a forgotten one (pruned, or
            // since reused for another change) is an ordinary commit against a stale version.
            const known = docOf(w.id).writes.get(w.writeId);
            if (
              known &&
              known.expected === w.expected &&
              JSON.stringify(known.body) === JSON.stringify(w.body)
            ) {
              expect(await p).toMatchObject({ replayed: true, version: known.version, body: w.body });
            } else {
              expect(await codeOf(p)).toBe('STATE_CONFLICT');
            }
          } else if (o.op === 'noop') {
            const id = `d${o.doc}`;
            const d = docOf(id);
            const p = inst.docs.commit({
              kind: 'json',
              id,
              expected_version: d.latest,
              noop: true,
              reason: 'nothing',
            });
            if (d.latest === 0) expect(await codeOf(p)).toBe('INVALID_INPUT');
            else expect(await p).toMatchObject({ version: d.latest, noop: true });
          } else if (o.op === 'fork') {
            const src = docOf(`d${o.doc}`);
            const target = `d${o.to}`;
            const t = docOf(target);
            const version = src.latest - o.back;
            const p = inst.docs.fork({
              kind: 'json',
              id: `d${o.doc}`,
              new_id: target,
              ...(version >= 1 ? { version } : {}),
            });
            const readable = src.latest > 0 && (version < 1 || version >= src.floor);
            const srcVersion = version >= 1 ? version : src.latest;
            if (!readable) expect(await codeOf(p)).toBe('NOT_FOUND');
            else if (t.latest !== 0) expect(await codeOf(p)).toBe('STATE_CONFLICT');
            else {
              const r = await p;
              expect(r.version).toBe(1);
              t.latest = 1;
              t.bodies.set(1, src.bodies.get(srcVersion)!);
            }
          } else if (o.op === 'prune') {
            const id = `d${o.doc}`;
            const d = docOf(id);
            await inst.docs.prune({ kind: 'json', id, keep: o.keep });
            if (d.latest > 0) d.floor = Math.max(d.floor, d.latest - o.keep + 1);
            // Pruning a version forgets the write id it was written with.
            for (const [wid, w] of d.writes) if (w.version < d.floor) d.writes.delete(wid);
          } else {
            const id = `d${o.doc}`;
            const d = docOf(id);
            const version = d.latest - o.back;
            if (d.latest === 0) {
              expect(await codeOf(inst.docs.get({ kind: 'json', id }))).toBe('NOT_FOUND');
            } else if (version < 1) {
            } else if (version < d.floor) {
              expect(await codeOf(inst.docs.get({ kind: 'json', id, version }))).toBe('NOT_FOUND');
            } else {
              const got = await inst.docs.get({ kind: 'json', id, version });
              expect(got.body).toEqual(d.bodies.get(version));
            }
          }
        }
        // Final state: every document's latest body and gapless retained history.
        for (const [id, d] of model) {
          if (d.latest === 0) continue;
          const doc = await inst.docs.get({ kind: 'json', id });
          expect([doc.version, doc.body]).toEqual([d.latest, d.bodies.get(d.latest)]);
          const versions = (await inst.docs.history({ kind: 'json', id, limit: 1000 })).entries
            .filter((e) => !e.noop)
            .map((e) => e.version);
          expect(versions).toEqual(Array.from({ length: d.latest - d.floor + 1 }, (_, i) => d.floor + i));
        }
        expect((await inst.events.verify()).ok).toBe(true);
      } finally {
        await inst.close();
      }
    }),
    { numRuns: 150, ...(process.env.FC_SEED ? { seed: Number(process.env.FC_SEED) } : {}) },
  );
});
