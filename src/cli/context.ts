// Shared CLI plumbing: global options, opening the instance, output mode, argument parsers.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import { parseJsonInput } from '../core/input.js';
import { parseDuration } from '../core/time.js';
import type { Json } from '../core/types.js';
import { InvalidInputError } from '../errors.js';
import { type Instance, openInstance } from '../instance/instance.js';
import { resolveInstance } from '../service/instance-resolver.js';
import { invoke } from '../service/invoke.js';
import type { Progress } from '../service/operation.js';

export interface GlobalOpts {
  dir?: string;
  name?: string;
  host?: string;
  root?: string;
  json?: boolean;
  durability?: 'full' | 'normal';
  url?: string;
}

/** The project root of the state-file commands: --project, else the current folder. */
export function projectOf(cmd: Command): string {
  return resolve(cmd.optsWithGlobals<{ project?: string }>().project ?? process.cwd());
}

/** The output mode of a command (--json anywhere on the line). */
export function outputOf(cmd: Command): Output {
  return new Output(cmd.optsWithGlobals<GlobalOpts>().json ?? false);
}

/**
 * A CLI command as a thin view of one operation: runs `name` with `input` on the instance the global flags
 * and the environment name (never creating one unless the operation does), prints the result as JSON with
 * --json or as `human(result)` otherwise.
 */
export async function runCommand<T>(
  cmd: Command,
  name: string,
  input: Record<string, unknown>,
  human: (result: T) => string,
  opts: {
    /** Progress of long work (see `progressLine`), cleared before the result is printed. */
    progress?: ReturnType<typeof progressLine>;
    /** The exit code a result calls for (e.g. a failed verify), when not 0. */
    exitCode?: (result: T) => number | undefined;
  } = {},
): Promise<void> {
  const report = opts.progress?.report;
  let result: T;
  try {
    result = (await invoke(name, input, {
      instance: cmd.optsWithGlobals<GlobalOpts>(),
      ...(report ? { progress: report } : {}),
    })) as T;
  } finally {
    opts.progress?.clear();
  }
  outputOf(cmd).emit(result, () => human(result));
  const code = opts.exitCode?.(result);
  if (code !== undefined) process.exitCode = code;
}

/**
 * Progress of long work on stderr, only when stderr is a terminal (silent in pipes, CI and for agents):
 * `report(n)` rewrites one line, `clear()` removes it before the result is printed.
 */
export function progressLine(what: string): { report?: Progress; clear: () => void } {
  if (process.stderr.isTTY !== true) return { clear: () => {} };
  let shown = false;
  return {
    report: (n, phase) => {
      shown = true;
      // \x1b[K: a shorter phase label must not leave the end of a longer one behind.
      process.stderr.write(`\r${phase ?? what}: ${n} …\x1b[K`);
    },
    clear: () => {
      if (shown) process.stderr.write('\r\x1b[K');
      shown = false;
    },
  };
}

/** A signal that aborts on the first SIGINT or SIGTERM: a command that runs until interrupted (a stream, a watch). */
export function interrupted(): AbortSignal {
  const ac = new AbortController();
  process.once('SIGINT', () => ac.abort());
  process.once('SIGTERM', () => ac.abort());
  return ac.signal;
}

/** `{ [key]: value }` when value is defined, else `{}`: builds inputs from optional flags. */
export function given<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}

export class Output {
  constructor(readonly json: boolean) {}
  /** Prints `value` as JSON, or `human()` for people. */
  emit(value: unknown, human: () => string): void {
    process.stdout.write(this.json ? `${JSON.stringify(value)}\n` : `${human()}\n`);
  }
}

/**
 * A commander parser for a whole-number flag or argument (`name` as the refusal shows it: `--limit`, `from`). `range` bounds it where the flag itself has bounds the
 * operation cannot check (a TCP port, a poll interval); the operations' own limits are checked by the
 * operation, naming its field.
 */
