// The streams of a Workflow SDK World (`World.streams`, @workflow/world 5.0.0-beta.21's Streamer) over an
// agentstate store: byte chunks at dense 0-based indexes per stream, kept by the backend's workflowStreams
// (workflow_stream_chunks), each stream closed at most once. Names are global (the SDK names a run's streams
// `strm_<run ulid>_user…`); a run id only files a stream under its run for `list`, and need not be a run the
// store knows (the SDK's health check writes `__health_check__<id>` under a run that never exists).
// A live reader (`get`) reads what is stored, then waits for more: woken by the store's write hints when it
// pushes them (PostgreSQL LISTEN/NOTIFY; SQLite: the commits of this process), polling at `pollMs` always,
// since hints can be lost and other processes' SQLite commits to a stream send none.
import type { GetChunksOptions, StreamChunksResponse, Streamer, StreamInfoResponse } from '@workflow/world';
import type { StoreBackend, WorkflowStreamBackend } from '../core/backend.js';
import { checkInput, LIMITS, RESERVED_KEYS } from '../core/input.js';
import type { Clock } from '../core/time.js';
import { InvalidInputError } from '../errors.js';

/** The streams part of a World, with `writeMulti` (optional in the SDK's type) always present. */
export type WorldStreams = Required<Streamer['streams']>;

/** What the streams need of a store: its backend (with workflowStreams) and its clock (an `Instance` has both). */
export interface WorldStreamsStore {
  /** The store's backend; its `workflowStreams` keeps the chunks. */
  readonly backend: StoreBackend;
  /** Stamps each chunk's created_at (epoch ms). */
  readonly clock: Clock;
}

/** How `createWorldStreams` reads and writes. */
export interface WorldStreamsOptions {
  /**
   * How long a live reader (`get`) waits before reading its stream again when no hint woke it, in ms. Hints
   * make it sooner where the store pushes them; this bounds the wait where none come. @default 100
   */
  pollMs?: number;
}

/** The most bytes of one chunk (a string counts as its UTF-8 bytes): larger chunks are INVALID_INPUT. */
export const STREAM_CHUNK_BYTES = LIMITS.jsonBytes;

/** The chunks `getChunks` returns when no limit is given, and the most it returns at once. */
export const STREAM_PAGE = { default: 100, max: 1000 } as const;

/** Rows a live reader reads at once. */
const READ_ROWS = 100;

/**
 * Checks a run id or a stream name (`field`): one of the store's names (a string of 1 to LIMITS.name
 * characters, no NUL, control characters or unpaired surrogates), not a path (`/`, `\`, or a leading `.`,
 * as @workflow/world-local refuses: a name may become a file's name in a copy or an export) and not a key
 * that means something else on a JavaScript object (`__proto__`, `constructor`, `prototype`).
 * INVALID_INPUT names the field.
 */
function checkName(op: string, field: 'runId' | 'name', value: unknown): string {
  const v = checkInput<Record<string, string>>(
    op,
    { [field]: value },
    {
      [field]: { type: 'name', required: true },
    },
  )[field] as string;
  const problem =
    v.includes('/') || v.includes('\\')
      ? 'must not contain / or \\'
      : v.startsWith('.')
        ? 'must not start with .'
        : RESERVED_KEYS.has(v)
          ? `must not be ${v}`
          : null;
  if (problem !== null) throw new InvalidInputError(`${op}: ${field} ${problem}`, { field, operation: op });
  return v;
}

/** Checks a run id and a stream name (`checkName`). */
function checkNames(op: string, runId: unknown, name: unknown): { runId: string; name: string } {
  return { runId: checkName(op, 'runId', runId), name: checkName(op, 'name', name) };
}

/** A chunk as bytes: a string as UTF-8, a Uint8Array as it is; larger than STREAM_CHUNK_BYTES is refused. */
function chunkBytes(op: string, chunk: unknown, field: string): Uint8Array {
  let bytes: Uint8Array;
  if (typeof chunk === 'string') bytes = Buffer.from(chunk, 'utf8');
  else if (chunk instanceof Uint8Array) bytes = chunk;
  else {
    throw new InvalidInputError(`${op}: ${field} must be a string or a Uint8Array`, { field, operation: op });
  }
  if (bytes.byteLength > STREAM_CHUNK_BYTES) {
    throw new InvalidInputError(
      `${op}: ${field} is ${bytes.byteLength} bytes, more than the ${STREAM_CHUNK_BYTES} byte limit of a chunk`,
      { field, operation: op },
    );
  }
  return bytes;
}

