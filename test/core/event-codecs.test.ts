// The document and limit event codecs (src/core/codecs/documents.ts, limits.ts) hold their uses together
// (issue 44): over generated values (keys and ids with `|`, `+`, quotes, non-ASCII; rates and caps to their
// bounds) what the builder writes is what the fold verify replays reads back; and on both backends
// (PostgreSQL also through PgBouncer in transaction mode) the events a commit, a no-op, a limit's set and
// its removal leave are the builders' data byte for byte, and verify folds them back clean.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  committedData,
  DOCUMENT_EVENT_CODECS,
  type DocumentLog,
  docKey,
  noopData,
  noopKey,
} from '../../src/core/codecs/documents.js';
import { LIMIT_EVENT_CODECS, type LimitFold, limitEvent, limitStream } from '../../src/core/codecs/limits.js';
import { ACTOR_KINDS, type ActorKind, type JsonObject } from '../../src/core/types.js';
import { backendsForThisFile } from '../helpers/backends.js';

const backends = await backendsForThisFile({ pooled: true });
const seed = process.env.FC_SEED ? { seed: Number(process.env.FC_SEED) } : {};

/** Names as real systems write them, and worse: separators, quotes, backslashes, non-ASCII, controls. */
const name = fc.oneof(
  fc.string({ minLength: 1, maxLength: 40, unit: 'grapheme' }),
  fc.constantFrom('openai:org-1|ü+1', 'a"b\\c', 'tab\there', 'emoji 🚀/w-2', "o'neil"),
);
const actorKind = fc.constantFrom(...ACTOR_KINDS) as fc.Arbitrary<ActorKind>;
const rate = fc.option(
  fc.record({
    count: fc.integer({ min: 1, max: 1_000_000 }),
    period_ms: fc.integer({ min: 1, max: 2 ** 31 }),
  }),
);
const limit = fc.option(
  fc.record({ max_in_flight: fc.option(fc.integer({ min: 0, max: 1_000_000 })), rate }),
);

/** The data as the store keeps it: JSON text and back. */
const stored = (d: unknown): JsonObject => JSON.parse(JSON.stringify(d)) as JsonObject;

describe('limit event codecs', () => {
  it('a key’s limit folded from the events its changes build is the limit it was last given', () => {
    const change = fc.record({
      key: name,
      limit,
      actor: fc.option(name),
      actor_kind: actorKind,
      now: fc.nat(),
    });
    fc.assert(
      fc.property(fc.array(change, { minLength: 1, maxLength: 8 }), (changes) => {
        const folded = new Map<string, LimitFold>();
        const expected = new Map<string, LimitFold>();
        for (const q of changes) {
          const e = limitEvent(q);
          expect(e.type).toBe(q.limit ? 'work_limit_set' : 'work_limit_removed');
          expect(e.stream).toBe(limitStream(q.key));
          expect(e.stream).toBe(`work_limit:${q.key}`);
          expect(e.actor).toBe(q.actor);
          expect(e.created_at).toBe(q.now);
          const d = stored(e.data);
          expect(d.actor_kind).toBe(q.actor_kind);
          LIMIT_EVENT_CODECS.get(e.type)!.fold(folded, d as JsonObject & { key: string });
          if (q.limit) expected.set(q.key, { max_in_flight: q.limit.max_in_flight, rate: q.limit.rate });
          else expected.delete(q.key);
        }
        expect(folded).toEqual(expected);
      }),
      { numRuns: 200, ...seed },
    );
  });

  it('only the two limit types have a codec', () => {
    expect([...LIMIT_EVENT_CODECS.keys()].sort()).toEqual(['work_limit_removed', 'work_limit_set']);
  });
});

