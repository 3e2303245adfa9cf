// P2's separate-process worker: opens the instance in its own process (its own pool), waits for the common
// start, then claims and resolves one item at a time until none is left. Prints {"n", "end"} (items done,
// epoch ms of its last resolve). argv: <instance dir> <postgres url> <worker> <start at, epoch ms>
import { openInstance } from '../dist/index.js';

const [dir, url, worker, startAt] = process.argv.slice(2);
const inst = await openInstance({ dir, url, worker });
await inst.work.counts();
const wait = Number(startAt) - Date.now();
if (wait > 0) await new Promise((r) => setTimeout(r, wait));
let n = 0;
let end = Date.now();
for (;;) {
  const item = await inst.work.claim({ worker });
  if (!item) break;
  await inst.work.resolve({ id: item.id, status: 'done', worker, attempt: item.attempts });
  n += 1;
  end = Date.now();
}
await inst.close();
process.stdout.write(JSON.stringify({ n, end }));
