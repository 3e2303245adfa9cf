// Filler events, so documents that cite event positions as evidence (test/kinds/examples/agent-run.full.json
// cites 17 and 21) cite events that are in the log: evidence must exist (issue 12, point 6).
import type { Instance } from '../../src/instance/instance.js';

/** Appends `note` events until the log's head is at least `position`. */
export async function appendUntil(inst: Instance, position: number): Promise<void> {
  const head = (await inst.events.head())?.position ?? 0;
  if (head >= position) return;
  await inst.events.appendMany(
    Array.from({ length: position - head }, (_, i) => ({ type: 'note', data: { filler: head + i + 1 } })),
  );
}

/** The highest event position test/kinds/examples/agent-run.full.json cites. */
export const FULL_EXAMPLE_EVENTS = 21;
