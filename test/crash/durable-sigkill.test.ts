// Durable runs through a crash, on every backend: a worker process SIGKILLed while a step's fn runs, right
// after a step committed, and after a step's side effect but before its commit (the one window the docs
// name). After a restart on a clock past the dead worker's lease, the steps that committed never run again
// (their side effects, counted in a file the way the outside world would, happen once), the run ends with the
// recorded values, a step whose commit was lost runs again with the same idempotency key, and the log
// verifies.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { backendsForThisFile } from '../helpers/backends.js';
import { runWorker as run } from '../helpers/kill-worker.js';
import { tempDir } from '../helpers/tmp.js';

const WORKER = new URL('../fixtures/durable-worker.mjs', import.meta.url).pathname;
const backends = await backendsForThisFile();
const root = tempDir();

/** The side effects the outside world saw: `<k> <key>` per effect of `id`. */
function effects(file: string, id: string): Array<[number, string]> {
  return readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .filter((l) => l.startsWith(`${id} `))
    .map((l) => {
      const [, k, key] = l.split(' ');
      return [Number(k), key!];
    });
}

describe.each(backends)('$name: a durable run through a SIGKILL', (b) => {
  const scenarios = [
    { name: 'while a step’s fn runs', hang: { HANG_IN_FN: '2' }, at: 'fn', lostStep: null },
    { name: 'right after a step committed', hang: { HANG_AFTER_STEP: '1' }, at: 'step', lostStep: null },
    {
      name: 'after a step’s side effect, before its commit',
      hang: { HANG_AFTER_EFFECT: '2' },
      at: 'effect',
      lostStep: 2,
    },
  ] as const;
  for (const s of scenarios) {
    it(`${s.name}: committed steps never run again; the run ends with the recorded values`, async () => {
      const key = `durable-${b.name}-${s.at}-${Object.keys(s.hang)[0]}`;
      const seed = await b.open(key);
      const item = await seed.work.enqueue({ title: 'four effects', max_attempts: 3 });
      await seed.close();
      const [, dir, , url] = b.cliArgs(key);
      const args = url ? [dir!, url] : [dir!];
      const file = join(root, `${key}.effects`);
      writeFileSync(file, '');
      const k = Number(Object.values(s.hang)[0]);
      const killLine = `${s.at} ${item.id} ${k}`;
      const first = await run(WORKER, args, { EFFECTS_FILE: file, ...s.hang }, killLine);
      const committedFirst = first.filter((l) => l.startsWith(`step ${item.id} `)).length;
      const keysBefore = effects(file, item.id);

      // Two hours later on the store's clock: the dead worker's lease (60 s) has run out.
      const second = await run(WORKER, args, {
        EFFECTS_FILE: file,
        CLOCK_OFFSET_MS: String(2 * 3_600_000),
        DRAIN: '1',
      });
      // The steps that committed before the kill were not run again: their fn never started.
      const rerun = second.filter((l) => l.startsWith(`fn ${item.id} `)).map((l) => Number(l.split(' ')[2]));
      expect(rerun).toEqual([0, 1, 2, 3].slice(committedFirst));
      expect(second).toContain(`resolved ${item.id} done`);

      const seen = effects(file, item.id);
      const times = [0, 1, 2, 3].map((n) => seen.filter(([x]) => x === n).length);
      if (s.lostStep === null) {
        // Every effect happened exactly once.
        expect(times).toEqual([1, 1, 1, 1]);
      } else {
        // The one window: the effect happened, the commit did not; the step ran again with the same key,
        // which is what lets the outside API dedupe it.
        expect(times).toEqual([1, 1, 2, 1]);
        const lost = seen.filter(([x]) => x === s.lostStep).map(([, key]) => key);
        expect(lost[0]).toBe(lost[1]);
        expect(keysBefore.find(([x]) => x === s.lostStep)?.[1]).toBe(lost[0]);
      }

      const inst = await b.open(key);
      try {
        const done = await inst.work.get(item.id);
        // The values recorded by the first attempt are the ones the run ended with.
        expect(done.status).toBe('done');
        expect(done.result).toEqual([0, 1, 2, 3].map((n) => ({ k: n, attempt: n < committedFirst ? 1 : 2 })));
        const steps = await inst.work.steps(item.id);
        expect(steps.map((r) => r.type === 'step' && [r.name, r.attempt])).toEqual(
          [0, 1, 2, 3].map((n) => [`effect ${n}`, n < committedFirst ? 1 : 2]),
        );
        expect((await inst.events.verify()).ok).toBe(true);
      } finally {
        await inst.close();
      }
    });
  }
});
