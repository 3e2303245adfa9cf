// What the durable agent adapters (ai-sdk, openai-agents) share: the run they make steps in, the codec that
// carries a framework's values (Dates, bytes, undefined, strings no store keeps) through the store's JSON
// rule and back, step names that always fit, and the order in which parallel tool calls take their places.
import { createHash } from 'node:crypto';
import { isPortableText, LIMITS, RESERVED_KEYS } from '../core/input.js';
import { isSuspended } from '../core/runs/errors.js';
import type { StepInfo, StepOptions } from '../core/runs/types.js';
import type { Json } from '../core/types.js';
import { InvalidInputError, isAgentStateError } from '../errors.js';

/**
 * Where the adapters make their steps: a worker handler's `ctx`, or a `Run` (`inst.work.run(...)`), or
 * anything else with their `step`.
 */
export interface DurableRun {
  step<T>(name: string, fn: (s: StepInfo) => T | Promise<T>, options?: StepOptions): Promise<T>;
}

/** The key that marks a value the codec had to write in a form of its own. */
const TAG = '$as';

/** A value of the framework as JSON the store keeps: the same value comes back from `fromRecord`. */
export function toRecord(value: unknown, path = ''): Json {
  switch (typeof value) {
    case 'string':
      return isPortableText(value)
        ? value
        : { [TAG]: 'utf16', v: Buffer.from(utf16(value)).toString('base64') };
    case 'number':
      return Number.isFinite(value) && !Object.is(value, -0)
        ? value
        : { [TAG]: 'number', v: Object.is(value, -0) ? '-0' : String(value) };
    case 'boolean':
      return value;
    case 'undefined':
      return { [TAG]: 'undefined' };
    case 'bigint':
      return { [TAG]: 'bigint', v: value.toString() };
    case 'object':
      break;
    default:
      throw refuse(path, `a ${typeof value}`);
  }
  if (value === null) return null;
  if (Array.isArray(value))
    return value.map((x, i) => toRecord(typeof x === 'function' ? undefined : x, `${path}/${i}`));
  if (value instanceof Date) {
    const t = value.getTime();
    return { [TAG]: 'date', v: Number.isNaN(t) ? null : value.toISOString() };
  }
  if (value instanceof Uint8Array) return { [TAG]: 'bytes', v: Buffer.from(value).toString('base64') };
  if (value instanceof ArrayBuffer) return { [TAG]: 'arraybuffer', v: Buffer.from(value).toString('base64') };
  if (value instanceof URL) return { [TAG]: 'url', v: value.href };
  if (value instanceof Error) {
    // Its name, message and the own fields a record can keep (a status code, say).
    const e: Record<string, Json> = {
      [TAG]: 'error',
      name: String(value.name),
      message: String(value.message),
    };
    for (const [k, v] of Object.entries(value)) {
      if (typeof v === 'function' || typeof v === 'symbol') continue;
      try {
        e[`.${k}`] = toRecord(v, `${path}/${k}`);
      } catch {
        // A field no record can keep is left out of the error.
      }
    }
    return e;
  }
  if (value instanceof Map || value instanceof Set || value instanceof WeakMap || value instanceof WeakSet) {
    throw refuse(path, `a ${value.constructor.name}`);
  }
  if (ArrayBuffer.isView(value)) throw refuse(path, `a ${value.constructor.name} (only Uint8Array is kept)`);
  const proto = Object.getPrototypeOf(value);
  const toJSON = (value as { toJSON?: unknown }).toJSON;
  if (proto !== Object.prototype && proto !== null && typeof toJSON === 'function') {
    return toRecord(toJSON.call(value), path);
  }
  const entries: Array<[string, Json]> = [];
  let plain = true;
  for (const [k, v] of Object.entries(value)) {
    // Undefined and functions are left out of an object, as JSON leaves them out.
    if (v === undefined || typeof v === 'function' || typeof v === 'symbol') continue;
    if (k === TAG || RESERVED_KEYS.has(k) || !isPortableText(k)) plain = false;
    entries.push([k, toRecord(v, `${path}/${k}`)]);
  }
  if (plain) return Object.fromEntries(entries);
  return { [TAG]: 'object', v: entries.map(([k, v]) => [isPortableText(k) ? k : toRecord(k), v]) };
}

