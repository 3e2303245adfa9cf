// The integrity checker as a pure function of records: heads as position:hash, events written before
// work_item_enqueued carried payload_hash (their payload, max_attempts and not_before stay unchecked, never
// flagged), and problems listed in full rather than only the first broken link.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { DumpRecord } from '../../src/core/backend.js';
import { GENESIS_HASH } from '../../src/core/hash.js';
import { formatHeadAnchor, parseHeadAnchor } from '../../src/core/integrity/head.js';
import { checkRecords } from '../../src/core/integrity/verify.js';
import { contentHash } from '../../src/core/json.js';
import { openInstance } from '../../src/instance/instance.js';
import { rechain } from '../helpers/forge.js';
import { tempDir } from '../helpers/tmp.js';

const root = tempDir();
let n = 0;

async function records(): Promise<DumpRecord[]> {
  const inst = await openInstance({ dir: join(root, `c${++n}`) });
  const a = await inst.work.enqueue({
    title: 'a',
    payload: { n: 1 },
    max_attempts: 5,
    not_before: '2026-01-01T00:00:00.000Z',
  });
  await inst.work.claim({ worker: 'w', id: a.id });
  await inst.work.release({ id: a.id, worker: 'w' });
  await inst.docs.commit({ kind: 'json', id: 'd', expected_version: 0, body: { x: 1 } });
  const out: DumpRecord[] = [];
  for await (const r of inst.backend.dump!()) out.push(r as DumpRecord);
  await inst.close();
  return out;
}

describe('heads', () => {
  it('parses position:hash and refuses anything else with INVALID_INPUT', () => {
    const hash = 'ab'.repeat(32);
    expect(parseHeadAnchor(`12:${hash}`)).toEqual({ position: 12, hash });
    expect(parseHeadAnchor({ position: 3, hash })).toEqual({ position: 3, hash });
    expect(formatHeadAnchor({ position: 12, hash })).toBe(`12:${hash}`);
    expect(formatHeadAnchor(null)).toBeNull();
    for (const bad of [
      '12',
      `x:${hash}`,
      `12:${hash.toUpperCase()}`,
      `-1:${hash}`,
      `0:${hash}`,
      `12:${hash}0`,
    ]) {
      expect(() => parseHeadAnchor(bad), bad).toThrow(expect.objectContaining({ code: 'INVALID_INPUT' }));
    }
    expect(parseHeadAnchor(`0:${GENESIS_HASH}`)).toEqual({ position: 0, hash: GENESIS_HASH });
  });
});

describe('work items against older events', () => {
  it('an enqueued event without payload_hash leaves payload, max_attempts and not_before unchecked', async () => {
    const rs = await records();
    rechain(rs, (e) => {
      if (e.type !== 'work_item_enqueued') return;
      const { payload_hash: _h, max_attempts: _m, not_before: _b, ...rest } = JSON.parse(e.data);
      e.data = JSON.stringify(rest);
    });
    const item = rs.find((r) => r.t === 'work_item')!;
    if (item.t !== 'work_item') throw new Error('no item');
    Object.assign(item.row, { payload: { n: 2 }, max_attempts: 9, not_before: null });
    const r = await checkRecords(rs);
    expect(r.problems).toEqual([]);
    expect(r.ok).toBe(true);
  });

  it('with payload_hash they are checked, and every difference is listed', async () => {
    const rs = await records();
    const item = rs.find((r) => r.t === 'work_item')!;
    if (item.t !== 'work_item') throw new Error('no item');
    // release gave the item one more attempt: 5 + 1.
    expect(item.row.max_attempts).toBe(6);
    Object.assign(item.row, { payload: { n: 2 }, max_attempts: 9, not_before: null, title: 'b' });
    const r = await checkRecords(rs);
    expect(r.problems.map((p) => p.field).sort()).toEqual(['max_attempts', 'not_before', 'payload', 'title']);
    expect(r).toMatchObject({ ok: false, problem_count: 4 });
    expect(r.broken).toBeUndefined();
  });

  it('a result recorded by value (before result_hash) is checked by value; by hash, a changed row is caught', async () => {
    const resolved = async (): Promise<DumpRecord[]> => {
      const inst = await openInstance({ dir: join(root, `c${++n}`) });
      const a = await inst.work.enqueue({ title: 'a' });
      await inst.work.claim({ worker: 'w', id: a.id });
      await inst.work.resolve({ id: a.id, worker: 'w', status: 'done', result: { files: ['é|+'] } });
      const out: DumpRecord[] = [];
      for await (const r of inst.backend.dump!()) out.push(r as DumpRecord);
      await inst.close();
      return out;
    };
    const itemOf = (rs: DumpRecord[]) => {
      const item = rs.find((r) => r.t === 'work_item')!;
      if (item.t !== 'work_item') throw new Error('no item');
      return item.row;
    };
    // As stored now: the event carries the hash; the row's result must hash to it.
    const now = await resolved();
    const event = now.find((r) => r.t === 'event' && r.row.type === 'work_item_resolved')!;
    if (event.t !== 'event') throw new Error('no event');
    expect(JSON.parse(event.row.data)).toMatchObject({ result_hash: contentHash({ files: ['é|+'] }) });
    expect((await checkRecords(now)).ok).toBe(true);
    itemOf(now).result = { files: [] };
    const caught = await checkRecords(now);
    expect(caught.problems.map((p) => [p.problem, p.field])).toEqual([['row_differs', 'result']]);
    expect(caught.problems[0]!.message).toMatch(/result hashes to/);

    // As an older version wrote it: the value itself in the event, compared by value.
    const old = await resolved();
    rechain(old, (e) => {
      if (e.type !== 'work_item_resolved') return;
      const { result_hash: _h, ...rest } = JSON.parse(e.data);
      e.data = JSON.stringify({ ...rest, result: { files: ['é|+'] } });
    });
    expect((await checkRecords(old)).ok).toBe(true);
    itemOf(old).result = { files: [] };
    expect((await checkRecords(old)).problems).toMatchObject([
      { problem: 'row_differs', field: 'result', expected: { files: ['é|+'] }, actual: { files: [] } },
    ]);
  });

  it('a broken chain does not stop the other checks', async () => {
    const rs = await records();
    const e = rs.find((r) => r.t === 'event' && r.row.type === 'work_item_claimed')!;
    if (e.t !== 'event') throw new Error('no event');
    e.row.data = e.row.data.replace('"w"', '"x"');
    const r = await checkRecords(rs);
    expect(r.broken).toEqual({ position: e.row.position, reason: 'hash does not match the event content' });
    expect(r.events).toBe(e.row.position - 1);
    expect(r.problems.map((p) => p.problem)).toEqual(['chain_broken']);
    const doc = rs.find((x) => x.t === 'document')!;
    if (doc.t !== 'document') throw new Error('no document');
    doc.row.version = 2;
    const again = await checkRecords(rs);
    expect(again.problems.map((p) => p.problem)).toEqual(['chain_broken', 'row_differs']);
  });
});
