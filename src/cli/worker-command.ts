// `agentstate work`: the worker runtime on the instance the flags name, with handlers from a module, ES or
// CommonJS (`--handlers ./handlers.js`), or a command per item (`--exec '<command>'`), until interrupted (or,
// with --drain, until nothing is ready). Not an operation: a loop over the queue's operations, like `serve`.
import { basename, extname, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { type Command, Option } from 'commander';
import { InvalidInputError } from '../errors.js';
import { resolveInstance } from '../service/instance-resolver.js';
import type { Handler, HandlerSpec, RetryPolicy } from '../worker/worker.js';
import { duration, type GlobalOpts, int, list, outputOf, withInstance } from './context.js';

interface WorkOpts {
  handlers?: string;
  exec?: string;
  kind?: string[];
  concurrency?: number;
  prefetch?: number;
  lease?: number;
  poll?: number;
  batchSize?: number;
  batchDelay?: number;
  grace?: number;
  worker?: string;
  drain?: boolean;
  schedules?: boolean;
  quiet?: boolean;
  progressInterval?: number;
  retry: boolean;
  retryBase?: number;
  retryMax?: number;
  maxAttempts?: number;
}

const isHandler = (v: unknown): v is Handler | HandlerSpec =>
  typeof v === 'function' ||
  (typeof v === 'object' && v !== null && typeof (v as HandlerSpec).handler === 'function');

/** Node's words for ES module syntax in a file it loads as CommonJS. */
const ESM_AS_COMMONJS = /^(Unexpected token 'export'|Cannot use import statement outside a module)/;

/** Why `file` did not load, and what to do about it. */
function notLoaded(file: string, err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  if (err instanceof SyntaxError && ESM_AS_COMMONJS.test(message) && extname(file) !== '.mjs') {
    const mjs = `${basename(file, extname(file))}.mjs`;
    return `it is an ES module (export/import) in a CommonJS package, so Node refuses it (${message}): name it ${mjs}, or set "type": "module" in its package.json, or write module.exports = { <kind>: async (item, ctx) => result }`;
  }
  return `cannot load it: ${message}`;
}

/**
 * Runs `load` with Node's own hint about an ES module loaded as CommonJS held back (`notLoaded` says it, with
 * what to do); every other warning goes to the listeners it had.
 */
async function withoutEsmHint<T>(load: () => Promise<T>): Promise<T> {
  const listeners = process.listeners('warning');
  const pass = (w: Error) => {
    if (!w.message.startsWith('To load an ES module')) for (const l of listeners) l(w);
  };
  process.removeAllListeners('warning');
  process.on('warning', pass);
  try {
    return await load();
  } finally {
    // Node emits its warnings on a later tick.
    await new Promise((r) => setImmediate(r));
    process.off('warning', pass);
    for (const l of listeners) process.on('warning', l);
  }
}

/**
 * The handlers a module exports: its default export or its `handlers` export when that is an object of
 * handlers, else every exported handler (its export name is the kind it handles). A handler is a function or
 * `{ handler, retry }` (the kind's own retry policy). An ES module or a CommonJS one (`module.exports = { … }`
 * is its default export).
 */
async function loadHandlers(file: string): Promise<Record<string, Handler | HandlerSpec>> {
  let mod: Record<string, unknown>;
  try {
    mod = (await withoutEsmHint(() => import(pathToFileURL(resolve(file)).href))) as Record<string, unknown>;
  } catch (err) {
    throw new InvalidInputError(`--handlers ${file}: ${notLoaded(file, err)}`, { field: 'handlers' });
  }
  const table = [mod.default, mod.handlers].find((x) => typeof x === 'object' && x !== null) ?? mod;
  const handlers = Object.fromEntries(
    Object.entries(table as Record<string, unknown>).filter(([, v]) => isHandler(v)),
  ) as Record<string, Handler | HandlerSpec>;
  if (Object.keys(handlers).length === 0) {
    throw new InvalidInputError(
      `--handlers ${file} exports no handlers: export default { <kind>: async (item, ctx) => result } (CommonJS: module.exports = { … })`,
      { field: 'handlers' },
    );
  }
  return handlers;
}

/** How often a progress line is printed off a terminal, in ms. */
const PROGRESS_EVERY_MS = 5_000;

/** How `agentstate work` shows its progress on stderr (see `workProgress`). */
export interface ProgressOptions {
  /** `quiet`: never; `tty`: one line redrawn in place at every change; `lines`: a line every `intervalMs` when it changed. */
  mode: 'quiet' | 'tty' | 'lines';
  /** How often `lines` looks for a change, in ms. */
  intervalMs: number;
  /** The progress line now. */
  line: () => string;
  /** Writes to stderr. */
  write: (text: string) => void;
  /** Runs `fn` every `ms` until the function it returns is called [default: an unref'd setInterval]. */
  every?: (fn: () => void, ms: number) => () => void;
}

/** The progress of `agentstate work`: `changed()` after each outcome, `stop()` when it stops. */
export function workProgress(o: ProgressOptions): { changed: () => void; stop: () => void } {
  if (o.mode === 'tty') {
    return { changed: () => o.write(`\r${o.line()}\x1b[K`), stop: () => o.write('\r\x1b[K') };
  }
  if (o.mode === 'quiet') return { changed: () => {}, stop: () => {} };
  const every =
    o.every ??
    ((fn: () => void, ms: number) => {
      const timer = setInterval(fn, ms);
      timer.unref();
      return () => clearInterval(timer);
    });
  // Off a terminal (a log): a line when something changed since the last one, so an idle worker adds none.
  let last = '';
  const cancel = every(() => {
    const now = o.line();
    if (now === last) return;
    last = now;
    o.write(`${now}\n`);
  }, o.intervalMs);
  return { changed: () => {}, stop: cancel };
}

export function addWorkerCommand(program: Command): void {
  program
    .command('work')
    .description(
      'run a worker: claim items and run a handler for each (--handlers module or --exec command), results committed in batches; see docs/worker.md',
    )
    .option(
      '--handlers <module>',
      'a module exporting { <kind>: async (item, ctx) => result } (ES, or CommonJS: module.exports = {…})',
    )
    .option('--exec <command>', 'run this shell command per item (MF_* environment; exit 0 = done)')
    .option(
      '-k, --kind <kinds>',
      'with --exec: the kinds to run (comma-separated) [default: every kind]',
      list,
    )
    .option('-c, --concurrency <n>', 'handlers running at once [default: 1]', int('--concurrency'))
    .option(
      '--prefetch <n>',
      "items held at most, running or queued [default: auto, by the handlers' pace]",
      int('--prefetch'),
    )
    .option('-l, --lease <duration>', 'lease length [default: 60s]', duration('--lease'))
    .option(
      '--poll <duration>',
      'wait before claiming again when nothing is ready [default: 1s; 250ms behind a transaction pooler]',
      duration('--poll'),
    )
    .option('--batch-size <n>', 'completions committed together at most [default: 500]', int('--batch-size'))
    .option(
      '--batch-delay <duration>',
      'how long a completion may wait for others to share its commit [default: 0: none, the next commit starts as the previous returns]',
      duration('--batch-delay'),
    )
    .option(
      '--grace <duration>',
      'on stop, how long running handlers may finish [default: 30s]',
      duration('--grace'),
    )
    .option(
      '--retry-base <duration>',
      'delay before retrying a failed attempt, doubled each attempt, with jitter [default: 1s]',
      duration('--retry-base'),
    )
    .option(
      '--retry-max <duration>',
      'the longest delay between attempts [default: 5m]',
      duration('--retry-max'),
    )
    .option(
      '--max-attempts <n>',
      "attempts at most, under each item's own max_attempts [default: the item's]",
      int('--max-attempts'),
    )
    .option('--no-retry', 'every failure is final (no retries with backoff)')
    .option('-w, --worker <id>', 'the lease owner [default: <host>:<pid>:<random>]')
    .option('--drain', 'exit when nothing is ready and nothing is held')
    .option(
      '--schedules',
      "also run the scheduler: enqueue the schedules' due ticks (with --drain: one pass first)",
    )
    .option('-q, --quiet', 'no progress on stderr (a line every 5s off a terminal, redrawn on one)')
    // How often the progress line is looked at off a terminal: for tests, which wait for a line.
    .addOption(
      new Option('--progress-interval <duration>').hideHelp().argParser(duration('--progress-interval')),
    )
    .action(async (o: WorkOpts, cmd: Command) => {
      if ((o.handlers === undefined) === (o.exec === undefined)) {
        throw new InvalidInputError('work: give --handlers <module> or --exec <command> (one of them)', {
          field: o.handlers === undefined ? 'handlers' : 'exec',
        });
      }
      const out = outputOf(cmd);
      // The child runs against the same store: a --url given here is its AGENTSTATE_URL.
      const { url } = resolveInstance(cmd.optsWithGlobals<GlobalOpts>());
      await withInstance(cmd, async (inst) => {
        const [{ createWorker }, { execHandler, execChildrenEnded }] = await Promise.all([
          import('../worker/worker.js'),
          import('../worker/exec.js'),
        ]);
        const handlers =
          o.handlers !== undefined
            ? await loadHandlers(o.handlers)
            : Object.fromEntries(
                (o.kind?.length ? o.kind : ['*']).map((k) => [
                  k,
                  execHandler({
                    command: o.exec!,
                    env: {
                      MF_INSTANCE_DIR: inst.paths.dir,
                      MF_AGENT_NAME: inst.name,
                      MF_HOST: inst.host,
                      ...(url === undefined ? {} : { AGENTSTATE_URL: url }),
                    },
                  }),
                ]),
              );
        const retry: RetryPolicy = {
          ...(o.retryBase !== undefined && { baseMs: o.retryBase }),
          ...(o.retryMax !== undefined && { maxMs: o.retryMax }),
          ...(o.maxAttempts !== undefined && { maxAttempts: o.maxAttempts }),
        };
        const worker = createWorker({
          instance: inst,
          handlers,
          retry: o.retry ? retry : false,
          ...(o.concurrency !== undefined && { concurrency: o.concurrency }),
          ...(o.prefetch !== undefined && { prefetch: o.prefetch }),
          ...(o.lease !== undefined && { leaseMs: o.lease }),
          ...(o.poll !== undefined && { pollIntervalMs: o.poll }),
          ...(o.batchSize !== undefined && { batchSize: o.batchSize }),
          ...(o.batchDelay !== undefined && { batchDelayMs: o.batchDelay }),
          ...(o.grace !== undefined && { graceMs: o.grace }),
          ...(o.worker !== undefined && { worker: o.worker }),
        });
        const counts = { done: 0, failed: 0, retrying: 0, lost: 0, released: 0, store_errors: 0 };
        const tty = process.stderr.isTTY === true && !out.json;
        const progress = workProgress({
          // On a terminal under --json the line is left out, as ever; off one it goes to stderr, a log.
          mode: o.quiet ? 'quiet' : tty ? 'tty' : process.stderr.isTTY ? 'quiet' : 'lines',
          intervalMs: o.progressInterval ?? PROGRESS_EVERY_MS,
          line: () =>
            `work: ${counts.done} done, ${counts.failed} failed, ${counts.retrying} to retry, ${worker.held} held${counts.lost ? `, ${counts.lost} lost` : ''}`,
          write: (text) => process.stderr.write(text),
        });
        worker.on('resolved', (item) => {
          // Pending again: a failed attempt that will be retried at its not_before.
          counts[item.status === 'done' ? 'done' : item.status === 'pending' ? 'retrying' : 'failed']++;
          progress.changed();
        });
        worker.on('lost', () => void counts.lost++);
        // A handler's ctx.log: one line on stderr, with the item it is about.
        worker.on('log', (item, message, data) => {
          const more = data === undefined ? '' : ` ${JSON.stringify(data) ?? ''}`;
          process.stderr.write(`${tty ? '\r\x1b[K' : ''}${item.id} ${message}${more}\n`);
        });
        worker.on('released', () => void counts.released++);
        worker.on('storeError', (err) => {
          counts.store_errors++;
          process.stderr.write(`${tty ? '\r\x1b[K' : ''}agentstate work: ${(err as Error).message}\n`);
        });
        // The first SIGINT/SIGTERM stops gracefully; a second aborts the running handlers at once.
        let signals = 0;
        const onSignal = () => {
          signals++;
          if (tty) process.stderr.write(signals === 1 ? '\rwork: stopping (again to abort)\x1b[K\n' : '');
          void worker.stop(signals === 1 ? {} : { graceMs: 0 });
        };
        process.on('SIGINT', onSignal);
        process.on('SIGTERM', onSignal);
        try {
          // The scheduler beside the worker: a pass every second until the worker stops (--drain: one pass).
          let scheduler: import('../worker/scheduler.js').Scheduler | undefined;
          if (o.schedules) {
            const { createScheduler } = await import('../worker/scheduler.js');
            scheduler = createScheduler({ instance: inst });
            scheduler.on('storeError', (err) => {
              counts.store_errors++;
              process.stderr.write(`agentstate work: schedules: ${(err as Error).message}\n`);
            });
            if (o.drain) await scheduler.tick();
            else void scheduler.start();
          }
          try {
            await (o.drain ? worker.drain() : worker.start());
          } finally {
            await scheduler?.stop();
            // The commands handed back at stop were sent SIGTERM: nothing they started outlives this process.
            await execChildrenEnded();
          }
        } finally {
          process.off('SIGINT', onSignal);
          process.off('SIGTERM', onSignal);
          progress.stop();
        }
        out.emit(
          { worker: worker.id, ...counts },
          () =>
            `work ${worker.id}: ${counts.done} done, ${counts.failed} failed${counts.retrying ? `, ${counts.retrying} to retry` : ''}${counts.released ? `, ${counts.released} released` : ''}${counts.lost ? `, ${counts.lost} lost` : ''}`,
        );
      });
    });
}