/** The value `toRecord` wrote. */
export function fromRecord(json: Json): unknown {
  if (json === null || typeof json !== 'object') return json;
  if (Array.isArray(json)) return json.map(fromRecord);
  const tag = json[TAG];
  if (tag === undefined) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(json)) out[k] = fromRecord(v);
    return out;
  }
  const v = json.v;
  switch (tag) {
    case 'utf16': {
      const b = Buffer.from(v as string, 'base64');
      let s = '';
      for (let i = 0; i + 1 < b.length; i += 2) s += String.fromCharCode(b.readUInt16LE(i));
      return s;
    }
    case 'number':
      return v === '-0' ? -0 : Number(v);
    case 'undefined':
      return undefined;
    case 'bigint':
      return BigInt(v as string);
    case 'date':
      return new Date(v === null ? Number.NaN : (v as string));
    case 'bytes':
      return new Uint8Array(Buffer.from(v as string, 'base64'));
    case 'arraybuffer': {
      const b = Buffer.from(v as string, 'base64');
      return b.buffer.slice(b.byteOffset, b.byteOffset + b.length);
    }
    case 'url':
      return new URL(v as string);
    case 'error': {
      const err = new Error(String(json.message));
      err.name = String(json.name);
      for (const [k, x] of Object.entries(json))
        if (k.startsWith('.')) (err as never as Record<string, unknown>)[k.slice(1)] = fromRecord(x);
      return err;
    }
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const [k, x] of v as Array<[Json, Json]>) {
        Object.defineProperty(out, fromRecord(k) as string, {
          value: fromRecord(x),
          enumerable: true,
          writable: true,
          configurable: true,
        });
      }
      return out;
    }
    default:
      throw new InvalidInputError(`a durable step's record has an unknown form ${JSON.stringify(tag)}`, {
        field: 'result',
      });
  }
}

function utf16(s: string): Uint8Array {
  const out = new Uint8Array(s.length * 2);
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    out[2 * i] = c & 0xff;
    out[2 * i + 1] = c >> 8;
  }
  return out;
}

function refuse(path: string, what: string): InvalidInputError {
  return new InvalidInputError(
    `a durable step's result holds ${what}${path ? ` at ${path}` : ''}, which no record can keep: return plain data`,
    { field: 'result', pointer: path || '/' },
  );
}

/**
 * A step name made of `parts` (`tool search call_1`), or, when that would not be a step name (over 200
 * characters, control characters, unpaired surrogates), `parts[0]` and the SHA-256 of all of them: the same
 * parts always give the same name.
 */
export function stepName(...parts: string[]): string {
  const name = parts.join(' ');
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what a name may not hold
  if (name.length <= LIMITS.name && isPortableText(name) && !/[\u0000-\u001f\u007f]/.test(name)) return name;
  const h = createHash('sha256').update(parts.join('\u0000')).digest('hex').slice(0, 32);
  return `${parts[0]!.slice(0, 60)} #${h}`;
}

/** What the adapters keep for one run: how many model calls it made, its tool-call order, its failure. */
interface RunState {
  /** Model calls made, per name. */
  calls: Map<string, number>;
  /** The place in the model's output of each tool call id it asked for (the order tool steps take). */
  order: Map<string, number>;
  ordinal: number;
  /** Tool steps waiting to take their places, in the order they will. */
  pending: Array<{ order: number; arrival: number; start: () => void }>;
  arrivals: number;
  flushing: boolean;
  /** Why the run's model calls stopped in this attempt: a step failed or was not recorded (see `modelStep`). */
  failed: string | null;
}

const states = new WeakMap<object, RunState>();

function stateOf(run: DurableRun): RunState {
  let s = states.get(run);
  if (s === undefined) {
    s = {
      calls: new Map(),
      order: new Map(),
      ordinal: 0,
      pending: [],
      arrivals: 0,
      flushing: false,
      failed: null,
    };
    states.set(run, s);
  }
  return s;
}

/** Checks that `run` can make steps (a worker's ctx, a Run), or throws INVALID_INPUT saying what to pass. */
export function checkRun(op: string, run: unknown): DurableRun {
  if (typeof run !== 'object' || run === null || typeof (run as DurableRun).step !== 'function') {
    throw new InvalidInputError(
      `${op}: run must be a worker handler's ctx or a Run (inst.work.run(...)): something with step(name, fn)`,
      { field: 'run' },
    );
  }
  return run as DurableRun;
}

/**
 * A model call that failed (its `cause`), or one made after a step of the run failed in this attempt: the
 * attempt ends there. The frameworks do not retry it (it is no retryable API error).
 */
export class ModelCallFailed extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ModelCallFailed';
  }
}

/**
 * A model call as a step of `run` named `<name> <n>` (its n-th call of that name in this attempt): the first
 * attempt runs `call` and records what it returned (`toRecord`); every later attempt returns the record.
 * When the call fails, the failure is recorded and thrown as ModelCallFailed, which the frameworks do not
 * retry, and every later model call of the run in this attempt throws at once without taking a place: steps
 * are told apart by the order they are made in, so a run that went on after a failed step would not find its
 * records in the same places on the next attempt, which runs the failed call again.
 */
