// A world for the durable-agent adapter tests: an instance on a clock the test moves, one item, and each
// attempt's run of it (the previous attempt's lease run out by then).
import { expect } from 'vitest';
import type { BackendUnderTest } from './backends.js';

/** Opens an instance on `backend` with one item; `attempt()` claims it again an hour later and starts its run. */
export async function durableWorld(backend: BackendUnderTest) {
  let now = Date.UTC(2026, 0, 1);
  const inst = await backend.open(undefined, { clock: () => now });
  const item = await inst.work.enqueue({ title: 'agent', max_attempts: 10 });
  return {
    inst,
    item,
    async attempt() {
      now += 3_600_000;
      const held = await inst.work.claim({ worker: 'w1', lease_ms: 60_000 });
      if (held?.id !== item.id) throw new Error('the item was not claimed');
      return inst.work.run({ id: held.id, worker: 'w1', attempt: held.attempts });
    },
    steps: async () =>
      (await inst.work.steps(item.id)).map((r) => r.type === 'step' && `${r.name} ${r.status}`),
  };
}

/** Waits until `cond` holds (the loop of an abandoned attempt runs on in the background); fails if it never does. */
export async function until(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 2000 && !cond(); i++) await new Promise((r) => setTimeout(r, 5));
  expect(cond()).toBe(true);
}
