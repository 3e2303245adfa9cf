// A handler that runs a command per item (`agentstate work --exec`): the bundle's MF_* contract in the
// environment, the payload as MF_TRIGGER_PAYLOAD_JSON (or, when large, a file MF_TRIGGER_PAYLOAD_FILE names),
// exit 0 = done (stdout as the result when it is JSON), non-zero = failed with the tail of stderr (retried
// after the backoff while attempts remain; exit 75, EX_TEMPFAIL, with stdout `{"retry_after_ms": N}` is retried
// after N ms; exit 100 is final). Each command runs in a process group of its own, so what it starts is
// stopped with it: the group gets SIGTERM, then SIGKILL `killAfterMs` later, when the item's signal fires (its
// lease was lost or the stop's grace ran out), when its stdout grows past the limit, and when the command
// exits leaving processes behind. POSIX only (`sh -c`, process groups).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LIMITS } from '../core/input.js';
import type { Json } from '../core/types.js';
import { InvalidInputError } from '../errors.js';
import { FailNow, type Handler, RetryAfter } from './worker.js';

/** Payloads of more UTF-8 bytes than this go in a file, not the environment (Linux refuses a variable over 128 KiB: E2BIG). */
export const PAYLOAD_ENV_MAX = 64 * 1024;
/** How much of stdout is read at most (the limit of text read from outside); more fails the item. */
const STDOUT_MAX = LIMITS.inputBytes;
const STDERR_TAIL = 2_000;
/** The exit code of a temporary failure (sysexits.h EX_TEMPFAIL): stdout may name the retry time. */
export const EXIT_RETRY_AFTER = 75;
/** The exit code of a final failure: not retried, attempts left or not. */
export const EXIT_FAIL_NOW = 100;
/** How long a command's process group has after SIGTERM before SIGKILL, in ms. */
export const KILL_AFTER_MS = 5_000;
/** How often a group sent SIGTERM is looked at, to end the wait as soon as it is gone. */
const GONE_POLL_MS = 50;

/** What `execHandler` runs, and with what environment. */
export interface ExecOptions {
  /** The command line, run by the shell (`sh -c`). */
  command: string;
  /** Added to the environment of every run (the instance's MF_* variables). */
  env?: Record<string, string>;
  /** The working folder [default: the current one]. */
  cwd?: string;
  /** How long a command's process group has after SIGTERM before SIGKILL, in ms [default: 5000]. */
  killAfterMs?: number;
}

/** The leaders (pids) of the process groups of the commands running now, or still being ended. */
const leaders = new Set<number>();
/** One promise per command started and not yet ended: it resolves once the command's process group is gone. */
const running = new Set<Promise<void>>();

/**
 * Resolves once every command that `execHandler` started has ended, with everything it started (its process
 * group is gone or was sent SIGKILL). `agentstate work` waits for it before it exits.
 */
export async function execChildrenEnded(): Promise<void> {
  while (running.size > 0) await Promise.all(running);
}

