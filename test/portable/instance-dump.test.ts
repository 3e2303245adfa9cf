// Moving an instance through a portable dump: everything arrives (items, the event chain, documents
// with full history), the import verifies, and a tampered or truncated dump writes nothing.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { exportInstance, importInstance } from '../../src/core/portable.js';
import { type Instance, openInstance } from '../../src/instance/instance.js';
import { tempDir } from '../helpers/tmp.js';

const root = tempDir();

async function seeded(): Promise<Instance> {
  const inst = await openInstance({ dir: join(root, 'source') });
  const a = await inst.work.enqueue({ title: 'a', payload: { n: 1 }, idempotency_key: 'k-a' });
  await inst.work.enqueue({ title: 'b', blocked_by: [a.id], priority: 3 });
  await inst.work.claim({ worker: 'w', id: a.id });
  await inst.work.annotate({ id: a.id, notes: { session: 's1' } });
  await inst.events.append({ type: 'note', data: { text: 'héllo', nested: { z: 1, a: [true, null] } } });
  await inst.docs.commit({ kind: 'json', id: 'plan', expected_version: 0, body: { steps: ['x'] } });
  await inst.docs.commit({
    kind: 'json',
    id: 'plan',
    expected_version: 1,
    merge_patch: { done: true },
    write_id: 'w1',
  });
  await inst.docs.commit({ kind: 'json', id: 'plan', expected_version: 2, noop: true, reason: 'checked' });
  return inst;
}

async function snapshot(inst: Instance) {
  return {
    items: await inst.work.list({ limit: 1000 }),
    events: await inst.events.read({ limit: 1000 }),
    doc: await inst.docs.get({ kind: 'json', id: 'plan' }),
    v1: await inst.docs.get({ kind: 'json', id: 'plan', version: 1 }),
    history: await inst.docs.history({ kind: 'json', id: 'plan' }),
  };
}

it('an exported instance imports into a new one identically, and verifies', async () => {
  const src = await seeded();
  const file = join(root, 'dump.jsonl');
  const counts = await exportInstance(src.backend, { host: src.host, name: src.name }, file);
  expect(counts).toMatchObject({ work_items: 2, documents: 1, history: 3 });
  // An export never overwrites a file.
  await expect(exportInstance(src.backend, { host: src.host, name: src.name }, file)).rejects.toMatchObject({
    code: 'INVALID_INPUT',
  });

  const dst = await openInstance({ dir: join(root, 'target') });
  const r = await importInstance(dst.backend, dst.events, file);
  expect(r).toMatchObject({ verified: true, events: counts.events, source_backend: 'sqlite' });
  expect(await snapshot(dst)).toEqual(await snapshot(src));
  // The imported instance keeps working: a retried write id still returns the original result.
  const retry = await dst.docs.commit({
    kind: 'json',
    id: 'plan',
    expected_version: 1,
    merge_patch: { done: true },
    write_id: 'w1',
  });
  expect(retry.replayed).toBe(true);
  // An import into a non-empty instance is refused.
  await expect(importInstance(dst.backend, dst.events, file)).rejects.toMatchObject({
    code: 'INVALID_INPUT',
  });
  await src.close();
  await dst.close();
});

it('a tampered or truncated dump is refused and writes nothing', async () => {
  const file = join(root, 'dump.jsonl');
  const lines = readFileSync(file, 'utf8').trimEnd().split('\n');
  const eventLine = lines.findIndex((l) => l.includes('"t":"event"') && l.includes('héllo'));
  const tampered = [...lines];
  tampered[eventLine] = tampered[eventLine]!.replace('héllo', 'hello');
  const cases: Array<[string, string, RegExp]> = [
    ['tampered.jsonl', `${tampered.join('\n')}\n`, /event chain is broken/],
    ['truncated.jsonl', `${lines.slice(0, -3).join('\n')}\n`, /truncated/],
    ['not-a-dump.jsonl', '{"hello":1}\n', /not an agentstate-dump/],
  ];
  for (const [name, text, message] of cases) {
    writeFileSync(join(root, name), text);
    const dst = await openInstance({ dir: join(root, `t-${name}`) });
    await expect(importInstance(dst.backend, dst.events, join(root, name))).rejects.toThrow(message);
    expect(await dst.events.head()).toBeNull();
    expect(await dst.work.list()).toEqual([]);
    await dst.close();
  }
});

it('the blocker-failure policy, a cascade and a retry survive an export and import; an older dump loads as wait', async () => {
  const src = await openInstance({ dir: join(root, 'policy-source') });
  const a = await src.work.enqueue({ title: 'a' });
  const b = await src.work.enqueue({ title: 'b', blocked_by: [a.id], on_blocker_failure: 'cascade' });
  const c = await src.work.enqueue({ title: 'c', blocked_by: [a.id] });
  const x = await src.work.enqueue({ title: 'x' });
  await src.work.cancel({ id: x.id });
  await src.work.retry({ id: x.id, reason: 'again' });
  await src.work.cancel({ id: a.id });
  expect(await src.work.get(b.id)).toMatchObject({ status: 'cancelled', cascaded_from: a.id });
  const file = join(root, 'policy.jsonl');
  await exportInstance(src.backend, { host: src.host, name: src.name }, file);

  const dst = await openInstance({ dir: join(root, 'policy-target') });
  expect(await importInstance(dst.backend, dst.events, file)).toMatchObject({ verified: true });
  expect(await dst.work.list({ limit: 100 })).toEqual(await src.work.list({ limit: 100 }));
  expect((await dst.work.get(c.id)).blocked_on_failure).toEqual([a.id]);
  // The imported cascade still re-opens on a retry of its blocker.
  await dst.work.retry({ id: a.id });
  expect((await dst.work.get(b.id)).status).toBe('pending');
  expect((await dst.events.verify()).ok).toBe(true);

  // A dump written before the policy existed has neither field: its items load as wait, none cascaded.
  const lines = readFileSync(file, 'utf8').trimEnd().split('\n');
  const old = lines.map((line) => {
    const r = JSON.parse(line) as { t: string; row?: Record<string, unknown> };
    if (r.t !== 'work_item' || !r.row || r.row.id === b.id) return line;
    delete r.row.on_blocker_failure;
    delete r.row.cascaded_from;
    return JSON.stringify(r);
  });
  const oldFile = join(root, 'policy-old.jsonl');
  writeFileSync(oldFile, `${old.join('\n')}\n`);
  const dst2 = await openInstance({ dir: join(root, 'policy-old-target') });
  expect(await importInstance(dst2.backend, dst2.events, oldFile)).toMatchObject({ verified: true });
  expect(await dst2.work.get(c.id)).toMatchObject({ on_blocker_failure: 'wait', cascaded_from: null });
  expect(await dst2.work.get(b.id)).toMatchObject({ on_blocker_failure: 'cascade', cascaded_from: a.id });
  await src.close();
  await dst.close();
  await dst2.close();
});
