// Shared CLI plumbing: global options, opening the instance, output mode, argument parsers.
import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import { parseJsonInput } from '../core/input.js';
import { parseDuration, parseIsoTime } from '../core/time.js';
import type { Json } from '../core/types.js';
import { type Instance, openInstance } from '../instance/instance.js';

export interface GlobalOpts {
  dir?: string;
  name?: string;
  host?: string;
  root?: string;
  json?: boolean;
  durability?: 'full' | 'normal';
  url?: string;
}

export class Output {
  constructor(readonly json: boolean) {}
  /** Prints `value` as JSON, or `human()` for people. */
  emit(value: unknown, human: () => string): void {
    process.stdout.write(this.json ? `${JSON.stringify(value)}\n` : `${human()}\n`);
  }
}

export function int(name: string) {
  return (v: string) => {
    if (!/^-?\d+$/.test(v)) throw new InvalidArgumentError(`${name} must be an integer`);
    return Number(v);
  };
}

/** A commander parser for the one duration grammar (core/time.ts), e.g. `--lease 30s`. */
export function duration(flag: string) {
  return (v: string): number => {
    try {
      return parseDuration(v, flag);
    } catch (err) {
      throw new InvalidArgumentError((err as Error).message);
    }
  };
}

/** `--not-before`: an ISO-8601 time, or a duration from now (`5m`), as an ISO-8601 time. */
export function timeOrOffset(flag: string, now: () => number = Date.now) {
  return (v: string): string => {
    try {
      if (/^\d{4}-/.test(v.trim())) {
        parseIsoTime(v, flag);
        return v;
      }
      return new Date(now() + parseDuration(v, flag)).toISOString();
    } catch (err) {
      throw new InvalidArgumentError((err as Error).message);
    }
  };
}

export function json(source: string) {
  return (v: string): Json => {
    try {
      return parseJsonInput(v, source);
    } catch (err) {
      throw new InvalidArgumentError((err as Error).message);
    }
  };
}

export function list(v: string, prev: string[] = []): string[] {
  return prev.concat(
    v
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
  );
}

export async function withInstance<T>(
  cmd: Command,
  fn: (inst: Instance, out: Output) => Promise<T>,
): Promise<void> {
  const g = cmd.optsWithGlobals<GlobalOpts>();
  const env = process.env;
  const inst = await openInstance({
    dir: g.dir ?? (g.name === undefined ? env.MF_INSTANCE_DIR || undefined : undefined),
    name: g.name ?? (env.MF_AGENT_NAME || undefined),
    host: g.host ?? (env.MF_HOST || undefined),
    root: g.root ?? (env.AGENTSTATE_ROOT || undefined),
    url: g.url ?? (env.AGENTSTATE_URL || undefined),
    ...(g.durability ? { durability: g.durability } : {}),
  });
  try {
    await fn(inst, new Output(g.json ?? false));
  } finally {
    await inst.close();
  }
}
