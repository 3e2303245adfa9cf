// Eight processes race read–modify–commit loops on one document: exactly one success per version,
// every failure a STATE_CONFLICT, history gapless, the final body the successful commits applied in order.
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { openInstance } from '../../src/instance/instance.js';
import { race } from '../helpers/racers.js';
import { tempDir } from '../helpers/tmp.js';

const RACER = new URL('../fixtures/commit-racer.mjs', import.meta.url).pathname;

interface RacerResult {
  worker: string;
  wins: Array<{ version: number; entry: string }>;
  conflicts: number;
  other: string[];
}

it('8 processes committing to one document: one success per version, no lost update', async () => {
  const dir = join(tempDir(), 'race');
  const TARGET = 150;
  const inst = await openInstance({ dir });
  await inst.docs.commit({ kind: 'json', id: 'counter', expected_version: 0, body: { count: 0, log: [] } });
  await inst.close();

  const results = await race<RacerResult>(
    Array.from({ length: 8 }, (_, i) => ({
      script: RACER,
      args: [dir, `p${i}`, String(TARGET)],
      label: `p${i}`,
    })),
  );

  expect(results.flatMap((r) => r.other)).toEqual([]);
  const wins = results.flatMap((r) => r.wins).sort((a, b) => a.version - b.version);
  // Versions 2..TARGET+1, each won by exactly one process.
  expect(wins.map((w) => w.version)).toEqual(Array.from({ length: TARGET }, (_, i) => i + 2));
  // Real contention happened (otherwise the test proves nothing): a conflict is a process that lost a version
  // to another. (Which processes win is the scheduler's business: on a loaded machine one may win them all.)
  expect(results.reduce((n, r) => n + r.conflicts, 0)).toBeGreaterThan(0);

  const check = await openInstance({ dir });
  try {
    const doc = await check.docs.get({ kind: 'json', id: 'counter' });
    expect(doc.version).toBe(TARGET + 1);
    // The final body is exactly the successful commits applied in version order.
    expect(doc.body).toEqual({ count: TARGET, log: wins.map((w) => w.entry) });
    const history = await check.docs.history({ kind: 'json', id: 'counter', limit: 1000 });
    expect(history.entries.map((e) => e.version)).toEqual(
      Array.from({ length: TARGET + 1 }, (_, i) => i + 1),
    );
    expect(history.entries.every((e, i) => e.parent_version === i)).toBe(true);
    const events = await check.events.read({ type: 'state_committed', limit: 1000 });
    expect(events.length).toBe(TARGET + 1);
    expect((await check.events.verify()).ok).toBe(true);
  } finally {
    await check.close();
  }
});