/** `getChunks`' cursor: the index its next page starts at, opaque to the caller. */
function encodeCursor(index: number): string {
  return Buffer.from(JSON.stringify({ i: index })).toString('base64url');
}

function decodeCursor(op: string, cursor: unknown): number {
  if (typeof cursor === 'string' && cursor.length <= 100) {
    try {
      const i = (JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { i?: unknown }).i;
      if (typeof i === 'number' && Number.isSafeInteger(i) && i >= 0) return i;
    } catch {
      // Not ours: refused below.
    }
  }
  throw new InvalidInputError(`${op}: cursor is not a cursor getChunks returned`, {
    field: 'cursor',
    operation: op,
  });
}

/**
 * Wakes live readers when the store hints that something was written: one `listen` per streams object,
 * held while at least one reader waits (PostgreSQL spends a connection on it). `generation` counts hints, so
 * a reader that read before a hint and waits after it does not sleep through it.
 */
class Waker {
  generation = 0;
  readonly #backend: StoreBackend;
  readonly #waiting = new Set<() => void>();
  #readers = 0;
  #listening: Promise<(() => Promise<void>) | null> | null = null;

  constructor(backend: StoreBackend) {
    this.#backend = backend;
  }

  /** One more live reader: listens for hints (from the store, when it pushes them) until it leaves. */
  async join(): Promise<() => void> {
    this.#readers++;
    const b = this.#backend;
    if (this.#listening === null && b.capabilities.notify && b.listen) {
      this.#listening = b.listen(() => this.#hinted()).catch(() => null);
    }
    await this.#listening;
    let left = false;
    return () => {
      if (left) return;
      left = true;
      if (--this.#readers > 0) return;
      const listening = this.#listening;
      this.#listening = null;
      void listening?.then((stop) => stop?.()).catch(() => {});
    };
  }

  #hinted(): void {
    this.generation++;
    for (const wake of [...this.#waiting]) wake();
  }

  /**
   * Resolves on the next hint (at once when one came since `seen`), after `ms`, or when `abort` is called,
   * whichever is first; `onAbort` receives that function.
   */
  wait(seen: number, ms: number, onAbort: (abort: () => void) => void): Promise<void> {
    if (this.generation !== seen) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.#waiting.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.#waiting.add(done);
      onAbort(done);
    });
  }
}

/**
 * A ReadableStream of stream `name` from index `from`: the stored chunks in order, then each new one as it
 * is written, ending at the close. Empty chunks are skipped (they carry no bytes, as world-local's reader
 * skips them). Reads happen as the consumer pulls; cancelling stops the reading and the waiting.
 */
function liveStream(
  streams: WorkflowStreamBackend,
  waker: Waker,
  name: string,
  from: number,
  pollMs: number,
): ReadableStream<Uint8Array> {
  let next = from;
  let ended = false;
  let leave: (() => void) | null = null;
  let abortWait: (() => void) | null = null;
  const end = () => {
    ended = true;
    abortWait?.();
    leave?.();
    leave = null;
  };
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        while (!ended) {
          const seen = waker.generation;
          const rows = await streams.read({ name, from: next, limit: READ_ROWS });
          if (ended) return;
          let enqueued = false;
          for (const row of rows) {
            if (row.eof) {
              end();
              controller.close();
              return;
            }
            next = row.index + 1;
            if (row.data.byteLength > 0) {
              controller.enqueue(row.data);
              enqueued = true;
            }
          }
          // Pulled again when the consumer wants more.
          if (enqueued) return;
          if (rows.length > 0) continue;
          // Nothing at `next`: a reader past the end of a closed stream has nothing more to wait for.
          if (next > 0 && (await streams.info(name)).done) {
            if (ended) return;
            end();
            controller.close();
            return;
          }
          leave ??= await waker.join();
          if (ended) {
            leave();
            return;
          }
          await waker.wait(seen, pollMs, (abort) => {
            abortWait = abort;
          });
          abortWait = null;
        }
      } catch (err) {
        end();
        controller.error(err);
      }
    },
    cancel() {
      end();
    },
  });
}