/** Sends `sig` to the process group led by `pid` (0: only asks whether it exists); false when it is gone. */
function signalGroup(pid: number, sig: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pid, sig);
    return true;
  } catch (err) {
    // EPERM: a member exists that this process may not signal (it changed its user); it is not gone.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

let exitHooked = false;
/**
 * When this process exits with commands still running (an uncaught error, process.exit), their groups are
 * killed on the way out: a group of its own gets no signal meant for this process. SIGKILL of this process
 * runs no code: its commands then run on until they end (see docs/worker.md).
 */
function killGroupsAtExit(): void {
  if (exitHooked) return;
  exitHooked = true;
  process.on('exit', () => {
    for (const pid of leaders) signalGroup(pid, 'SIGKILL');
  });
}

/**
 * Ends the process group led by `pid`: SIGTERM, then SIGKILL after `killAfterMs` unless it is gone by then
 * (`onKill` runs when SIGKILL is sent). Resolves once the group is gone or killed.
 */
function endGroup(pid: number, killAfterMs: number, onKill: () => void): Promise<void> {
  return new Promise((resolve) => {
    if (!signalGroup(pid, 'SIGTERM')) return resolve();
    const deadline = Date.now() + killAfterMs;
    const look = () => {
      if (!signalGroup(pid, 0)) return resolve();
      const left = deadline - Date.now();
      if (left <= 0) {
        signalGroup(pid, 'SIGKILL');
        onKill();
        return resolve();
      }
      setTimeout(look, Math.min(GONE_POLL_MS, left));
    };
    setTimeout(look, Math.min(GONE_POLL_MS, killAfterMs));
  });
}

/** The result of a run's stdout: its JSON when it is JSON, else null (the output is not a result). */
function resultOf(stdout: string): Json {
  const text = stdout.trim();
  if (text === '') return null;
  try {
    return JSON.parse(text) as Json;
  } catch {
    return null;
  }
}

/** A handler that runs `o.command` for each item (see the file's header for the contract). */
export function execHandler(o: ExecOptions): Handler {
  const killAfterMs = o.killAfterMs ?? KILL_AFTER_MS;
  if (!Number.isSafeInteger(killAfterMs) || killAfterMs < 0) {
    throw new InvalidInputError(
      `execHandler: killAfterMs must be a whole number of ms (0 or more), got ${o.killAfterMs}`,
      { field: 'killAfterMs' },
    );
  }
  return (item, ctx) =>
    new Promise((resolve, reject) => {
      if (ctx.signal.aborted) return reject(new Error('not started: the item is no longer held'));
      const payload = JSON.stringify(item.payload ?? null);
      let tmp: string | undefined;
      const env: NodeJS.ProcessEnv = {
        ...process.env,
        ...o.env,
        AGENTSTATE_ITEM_ID: item.id,
        AGENTSTATE_ITEM_KIND: item.kind ?? '',
        AGENTSTATE_ATTEMPT: String(ctx.attempt),
      };
      if (Buffer.byteLength(payload) <= PAYLOAD_ENV_MAX) {
        env.MF_TRIGGER_PAYLOAD_JSON = payload;
        delete env.MF_TRIGGER_PAYLOAD_FILE;
      } else {
        tmp = mkdtempSync(join(tmpdir(), 'agentstate-item-'));
        const file = join(tmp, 'payload.json');
        writeFileSync(file, payload, { mode: 0o600 });
        env.MF_TRIGGER_PAYLOAD_FILE = file;
        delete env.MF_TRIGGER_PAYLOAD_JSON;
      }
      // detached: the command leads a process group of its own, so the whole group can be signalled.
      const child = spawn('sh', ['-c', o.command], {
        env,
        ...(o.cwd === undefined ? {} : { cwd: o.cwd }),
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: true,
      });
      const pid = child.pid;
      let gone: () => void = () => {};
      if (pid !== undefined) {
        killGroupsAtExit();
        leaders.add(pid);
        const ended = new Promise<void>((r) => {
          gone = r;
        });
        running.add(ended);
        void ended.then(() => {
          leaders.delete(pid);
          running.delete(ended);
        });
      }
      let ending: Promise<void> | undefined;
      /** Ends the command's group (once): after SIGKILL, stops reading what an escaped process may still hold open. */
      const end = () => {
        if (ending || pid === undefined) return;
        ending = endGroup(pid, killAfterMs, () => {
          child.stdout.destroy();
          child.stderr.destroy();
        });
        void ending.then(gone);
      };
      const out: Buffer[] = [];
      let outBytes = 0;
      let over: string | null = null;
      child.stdout.on('data', (d: Buffer) => {
        if (over !== null) return;
        outBytes += d.length;
        if (outBytes > STDOUT_MAX) {
          // Bounded before it is read: no more is buffered, and the command is stopped.
          over = `result refused: stdout is larger than the ${STDOUT_MAX} byte limit of a command's output (a result is at most ${LIMITS.jsonBytes} bytes of JSON)`;
          out.length = 0;
          child.stdout.destroy();
          end();
          return;
        }
        out.push(d);
      });
      let stderr = '';
      child.stderr.setEncoding('utf8').on('data', (d: string) => {
        stderr = (stderr + d).slice(-STDERR_TAIL * 2);
      });
      ctx.signal.addEventListener('abort', end, { once: true });
      // What the command leaves running when it exits is ended too: nothing outlives its item.
      child.on('exit', end);
      let settled = false;
      const settle = () => {
        if (settled) return false;
        settled = true;
        ctx.signal.removeEventListener('abort', end);
        if (tmp) rmSync(tmp, { recursive: true, force: true });
        return true;
      };
      child.on('error', (err) => {
        if (pid === undefined) gone();
        if (!settle()) return;
        reject(new Error(`cannot run ${JSON.stringify(o.command)}: ${err.message}`));
      });
      child.on('close', (code, signal) => {
        end();
        if (!settle()) return;
        if (over !== null) return reject(new FailNow(over));
        const stdout = Buffer.concat(out).toString('utf8');
        if (code === 0) return resolve(resultOf(stdout));
        const tail = stderr.trim().slice(-STDERR_TAIL);
        const how = signal ? `killed by ${signal}` : `exit ${code}`;
        const message = tail ? `${how}: ${tail}` : how;
        if (code === EXIT_FAIL_NOW) return reject(new FailNow(message));
        const asked = code === EXIT_RETRY_AFTER ? resultOf(stdout) : null;
        const ms =
          typeof asked === 'object' && asked !== null && !Array.isArray(asked)
            ? asked.retry_after_ms
            : undefined;
        if (typeof ms === 'number' && Number.isFinite(ms) && ms >= 0)
          return reject(new RetryAfter(ms, message));
        reject(new Error(message));
      });
    });
}