export function int(name: string, range: { min?: number; max?: number } = {}) {
  return (v: string) => {
    const n = Number(v);
    if (!/^-?\d+$/.test(v.trim()) || !Number.isSafeInteger(n)) {
      throw new InvalidArgumentError(`${name} must be a whole number, got ${JSON.stringify(v)}`);
    }
    const { min, max } = range;
    if ((min !== undefined && n < min) || (max !== undefined && n > max)) {
      const bounds =
        min !== undefined && max !== undefined
          ? `from ${min} to ${max}`
          : min !== undefined
            ? `at least ${min}`
            : `at most ${max}`;
      throw new InvalidArgumentError(`${name} must be ${bounds}, got ${n}`);
    }
    return n;
  };
}

/** A TCP port flag (`--port` of `serve` and `mcp --http`, `--metrics-port`): 0 (a free port) to 65535. */
export const port = (flag = '--port') => int(flag, { min: 0, max: 65_535 });

/** A commander parser from `parse`: what it throws, commander reports as the flag's invalid argument. */
function parser<T>(parse: (v: string) => T) {
  return (v: string): T => {
    try {
      return parse(v);
    } catch (err) {
      throw new InvalidArgumentError((err as Error).message);
    }
  };
}

/** A commander parser for the one duration grammar (core/time.ts), e.g. `--lease 30s`. */
export function duration(flag: string) {
  return parser((v): number => parseDuration(v, flag));
}

/**
 * A commander parser for a start rate, `<count>/<duration>` (`60/1m`: 60 claims per minute), or its JSON form
 * (`{"count":60,"period_ms":60000}`); the bounds are the operation's to check.
 */
export function rate(flag: string) {
  return parser((v): Json => {
    const m = /^\s*(\d+)\s*\/\s*(\S+)\s*$/.exec(v);
    if (m) return { count: Number(m[1]), period_ms: parseDuration(m[2]!, flag) };
    if (v.trim().startsWith('{')) return parseJsonInput(v, flag);
    throw new InvalidInputError(
      `${flag} ${JSON.stringify(v)} is not a rate: use <count>/<duration>, e.g. 60/1m`,
      {
        field: flag,
      },
    );
  });
}

export function json(source: string) {
  return parser((v): Json => parseJsonInput(v, source));
}

export function list(v: string, prev: string[] = []): string[] {
  return prev.concat(
    v
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
  );
}

/**
 * Opens the instance the flags and environment name (the one resolver), runs `fn`, closes it. Only `init`
 * (and `instance import`, which fills a new one) pass `create: true`: every other command refuses a
 * missing instance with NOT_FOUND instead of creating an empty one for a mistyped --name or --dir.
 */
export async function withInstance<T>(
  cmd: Command,
  fn: (inst: Instance, out: Output) => Promise<T>,
  opts: { create?: boolean } = {},
): Promise<void> {
  const g = cmd.optsWithGlobals<GlobalOpts>();
  const inst = await openInstance({ ...resolveInstance(g), create: opts.create ?? false });
  try {
    await fn(inst, new Output(g.json ?? false));
  } finally {
    await inst.close();
  }
}

/** The options of a command that listens on the network (serve, mcp --http). */
export interface ListenOpts {
  port?: number;
  bind?: string;
  token?: string;
  tlsCert?: string;
  tlsKey?: string;
  insecureHttp?: boolean;
}

/** The certificate and key `--tls-cert` / `--tls-key` name, read now (both or neither), for `command`. */
export function tlsOf(
  cert: string | undefined,
  key: string | undefined,
  command: string,
): { tls: { cert: Buffer; key: Buffer } } | undefined {
  if (cert === undefined && key === undefined) return undefined;
  if (cert === undefined || key === undefined) {
    throw new InvalidInputError(`${command}: give --tls-cert and --tls-key together`, {
      field: cert === undefined ? 'tls-cert' : 'tls-key',
    });
  }
  const read = (file: string, field: string) => {
    try {
      return readFileSync(file);
    } catch (err) {
      throw new InvalidInputError(`${command}: cannot read --${field} ${file}: ${(err as Error).message}`, {
        field,
      });
    }
  };
  return { tls: { cert: read(cert, 'tls-cert'), key: read(key, 'tls-key') } };
}
