// Shared CLI plumbing: global options, opening the instance, output mode, argument parsers.
import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import { parseJsonInput } from '../core/input.js';
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

const DUR = /^(\d+)(ms|s|m|h)?$/;
export function durationMs(v: string): number {
  const m = DUR.exec(v);
  if (!m) throw new InvalidArgumentError('use milliseconds or a duration like 30s, 5m, 1h');
  return Number(m[1]) * ({ ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[m[2] ?? 'ms'] ?? 1);
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