describe('document event codecs', () => {
  const source = fc.record(
    {
      kind: name,
      id: name,
      expected_version: fc.integer({ min: 0, max: 2 ** 40 }),
      write_id: name,
      reason: name,
    },
    { requiredKeys: ['kind', 'id', 'expected_version'] },
  );

  it('a commit’s state_committed folds into the version it made, as its history entry must say', () => {
    fc.assert(
      fc.property(
        source,
        actorKind,
        fc.stringMatching(/^[0-9a-f]{64}$/),
        fc.option(name),
        fc.nat(),
        (i, ak, hash, actor, at) => {
          const docs = new Map<string, DocumentLog>();
          const d = stored(committedData(i, ak, hash));
          const reports: string[] = [];
          DOCUMENT_EVENT_CODECS.get('state_committed')!.fold(
            docs,
            { type: 'state_committed', position: 1, actor, created_at: at },
            d,
            (m) => reports.push(m),
          );
          expect(reports).toEqual([]);
          const log = docs.get(docKey(i.kind, i.id))!;
          expect(log.latest).toBe(i.expected_version + 1);
          expect(log.versions.get(i.expected_version + 1)).toEqual({
            content_hash: hash,
            actor,
            actor_kind: ak,
            parent_version: i.expected_version,
            write_id: i.write_id ?? null,
            reason: i.reason ?? null,
            created_at: at,
          });
          expect(log.noops.size).toBe(0);
        },
      ),
      { numRuns: 200, ...seed },
    );
  });

  it('a no-op’s state_committed folds into the key its history entry is matched by, and makes no version', () => {
    fc.assert(
      fc.property(
        source,
        fc.integer({ min: 1, max: 2 ** 40 }),
        actorKind,
        fc.option(name),
        fc.nat(),
        (i, v, ak, actor, at) => {
          const docs = new Map<string, DocumentLog>();
          const d = stored(noopData(i, v, ak));
          DOCUMENT_EVENT_CODECS.get('state_committed')!.fold(
            docs,
            { type: 'state_committed', position: 1, actor, created_at: at },
            d,
            () => {
              throw new Error('reported');
            },
          );
          const log = docs.get(docKey(i.kind, i.id))!;
          expect(log.versions.size).toBe(0);
          // The key a history row of the same no-op makes (integrity/documents.ts matches the two).
          expect([...log.noops]).toEqual([
            [noopKey(v, i.expected_version, actor, ak, i.reason ?? null, at), 1],
          ]);
        },
      ),
      { numRuns: 200, ...seed },
    );
  });

  it('an event that names no document version is reported, not folded', () => {
    const docs = new Map<string, DocumentLog>();
    const reports: string[] = [];
    for (const d of [
      {},
      { kind: 'json', id: 'a' },
      { kind: 'json', id: 'a', version: 1.5 },
      { kind: 1, id: 'a', version: 1 },
    ]) {
      DOCUMENT_EVENT_CODECS.get('state_committed')!.fold(
        docs,
        { type: 'state_committed', position: 7, actor: null, created_at: 0 },
        d as JsonObject,
        (m) => reports.push(m),
      );
    }
    expect(reports).toEqual(Array(4).fill('event #7 (state_committed) names no document version'));
    expect(docs.size).toBe(0);
  });
});

describe.each(backends.map((b) => [b.name, b] as const))(
  'document and limit events through the store on %s',
  (_, b) => {
    it('the stored events are the builders’ data byte for byte, and verify folds them back', async () => {
      const inst = await b.open();
      try {
        const kind = 'json';
        const id = 'plan|ü+1 "x"';
        const first = await inst.docs.commit({
          kind,
          id,
          expected_version: 0,
          body: { a: 1 },
          actor: 'p|1',
          actor_kind: 'tool',
        });
        const second = await inst.docs.commit({
          kind,
          id,
          expected_version: 1,
          merge_patch: { b: 'ü' },
          actor: 'p|1',
          actor_kind: 'model',
          provenance: { model_id: 'm', run_id: 'r', step_id: 's', input_hash: 'h' },
          write_id: 'w+1',
          reason: 'why "not"',
        });
        await inst.docs.commit({
          kind,
          id,
          expected_version: 2,
          noop: true,
          reason: 'checked 🚀',
          actor: 'p|1',
          actor_kind: 'human',
        });
        await inst.work.setLimit({
          key: 'openai:org|ü',
          max_in_flight: 2,
          rate: { count: 60, period_ms: 60_000 },
        });
        await inst.work.setLimit({
          key: 'openai:org|ü',
          max_in_flight: null,
          rate: { count: 1, period_ms: 1 },
        });
        await inst.work.setLimit({ key: 'k2', max_in_flight: 3 });
        await inst.work.removeLimit({ key: 'k2' });

        const docEvents = await inst.events.read({ type: 'state_committed', limit: 10 });
        expect(docEvents.map((e) => JSON.stringify(e.data))).toEqual([
          JSON.stringify(committedData({ kind, id, expected_version: 0 }, 'tool', first.content_hash)),
          JSON.stringify(
            committedData(
              { kind, id, expected_version: 1, write_id: 'w+1', reason: 'why "not"' },
              'model',
              second.content_hash,
            ),
          ),
          JSON.stringify(noopData({ kind, id, expected_version: 2, reason: 'checked 🚀' }, 2, 'human')),
        ]);
        const limitEvents = [
          ...(await inst.events.read({ type: 'work_limit_set', limit: 10 })),
          ...(await inst.events.read({ type: 'work_limit_removed', limit: 10 })),
        ].sort((x, y) => x.position - y.position);
        const built = [
          { key: 'openai:org|ü', limit: { max_in_flight: 2, rate: { count: 60, period_ms: 60_000 } } },
          { key: 'openai:org|ü', limit: { max_in_flight: null, rate: { count: 1, period_ms: 1 } } },
          { key: 'k2', limit: { max_in_flight: 3, rate: null } },
          { key: 'k2', limit: null },
        ].map((q, k) =>
          limitEvent({
            ...q,
            actor: limitEvents[k]!.actor,
            actor_kind: 'system',
            now: 0,
          }),
        );
        expect(limitEvents.map((e) => [e.type, e.stream, JSON.stringify(e.data)])).toEqual(
          built.map((e) => [e.type, e.stream, JSON.stringify(e.data)]),
        );
        expect((await inst.events.verify()).ok).toBe(true);
      } finally {
        await inst.close();
      }
    });
  },
);
