// A handler that runs a command per item (`agentstate work --exec`): the bundle's MF_* contract in the
// environment, the payload as MF_TRIGGER_PAYLOAD_JSON (or, when large, a file MF_TRIGGER_PAYLOAD_FILE names),
// exit 0 = done (stdout as the result when it is JSON), non-zero = failed with the tail of stderr (retried
// after the backoff while attempts remain; exit 75, EX_TEMPFAIL, with stdout `{"retry_after_ms": N}` is retried
// after N ms; exit 100 is final). The child is stopped (SIGTERM, then SIGKILL) when the item's signal fires:
// its lease was lost or the stop's grace ran out.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Json } from '../core/types.js';
import { FailNow, type Handler, RetryAfter } from './worker.js';

/** Payloads of more UTF-8 bytes than this go in a file, not the environment (Linux refuses a variable over 128 KiB: E2BIG). */
export const PAYLOAD_ENV_MAX = 64 * 1024;
/** How much of stdout is kept as a result, and of stderr as a failure's message. */
const STDOUT_MAX = 4 * 1024 * 1024;
const STDERR_TAIL = 2_000;
/** The exit code of a temporary failure (sysexits.h EX_TEMPFAIL): stdout may name the retry time. */
export const EXIT_RETRY_AFTER = 75;
/** The exit code of a final failure: not retried, attempts left or not. */
export const EXIT_FAIL_NOW = 100;
/** How long a child has after SIGTERM before SIGKILL. */
const KILL_AFTER_MS = 5_000;

/** What `execHandler` runs, and with what environment. */
export interface ExecOptions {
  /** The command line, run by the shell (`sh -c`). */
  command: string;
  /** Added to the environment of every run (the instance's MF_* variables). */
  env?: Record<string, string>;
  /** The working folder [default: the current one]. */
  cwd?: string;
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
  return (item, ctx) =>
    new Promise((resolve, reject) => {
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
      const child = spawn('sh', ['-c', o.command], {
        env,
        ...(o.cwd === undefined ? {} : { cwd: o.cwd }),
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.setEncoding('utf8').on('data', (d: string) => {
        if (stdout.length < STDOUT_MAX) stdout += d;
      });
      child.stderr.setEncoding('utf8').on('data', (d: string) => {
        stderr = (stderr + d).slice(-STDERR_TAIL * 2);
      });
      let killer: NodeJS.Timeout | undefined;
      const stop = () => {
        child.kill('SIGTERM');
        killer = setTimeout(() => child.kill('SIGKILL'), KILL_AFTER_MS);
        killer.unref?.();
      };
      ctx.signal.addEventListener('abort', stop, { once: true });
      const done = () => {
        ctx.signal.removeEventListener('abort', stop);
        clearTimeout(killer);
        if (tmp) rmSync(tmp, { recursive: true, force: true });
      };
      child.on('error', (err) => {
        done();
        reject(new Error(`cannot run ${JSON.stringify(o.command)}: ${err.message}`));
      });
      child.on('close', (code, signal) => {
        done();
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
