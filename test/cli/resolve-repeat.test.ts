// A resolve of a parked item (waiting for a human, no lease) repeated after it succeeded — the reply was
// lost, the script runs again — exits 0 with the item unchanged and writes nothing, on every backend.
import { describe, expect, it } from 'vitest';
import type { WorkItem } from '../../src/core/types.js';
import { backendsForThisFile } from '../helpers/backends.js';
import { runCli } from '../helpers/cli.js';

for (const backend of await backendsForThisFile()) {
  describe(`agentstate resolve, repeated, on ${backend.name}`, () => {
    it('the identical retry of a parked item’s resolve exits 0 with the item unchanged', async () => {
      const inst = await backend.open('park');
      const item = await inst.work.enqueue({ title: 'approve the release?' });
      await inst.work.park({ id: item.id, reason: 'needs a decision' });
      try {
        const cli = (...args: string[]) => runCli([...backend.cliArgs('park'), '--json', ...args]);
        const resolve = ['resolve', item.id, 'done', '--result', '{"approved":true}', '--actor', 'ana'];
        const first = cli(...resolve);
        expect(first.code, first.stderr).toBe(0);
        const head = (await inst.events.head())?.position;
        const again = cli(...resolve);
        expect(again.code, again.stderr).toBe(0);
        expect(again.json).toEqual(first.json);
        expect(again.json as WorkItem).toMatchObject({ status: 'done', result: { approved: true } });
        expect((await inst.events.head())?.position).toBe(head);
        // Another answer to the finished item is still refused (exit 3), naming its status.
        const other = cli('resolve', item.id, 'failed', '--error', 'no', '--actor', 'ana');
        expect(other.code).toBe(3);
        expect(other.stderr).toContain('it is done');
      } finally {
        await inst.close();
      }
    });
  });
}