/**
 * The `streams` of a Workflow SDK World over `store` (an `Instance`, or a backend and a clock). Every method
 * checks its names first (INVALID_INPUT, nothing written); a write to a closed stream is INVALID_TRANSITION.
 * @example const world = { ...queue, ...storage, streams: createWorldStreams(inst), specVersion };
 */
export function createWorldStreams(
  store: WorldStreamsStore,
  options: WorldStreamsOptions = {},
): WorldStreams {
  const streams = store.backend.workflowStreams;
  if (!streams) {
    throw new InvalidInputError(`the ${store.backend.name} backend keeps no workflow streams`, {
      field: 'backend',
    });
  }
  const pollMs = options.pollMs ?? 100;
  // A timer of more than 2^31 - 1 ms fires at once: refused rather than polling in a loop.
  if (!Number.isFinite(pollMs) || pollMs < 1 || pollMs > 2_147_483_647) {
    throw new InvalidInputError('createWorldStreams: pollMs must be a number of ms from 1 to 2147483647', {
      field: 'pollMs',
    });
  }
  const waker = new Waker(store.backend);

  const writeMulti = async (runId: string, name: string, chunks: (string | Uint8Array)[]): Promise<void> => {
    const op = 'streams.writeMulti';
    const given = checkNames(op, runId, name);
    if (!Array.isArray(chunks)) {
      throw new InvalidInputError(`${op}: chunks must be an array`, { field: 'chunks', operation: op });
    }
    const bytes = chunks.map((c, i) => chunkBytes(op, c, `chunks[${i}]`));
    if (bytes.length === 0) return;
    await streams.append({ run_id: given.runId, name: given.name, chunks: bytes, now: store.clock() });
  };

  return {
    async write(runId, name, chunk) {
      const op = 'streams.write';
      const given = checkNames(op, runId, name);
      const bytes = chunkBytes(op, chunk, 'chunk');
      await streams.append({ run_id: given.runId, name: given.name, chunks: [bytes], now: store.clock() });
    },

    writeMulti,

    async close(runId, name) {
      const given = checkNames('streams.close', runId, name);
      await streams.close({ run_id: given.runId, name: given.name, now: store.clock() });
    },

    async get(runId, name, startIndex = 0) {
      const op = 'streams.get';
      const given = checkNames(op, runId, name);
      if (typeof startIndex !== 'number' || !Number.isSafeInteger(startIndex)) {
        throw new InvalidInputError(`${op}: startIndex must be an integer`, {
          field: 'startIndex',
          operation: op,
        });
      }
      // Negative: that many chunks before the current end (-3 on 10 chunks starts at 7), clamped to 0.
      const from =
        startIndex >= 0 ? startIndex : Math.max(0, (await streams.info(given.name)).tail + 1 + startIndex);
      return liveStream(streams, waker, given.name, from, pollMs);
    },

    async list(runId) {
      const op = 'streams.list';
      return streams.names(checkName(op, 'runId', runId));
    },

    async getChunks(runId, name, options?: GetChunksOptions): Promise<StreamChunksResponse> {
      const op = 'streams.getChunks';
      const given = checkNames(op, runId, name);
      const opts = checkInput<GetChunksOptions>(op, options ?? {}, {
        limit: { type: 'int', min: 1, max: STREAM_PAGE.max },
        cursor: { type: 'string' },
      });
      const limit = opts.limit ?? STREAM_PAGE.default;
      const from = opts.cursor === undefined ? 0 : decodeCursor(op, opts.cursor);
      // The state first: when it says closed, every chunk was there before the read below.
      const state = await streams.info(given.name);
      const rows = await streams.read({ name: given.name, from, limit: limit + 1 });
      const chunks = rows.filter((r) => !r.eof);
      const page = chunks.slice(0, limit);
      const hasMore = chunks.length > limit;
      const last = page.at(-1);
      return {
        data: page.map((r) => ({ index: r.index, data: r.data })),
        cursor: hasMore && last !== undefined ? encodeCursor(last.index + 1) : null,
        hasMore,
        done: state.done || rows.some((r) => r.eof),
      };
    },

    async getInfo(runId, name): Promise<StreamInfoResponse> {
      const given = checkNames('streams.getInfo', runId, name);
      const state = await streams.info(given.name);
      return { tailIndex: state.tail, done: state.done };
    },
  };
}
