// One run at a time on a LangGraph thread, across processes and machines: LangGraph Platform's multitask
// strategies "reject" (a second run is refused while one holds the thread) and "enqueue" (it waits its
// turn, first come first served). The holder and the queue are one versioned document per (thread,
// namespace), every change a compare-and-swap commit; a holder renews its lease while it runs, so a run
// whose process died gives the thread up when its lease ends. The saver's no-fork check stays the safety
// net underneath: a run that lost its lease still cannot fork the thread.
import { randomUUID } from 'node:crypto';
import { sleep } from '../../core/time.js';
import {
  type ActorKind,
  type Instance,
  InvalidInputError,
  isAgentStateError,
  type JsonObject,
  LockTimeoutError,
  StateConflictError,
} from '../../index.js';
import { threadDocId } from './encoding.js';
import { RUNS_KIND } from './kinds/kind.js';
import type { RunEntry, RunsBody } from './kinds/model.js';

/** What a run does when another run holds its thread (LangGraph Platform's names). */
export type MultitaskStrategy = 'reject' | 'enqueue';

/** Options of AgentStateSaver.runOnThread. */
export interface RunOnThreadOptions {
  /** `reject`: refuse at once with ThreadBusyError; `enqueue`: wait until the runs before it end. @default 'reject' */
  multitaskStrategy?: MultitaskStrategy;
  /** How long the thread stays held by a run whose process stopped renewing it. @default 30000 */
  leaseMs?: number;
  /** `enqueue`: how long to wait for the thread before LOCK_TIMEOUT. @default 600000 */
  timeoutMs?: number;
  /** Stops waiting (the run does not start; the reason is thrown). */
  signal?: AbortSignal;
}

/**
 * Another run holds this thread (multitask strategy "reject"): this one did not start and wrote nothing.
 * Code STATE_CONFLICT, rule one-run-per-thread.
 */
export class ThreadBusyError extends StateConflictError {
  /** The thread another run holds. */
  readonly threadId: string;
  /** Its checkpoint namespace ('' for the root graph). */
  readonly checkpointNs: string;

  /** Thrown by runOnThread: `holder` is the run holding the thread, `waiting` how many runs wait for it. */
  constructor(t: { threadId: string; checkpointNs: string; holder: RunEntry | null; waiting: number }) {
    super(
      `thread ${t.threadId}${t.checkpointNs ? ` (namespace ${t.checkpointNs})` : ''} is busy: ${
        t.holder
          ? `run ${t.holder.run} of ${t.holder.by} holds it since ${t.holder.since}`
          : 'no run holds it'
      }${t.waiting ? `, ${t.waiting} waiting` : ''}; run again later, or pass multitaskStrategy: 'enqueue' to wait its turn`,
      {
        thread_id: t.threadId,
        checkpoint_ns: t.checkpointNs,
        holder_run: t.holder?.run ?? null,
        holder: t.holder?.by ?? null,
        waiting: t.waiting,
        rule: 'one-run-per-thread',
      },
    );
    this.name = 'ThreadBusyError';
    this.threadId = t.threadId;
    this.checkpointNs = t.checkpointNs;
  }
}

/** The document's body, or an empty one; entries whose lease ended are dropped. */
function liveOf(body: JsonObject | undefined, thread: string, ns: string, now: number): RunsBody {
  const b = body as unknown as RunsBody | undefined;
  return {
    thread_id: thread,
    checkpoint_ns: ns,
    holder: b?.holder && b.holder.expires_at > now ? b.holder : null,
    waiting: (b?.waiting ?? []).filter((w) => w.expires_at > now),
  };
}

/** Holds (thread, namespace) for one run: acquire, renew while running, release. */
export class ThreadRun {
  readonly run = randomUUID();
  readonly #inst: Instance;
  readonly #id: string;
  readonly #thread: string;
  readonly #ns: string;
  readonly #actor: string;
  readonly #actorKind: Exclude<ActorKind, 'model'>;
  readonly #lease: number;

  constructor(
    inst: Instance,
    who: { actor: string; actorKind: Exclude<ActorKind, 'model'> },
    thread: string,
    ns: string,
    leaseMs: number,
  ) {
    this.#inst = inst;
    this.#thread = thread;
    this.#ns = ns;
    this.#id = threadDocId(thread, ns);
    this.#actor = who.actor;
    this.#actorKind = who.actorKind;
    this.#lease = leaseMs;
  }

