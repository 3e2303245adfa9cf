// A claiming worker process for the multi-process benchmark. Opens the instance, says `ready`, waits
// for `go`, then loops claim + resolve until nothing is ready, and reports the ids it claimed.
import { type Durability, loadLib } from './lib.js';

export type ToWorker = { type: 'go' };
/** A claim or resolve refused with LOCK_TIMEOUT (then retried): how long it waited, SQLite's code. */
export interface LockTimeout {
  waitedMs: number;
  code: string;
}
export type FromWorker =
  | { type: 'ready' }
  | { type: 'done'; claimed: string[]; lockTimeouts: LockTimeout[]; ms: number }
  | { type: 'error'; message: string };

function send(msg: FromWorker): Promise<void> {
  return new Promise((resolve, reject) => {
    if (!process.send) return reject(new Error('worker.ts must be started with an IPC channel (fork)'));
    process.send(msg, undefined, undefined, (err) => (err ? reject(err) : resolve()));
  });
}

async function main(): Promise<void> {
  const dir = process.env.BENCH_DIR;
  const worker = process.env.BENCH_WORKER ?? `w${process.pid}`;
  const durability = (process.env.BENCH_DURABILITY ?? 'full') as Durability;
  if (!dir) throw new Error('BENCH_DIR is not set');
  const lib = await loadLib();
  // The library default busy timeout (5 s): a LOCK_TIMEOUT is counted and the call retried.
  const inst = await lib.openInstance({ dir, durability, worker });
  const go = new Promise<void>((resolve) => {
    process.once('message', (m: ToWorker) => {
      if (m.type === 'go') resolve();
    });
  });
  await send({ type: 'ready' });
  await go;
  const claimed: string[] = [];
  const lockTimeouts: LockTimeout[] = [];
  /** Runs `fn`, retrying on LOCK_TIMEOUT and recording how long each failed call waited. */
  async function retrying<T>(fn: () => Promise<T>): Promise<T> {
    for (;;) {
      const started = performance.now();
      try {
        return await fn();
      } catch (err) {
        if (!(err instanceof lib.LockTimeoutError)) throw err;
        const cause = (err as { cause?: { code?: unknown } }).cause;
        lockTimeouts.push({ waitedMs: performance.now() - started, code: String(cause?.code ?? '') });
      }
    }
  }
  const t0 = performance.now();
  for (;;) {
    const item = await retrying(() => inst.work.claim({ worker }));
    if (!item) break;
    claimed.push(item.id);
    await retrying(() => inst.work.resolve({ id: item.id, status: 'done', worker, attempt: item.attempts }));
  }
  const ms = performance.now() - t0;
  await inst.close();
  await send({ type: 'done', claimed, lockTimeouts, ms });
}

main().then(
  () => process.disconnect?.(),
  async (err: unknown) => {
    await send({
      type: 'error',
      message: err instanceof Error ? (err.stack ?? err.message) : String(err),
    }).catch(() => {});
    process.exitCode = 1;
    process.disconnect?.();
  },
);
