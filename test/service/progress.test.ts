// Progress of long work (issue 11, point 7): verify, export and import report a running count through the
// service's `progress` callback, and import names its two steps (checking the dump, verifying the load),
// so an edge can show which one a long import is in.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openInstance } from '../../src/instance/instance.js';
import { invoke } from '../../src/service/invoke.js';
import { tempDir } from '../helpers/tmp.js';

const root = tempDir();
const EVENTS = 20_500;

describe('progress of long work', () => {
  it('verify, export and import report counts; import names its steps', async () => {
    const src = join(root, 'src');
    const inst = await openInstance({ dir: src, durability: 'normal' });
    const batch = Array.from({ length: EVENTS }, (_, i) => ({ stream: 's', type: 't', data: { i } }));
    await inst.events.appendMany(batch);
    await inst.close();

    const seen: Array<[number, string | undefined]> = [];
    const progress = (n: number, phase?: string) => seen.push([n, phase]);

    await invoke('verify', {}, { instance: { dir: src }, progress });
    expect(seen).toEqual([
      [10_000, undefined],
      [20_000, undefined],
    ]);

    seen.length = 0;
    const file = join(root, 'dump.jsonl');
    await invoke('export_instance', { path: file }, { instance: { dir: src }, progress });
    expect(seen.map(([n]) => n)).toEqual([10_000, 20_000]);

    seen.length = 0;
    const result = (await invoke(
      'import_instance',
      { path: file },
      { instance: { dir: join(root, 'dst') }, progress },
    )) as { events: number };
    expect(result.events).toBe(EVENTS);
    expect(seen).toEqual([
      [10_000, 'checking the dump: events'],
      [20_000, 'checking the dump: events'],
      [10_000, 'verifying the import: events'],
      [20_000, 'verifying the import: events'],
    ]);
  }, 60_000);
});