export async function modelStep<T>(
  run: DurableRun,
  name: string,
  call: (s: StepInfo) => Promise<T>,
  toolCallIds: (result: T) => string[],
  options: StepOptions = {},
): Promise<T> {
  const state = stateOf(run);
  if (state.failed !== null) {
    throw new ModelCallFailed(
      `a step of this run failed in this attempt (${state.failed}): no model call is made after it, the attempt ends here and the next one runs that step again`,
    );
  }
  const n = (state.calls.get(name) ?? 0) + 1;
  state.calls.set(name, n);
  const stepped = stepName(name, String(n));
  let result: T;
  try {
    result = fromRecord(await run.step(stepped, async (s) => toRecord(await call(s)), options)) as T;
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    state.failed = `${JSON.stringify(stepped)}: ${why}`;
    if (isAgentStateError(err) || isSuspended(err)) throw err;
    throw new ModelCallFailed(`model call ${JSON.stringify(stepped)} failed: ${why}`, { cause: err });
  }
  for (const id of toolCallIds(result)) state.order.set(id, ++state.ordinal);
  return result;
}

/**
 * `options` (an object the framework hands a tool) with `step` (the tool step's StepInfo) added, every
 * property it had kept (symbol keys and non-enumerable ones too).
 */
export function withStep<O extends object>(options: O | undefined, step: StepInfo): O {
  const base = (options ?? {}) as O;
  return Object.create(Object.getPrototypeOf(base), {
    ...Object.getOwnPropertyDescriptors(base),
    step: { value: step, enumerable: true, writable: true, configurable: true },
  }) as O;
}

/**
 * The step a durable tool runs in, from the options its `execute` (AI SDK) or the details its `execute`
 * (Agents SDK) was given: `stepOf(options)?.key` is the idempotency key of an outside call the tool makes,
 * the same on every attempt, so a call whose result was lost in a crash before its commit is not made twice.
 * Undefined outside a durable tool.
 */
export function stepOf(options: unknown): StepInfo | undefined {
  const s = (options as { step?: StepInfo } | null | undefined)?.step;
  return typeof s === 'object' && s !== null && typeof s.key === 'string' ? s : undefined;
}

/**
 * A tool's execution as a step of `run` named `tool <name> <call id>`: runs `execute` once and records its
 * outcome — what it returned, or the error it threw, which the frameworks hand the model — and every later
 * attempt gets the record (the error thrown again) without running it. Tool calls started together take
 * their places in the order the model asked for them (the ids its recorded call returned), whatever order the
 * framework starts them in within one turn of the event loop. A lost lease, or the framework's abort, is not
 * an outcome: it is thrown (and the run's next model call throws ModelCallFailed); so is a result no record
 * can keep (INVALID_INPUT, nothing recorded).
 */
export function toolStep<T>(
  run: DurableRun,
  toolName: string,
  toolCallId: string,
  execute: (s: StepInfo) => Promise<T>,
  signal?: AbortSignal,
): Promise<T> {
  const state = stateOf(run);
  const name = stepName('tool', toolName, toolCallId);
  type Outcome = { ok: Json } | { error: Json };
  return new Promise<Outcome>((resolve, reject) => {
    state.pending.push({
      order: state.order.get(toolCallId) ?? Number.POSITIVE_INFINITY,
      arrival: ++state.arrivals,
      start: () => {
        run
          .step(name, async (step): Promise<Outcome> => {
            let value: T;
            try {
              value = await execute(step);
            } catch (err) {
              // A lost lease or the framework's abort ends the attempt: not the tool's outcome.
              if (isAgentStateError(err, 'LEASE_LOST') || signal?.aborted === true) throw err;
              return { error: toRecord(err instanceof Error ? err : new Error(String(err))) };
            }
            // A result no record keeps (a Map, say) is the code's mistake: INVALID_INPUT, nothing recorded.
            return { ok: toRecord(value) };
          })
          .catch((err: unknown) => {
            // Not recorded: the run cannot go on in this attempt and still find its records in place.
            state.failed ??= `${JSON.stringify(name)}: ${err instanceof Error ? err.message : String(err)}`;
            throw err;
          })
          .then(resolve, reject);
      },
    });
    if (!state.flushing) {
      state.flushing = true;
      setImmediate(() => {
        state.flushing = false;
        const batch = state.pending.splice(0).sort((a, b) => a.order - b.order || a.arrival - b.arrival);
        for (const p of batch) p.start();
      });
    }
  }).then((o) => {
    if ('error' in o) throw fromRecord(o.error);
    return fromRecord(o.ok) as T;
  });
}
