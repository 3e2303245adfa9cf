// A committing worker process for the multi-process document benchmark. Opens the instance, says
// `ready`, waits for `go`, then makes BENCH_COMMITS successful commits:
// - mode `own`: merge patches to its own document, at the version it holds;
// - mode `hot`: read–modify–commit of a shared counter on one document, re-reading and retrying on
//   STATE_CONFLICT.
// LOCK_TIMEOUTs are counted and retried. Reports its commit and conflict counts.
import { type Durability, loadLib } from './lib.js';

export type ToDocWorker = { type: 'go' };
export type FromDocWorker =
  | { type: 'ready' }
  | {
      type: 'done';
      commits: number;
      conflicts: number;
      lockTimeouts: number;
      lockTimeoutMaxWaitMs: number;
      ms: number;
    }
  | { type: 'error'; message: string };

function send(msg: FromDocWorker): Promise<void> {
  return new Promise((resolve, reject) => {
    if (!process.send) return reject(new Error('doc-worker.ts must be started with an IPC channel (fork)'));
    process.send(msg, undefined, undefined, (err) => (err ? reject(err) : resolve()));
  });
}

async function main(): Promise<void> {
  const dir = process.env.BENCH_DIR;
  const worker = process.env.BENCH_WORKER ?? `w${process.pid}`;
  const durability = (process.env.BENCH_DURABILITY ?? 'full') as Durability;
  const mode = process.env.BENCH_MODE === 'hot' ? 'hot' : 'own';
  const id = process.env.BENCH_DOC ?? `doc-${worker}`;
  const target = Number.parseInt(process.env.BENCH_COMMITS ?? '100', 10);
  if (!dir) throw new Error('BENCH_DIR is not set');
  const lib = await loadLib();
  const inst = await lib.openInstance({ dir, durability, worker });
  const kind = 'json';
  const go = new Promise<void>((resolve) => {
    process.once('message', (m: ToDocWorker) => {
      if (m.type === 'go') resolve();
    });
  });
  await send({ type: 'ready' });
  await go;

  let commits = 0;
  let conflicts = 0;
  let lockTimeouts = 0;
  let lockTimeoutMaxWaitMs = 0;
  const t0 = performance.now();
  let held = mode === 'own' ? (await inst.docs.get({ kind, id })).version : 0;
  while (commits < target) {
    const started = performance.now();
    try {
      if (mode === 'own') {
        const r = await inst.docs.commit({
          kind,
          id,
          expected_version: held,
          merge_patch: { counter: commits + 1, meta: { step: commits + 1, by: worker } },
          actor: worker,
          actor_kind: 'tool',
        });
        held = r.version;
      } else {
        const doc = await inst.docs.get({ kind, id });
        const body = doc.body as { count: number };
        await inst.docs.commit({
          kind,
          id,
          expected_version: doc.version,
          body: { ...doc.body, count: body.count + 1, last: worker },
          actor: worker,
          actor_kind: 'tool',
        });
      }
      commits += 1;
    } catch (err) {
      if (err instanceof lib.StateConflictError) {
        conflicts += 1;
        if (mode === 'own') held = (await inst.docs.get({ kind, id })).version;
      } else if (err instanceof lib.LockTimeoutError) {
        lockTimeouts += 1;
        lockTimeoutMaxWaitMs = Math.max(lockTimeoutMaxWaitMs, performance.now() - started);
      } else throw err;
    }
  }
  const ms = performance.now() - t0;
  await inst.close();
  await send({ type: 'done', commits, conflicts, lockTimeouts, lockTimeoutMaxWaitMs, ms });
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
