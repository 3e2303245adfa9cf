// Runs the built CLI (dist/) or a skill script under Bun as a real subprocess, with a HOME of the test
// file's own (never the real one) unless the test gives its own.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll } from 'vitest';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const CLI = `${ROOT}dist/cli/main.js`;
export const BUN = `${ROOT}node_modules/.bin/bun`;

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
  /** stdout parsed as JSON (undefined if it is not JSON). */
  json: unknown;
  /** stderr parsed as JSON (undefined if it is not JSON). */
  errorJson: unknown;
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function result(code: number | null, stdout: string, stderr: string): RunResult {
  return { code: code ?? -1, stdout, stderr, json: parse(stdout), errorJson: parse(stderr) };
}

let home: string | undefined;
afterAll(() => {
  if (home !== undefined) rmSync(home, { recursive: true, force: true });
  home = undefined;
});

/**
 * The HOME a child gets when the test names none: a temp folder of this test file (made on first use, removed
 * after the file), so a command that falls back to ~/.config (an instance by name, serve's token) writes
 * there, never into the real home.
 */
export function childHome(): string {
  home ??= mkdtempSync(join(tmpdir(), 'agentstate-home-'));
  return home;
}

/**
 * Environment without any MF_* / AGENTSTATE_* leaking in from the outer shell, and with HOME set to
 * `childHome()` and XDG_CONFIG_HOME unset unless `extra` names them: no child writes into the real home.
 */
export function cleanEnv(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (!k.startsWith('MF_') && !k.startsWith('AGENTSTATE_') && k !== 'XDG_CONFIG_HOME') env[k] = v;
  }
  if (extra.HOME === undefined) env.HOME = childHome();
  for (const [k, v] of Object.entries(extra)) if (v !== undefined) env[k] = v;
  return env;
}

/** Runs `node dist/cli/main.js ...args` synchronously. */
export function runCli(
  args: string[],
  env: Record<string, string | undefined> = {},
  input?: string,
): RunResult {
  const r = spawnSync(process.execPath, [CLI, ...args], {
    env: cleanEnv(env),
    encoding: 'utf8',
    input,
    timeout: 60_000,
  });
  return result(r.status, r.stdout, r.stderr);
}

/** Runs `bun skill/scripts/<workflow>.ts` synchronously (`input` on its stdin). */
export function runBun(
  workflow: string,
  env: Record<string, string | undefined> = {},
  input?: string,
): RunResult {
  const r = spawnSync(BUN, [`${ROOT}skill/scripts/${workflow}.ts`], {
    env: cleanEnv(env),
    encoding: 'utf8',
    input,
    timeout: 60_000,
  });
  return result(r.status, r.stdout, r.stderr);
}

/** Runs the CLI asynchronously (for many processes at once). */
export function runCliAsync(
  args: string[],
  env: Record<string, string | undefined> = {},
): Promise<RunResult> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], { env: cleanEnv(env) });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => resolve(result(code, stdout, stderr)));
  });
}

/**
 * Runs `script` as an ES module under tsx (`node --import tsx --input-type=module -e script ...args`) in the
 * repository's root, asynchronously, so a script that hangs or blows up cannot block the test runner;
 * `onEnd` is handed the child's kill, for the test's end (vitest's `onTestFinished`).
 */
export function runTsxAsync(
  script: string,
  args: string[],
  onEnd: (kill: () => void) => void,
): Promise<RunResult> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script, ...args], {
      cwd: ROOT,
      env: cleanEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    onEnd(() => child.kill('SIGKILL'));
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => resolve(result(code, stdout, stderr)));
  });
}
