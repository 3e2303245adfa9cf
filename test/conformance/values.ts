// Store conformance, values: one JSON rule on every write path of every backend. A value is stored as
// JSON.stringify writes it (toJSON honoured: a Date is its ISO string, a URL its href), a bigint or a Map is
// refused with INVALID_INPUT writing nothing, and the stored form is the one its hash covers (verify).
import { describe, expect } from 'vitest';
import type { CommitInput, Json, JsonObject } from '../../src/core/types.js';
import { type ConformanceTest, type Ctx, eventCount, expectCode } from './setup.js';

const WHEN = new Date(Date.UTC(2026, 0, 2, 3, 4, 5, 6));
const WHERE = new URL('https://example.test/a b?q=1#top');

/** What the application hands the store: a Date, a URL, and a Date nested in an array. */
const given = () => ({ when: WHEN, where: WHERE, list: [WHEN, 1] }) as unknown as JsonObject;
/** What every read gives back, on every backend. */
const stored: JsonObject = {
  when: '2026-01-02T03:04:05.006Z',
  where: 'https://example.test/a%20b?q=1#top',
  list: ['2026-01-02T03:04:05.006Z', 1],
};
/** Values no JSON text carries faithfully. */
const refused = (): Array<[string, Json]> => [
  ['bigint', { n: 10n } as unknown as Json],
  ['Map', { m: new Map([['a', 1]]) } as unknown as Json],
];

/**
 * One write path: `prepare` makes what the write needs (a document at version 1, a held item), `write`
 * stores `value` there and says where, `read` reads that place back.
 */
interface WritePath {
  name: string;
  prepare(c: Ctx): Promise<string>;
  write(c: Ctx, at: string, value: Json): Promise<string | number>;
  read(c: Ctx, where: string | number): Promise<Json>;
}

let n = 0;
const fresh = async () => `x${++n}`;
/** A document at version 1 (`{ base: true }`). */
async function docAtOne(c: Ctx): Promise<string> {
  const id = `d${++n}`;
  await c.docs.commit({ kind: 'json', id, expected_version: 0, body: { base: true } });
  return id;
}
/** An item held by worker w. */
async function heldItem(c: Ctx): Promise<string> {
  const item = await c.work.enqueue({ title: 'held' });
  await c.work.claim({ id: item.id, worker: 'w' });
  return item.id;
}
const docV = async (c: Ctx, id: string | number) =>
  (await c.docs.get({ kind: 'json', id: `${id}` })).body.v as Json;
const item = (c: Ctx, id: string | number) => c.work.get(`${id}`);
const eventV = async (c: Ctx, position: string | number) =>
  ((await c.events.read({ after: (position as number) - 1, limit: 1 }))[0]!.data as JsonObject).v as Json;

/** A commit of `change(value)` to a document at `from` (0: a new one; 1: one at version 1). */
function docPath(name: string, from: 0 | 1, change: (v: Json) => Partial<CommitInput>): WritePath {
  return {
    name,
    prepare: from === 0 ? fresh : docAtOne,
    write: async (c, id, v) => {
      await c.docs.commit({ kind: 'json', id, expected_version: from, ...change(v) });
      return id;
    },
    read: docV,
  };
}

const PATHS: WritePath[] = [
  docPath('document commit body', 0, (v) => ({ body: { v } })),
  docPath('document merge patch', 1, (v) => ({ merge_patch: { v } })),
  docPath('document json patch', 1, (v) => ({ json_patch: [{ op: 'add', path: '/v', value: v }] })),
  {
    name: 'work item payload',
    prepare: fresh,
    write: async (c, _, v) => (await c.work.enqueue({ title: 'p', payload: { v } })).id,
    read: async (c, id) => ((await item(c, id)).payload as JsonObject).v as Json,
  },
  {
    name: 'work item payload (enqueueMany)',
    prepare: fresh,
    write: async (c, _, v) =>
      (await c.work.enqueueMany([{ title: 'a' }, { title: 'p', payload: { v } }]))[1]!.id,
    read: async (c, id) => ((await item(c, id)).payload as JsonObject).v as Json,
  },
  {
    name: 'work item result',
    prepare: heldItem,
    write: async (c, id, v) => (await c.work.resolve({ id, worker: 'w', status: 'done', result: { v } })).id,
    read: async (c, id) => ((await item(c, id)).result as JsonObject).v as Json,
  },
  {
    name: 'work item result (resolveMany)',
    prepare: heldItem,
    write: async (c, id, v) =>
      (await c.work.resolveMany([{ id, worker: 'w', status: 'done', result: { v } }]))[0]!.id,
    read: async (c, id) => ((await item(c, id)).result as JsonObject).v as Json,
  },
  {
    name: 'work item notes (annotate)',
    prepare: heldItem,
    write: async (c, id, v) => (await c.work.annotate({ id, worker: 'w', notes: { v } })).id,
    read: async (c, id) => (await item(c, id)).notes.v as Json,
  },
  {
    name: 'event data',
    prepare: fresh,
    write: async (c, _, v) =>
      (await c.events.append({ type: 'fact_noted', stream: 'facts', data: { v } })).position,
    read: eventV,
  },
  {
    name: 'event data (appendMany)',
    prepare: fresh,
    write: async (c, _, v) =>
      (
        await c.events.appendMany([
          { type: 'a_b', data: null },
          { type: 'fact_noted', data: { v } },
        ])
      )[1]!.position,
    read: eventV,
  },
];

export function valueConformance(name: string, t: ConformanceTest): void {
  describe(`${name}: values as JSON.stringify writes them`, () => {
    for (const path of PATHS) {
      t(
        `${path.name}: a Date and a URL are stored as their JSON; a bigint and a Map are refused`,
        async (c) => {
          const where = await path.write(c, await path.prepare(c), given());
          expect(await path.read(c, where)).toEqual(stored);
          for (const [what, value] of refused()) {
            const at = await path.prepare(c);
            const before = await eventCount(c);
            const details = await expectCode(path.write(c, at, value), 'INVALID_INPUT');
            expect(details.pointer, what).toMatch(/\/(n|m)$/);
            expect(await eventCount(c), `${what}: nothing written`).toBe(before);
          }
        },
      );
    }

    t(
      'the hash of a body holding a Date is the hash of what is stored; the same commit again is no change',
      async (c) => {
        const first = await c.docs.commit({ kind: 'json', id: 'same', expected_version: 0, body: given() });
        expect(first.body).toEqual(stored);
        // The value as the application has it, and as it reads back: one content, so nothing to commit.
        for (const body of [given(), stored]) {
          const again = await c.docs.commit({ kind: 'json', id: 'same', expected_version: 1, body });
          expect(again).toMatchObject({ changed: false, version: 1, content_hash: first.content_hash });
        }
      },
    );

    t('the caller’s value is left as it was', async (c) => {
      const body = given();
      await c.docs.commit({ kind: 'json', id: 'mine', expected_version: 0, body });
      await c.work.enqueue({ title: 'p', payload: body });
      expect(body.when).toBe(WHEN);
      expect(body.where).toBe(WHERE);
    });
  });
}
