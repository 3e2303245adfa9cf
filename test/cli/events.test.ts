// `agentstate events` for people (issue 40): a batch event is its type, item count and first ids, not every
// item with its payload; `--json` prints what the log stores, and an item's own part is read by its id.
import { join } from 'node:path';
import { expect, it } from 'vitest';
import type { EventRecord } from '../../src/core/types.js';
import { openInstance } from '../../src/instance/instance.js';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';

it('a batch of 50 enqueued items is one short line; --json and an item read keep every item', async () => {
  const dir = join(tempDir(), 'inst');
  const inst = await openInstance({ dir });
  const items = await inst.work.enqueueMany(
    Array.from({ length: 50 }, (_, k) => ({ title: `item ${k} | ü+`, payload: { secret_marker: k } })),
  );
  await inst.close();

  const human = runCli(['--dir', dir, 'events']);
  expect(human.code, human.stderr).toBe(0);
  const line = human.stdout.split('\n').find((l) => l.includes('work_items_enqueued'))!;
  expect(line).toContain('"batch_of":50');
  expect(line).toContain(items[0]!.id);
  expect(line).not.toContain(items[5]!.id);
  expect(human.stdout).not.toContain('item 7 | ü+');

  const json = runCli(['--dir', dir, '--json', 'events']);
  const stored = (json.json as EventRecord[]).find((e) => e.type === 'work_items_enqueued')!;
  expect((stored.data as { items: unknown[] }).items).toHaveLength(50);

  const mine = runCli(['--dir', dir, '--json', 'events', '--item', items[7]!.id]);
  expect(mine.code, mine.stderr).toBe(0);
  expect((mine.json as EventRecord[])[0]).toMatchObject({
    type: 'work_item_enqueued',
    work_item_id: items[7]!.id,
  });
});