  #entry(now: number, since?: string): RunEntry {
    return {
      run: this.run,
      by: this.#actor,
      since: since ?? new Date(now).toISOString(),
      expires_at: now + this.#lease,
    };
  }

  /** One compare-and-swap step: the new body from the current one, or null to write nothing. */
  async #step(
    next: (cur: RunsBody, now: number) => RunsBody | null,
    reason: string,
  ): Promise<{ wrote: boolean; body: RunsBody; conflict: boolean }> {
    const doc = await this.#inst.docs.find(RUNS_KIND, this.#id);
    const now = Date.now();
    const cur = liveOf(doc?.body, this.#thread, this.#ns, now);
    const body = next(cur, now);
    if (body === null) return { wrote: false, body: cur, conflict: false };
    try {
      await this.#inst.docs.commit({
        kind: RUNS_KIND,
        id: this.#id,
        expected_version: doc?.version ?? 0,
        body: body as unknown as JsonObject,
        actor: this.#actor,
        actor_kind: this.#actorKind,
        reason,
      });
      return { wrote: true, body, conflict: false };
    } catch (err) {
      if (!isAgentStateError(err, 'STATE_CONFLICT')) throw err;
      return { wrote: false, body: cur, conflict: true };
    }
  }

  /** Takes the thread, waiting its turn (enqueue) or refusing at once (reject). */
  async acquire(strategy: MultitaskStrategy, timeoutMs: number, signal?: AbortSignal): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let pause = 10;
    for (;;) {
      if (signal?.aborted) {
        await this.#leaveQueue();
        signal.throwIfAborted();
      }
      let busy: RunsBody | null = null;
      const r = await this.#step((cur, now) => {
        const first = cur.waiting[0];
        const free = cur.holder === null && (first === undefined || first.run === this.run);
        if (free) {
          const mine = cur.waiting.find((w) => w.run === this.run);
          return {
            ...cur,
            holder: this.#entry(now, mine?.since),
            waiting: cur.waiting.filter((w) => w !== mine),
          };
        }
        busy = cur;
        if (strategy === 'reject') return null;
        // Join the queue, or renew a place in it that would lapse before the next look.
        const mine = cur.waiting.find((w) => w.run === this.run);
        if (mine && mine.expires_at - now > this.#lease / 2) return null;
        const entry = this.#entry(now, mine?.since);
        return {
          ...cur,
          waiting: mine ? cur.waiting.map((w) => (w === mine ? entry : w)) : [...cur.waiting, entry],
        };
      }, 'a run waits for the thread');
      if (r.conflict) continue;
      if (busy === null && r.wrote) return;
      if (strategy === 'reject') {
        const b = busy as RunsBody | null;
        throw new ThreadBusyError({
          threadId: this.#thread,
          checkpointNs: this.#ns,
          holder: b?.holder ?? null,
          waiting: b?.waiting.length ?? 0,
        });
      }
      if (Date.now() >= deadline) {
        await this.#leaveQueue();
        throw new LockTimeoutError(
          `thread ${this.#thread} stayed held by other runs for ${timeoutMs} ms; this run did not start`,
          { thread_id: this.#thread, checkpoint_ns: this.#ns, timeout_ms: timeoutMs },
        );
      }
      await sleep(pause, signal);
      pause = Math.min(pause * 2, 200);
    }
  }

  async #leaveQueue(): Promise<void> {
    for (let i = 0; i < 20; i++) {
      const r = await this.#step(
        (cur) =>
          cur.waiting.some((w) => w.run === this.run)
            ? { ...cur, waiting: cur.waiting.filter((w) => w.run !== this.run) }
            : null,
        'a run stops waiting for the thread',
      );
      if (!r.conflict) return;
    }
  }

  /** Extends the lease; false when another run holds the thread now (this one's lease ended). */
  async renew(): Promise<boolean> {
    for (;;) {
      let held = false;
      const r = await this.#step((cur, now) => {
        held = cur.holder?.run === this.run;
        return held ? { ...cur, holder: this.#entry(now, cur.holder?.since) } : null;
      }, 'the running run renews its hold on the thread');
      if (!r.conflict) return held;
    }
  }

  /** Gives the thread to the next run in the queue. */
  async release(): Promise<void> {
    for (;;) {
      const r = await this.#step(
        (cur) => (cur.holder?.run === this.run ? { ...cur, holder: null } : null),
        'a run ends and gives the thread up',
      );
      if (!r.conflict) return;
    }
  }
}

/** Runs `fn` while holding the thread: see AgentStateSaver.runOnThread. */
export async function runOnThread<T>(
  inst: Instance,
  who: { actor: string; actorKind: Exclude<ActorKind, 'model'> },
  thread: string,
  ns: string,
  fn: () => Promise<T>,
  options: RunOnThreadOptions = {},
): Promise<T> {
  const strategy = options.multitaskStrategy ?? 'reject';
  if (strategy !== 'reject' && strategy !== 'enqueue') {
    throw new InvalidInputError(`runOnThread: multitaskStrategy must be 'reject' or 'enqueue'`, {
      field: 'multitaskStrategy',
    });
  }
  const positive = (v: unknown, field: string, dflt: number): number => {
    if (v === undefined) return dflt;
    if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0)
      throw new InvalidInputError(`runOnThread: ${field} must be a positive number of milliseconds`, {
        field,
      });
    return v;
  };
  const lease = Math.max(100, positive(options.leaseMs, 'leaseMs', 30_000));
  const timeout = positive(options.timeoutMs, 'timeoutMs', 600_000);
  const run = new ThreadRun(inst, who, thread, ns, lease);
  await run.acquire(strategy, timeout, options.signal);
  let renewing = Promise.resolve(true);
  const timer = setInterval(() => {
    renewing = renewing.then(() => run.renew()).catch(() => false);
  }, lease / 3);
  const stopRenewing = async () => {
    clearInterval(timer);
    await renewing.catch(() => false);
  };
  let out: T;
  try {
    out = await fn();
  } catch (err) {
    // The run's own error is what the caller sees; the thread is given up as well as it can be.
    await stopRenewing();
    await run.release().catch(() => {});
    throw err;
  }
  await stopRenewing();
  await run.release();
  return out;
}
