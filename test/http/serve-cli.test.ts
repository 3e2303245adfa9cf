// `agentstate serve` end to end: the built CLI prints where it listens and its new token once, serves every
// instance under the root, refuses a non-loopback bind without a token, and exits cleanly on SIGTERM.
import { spawn } from 'node:child_process';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { TOKEN_FILE } from '../../src/http/auth.js';
import { CLI, cleanEnv, runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';

describe('agentstate serve', () => {
  it('prints its URL and a new token once, serves the root’s instances, and stops on SIGTERM with a stream open', async () => {
    const root = tempDir('agentstate-serve-cli-');
    expect(runCli(['--root', root, '--host', 'h', '--name', 'planner', 'init']).code).toBe(0);
    const child = spawn(process.execPath, [CLI, '--root', root, 'serve', '--port', '0'], {
      env: cleanEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let err = '';
    const ready = new Promise<{ url: string; token: string }>((resolve, reject) => {
      child.stderr.on('data', (d) => {
        err += d;
        const url = /serve: (http:\/\/127\.0\.0\.1:\d+)/.exec(err)?.[1];
        const token = /mode 0600\):\n(\S+)\n/.exec(err)?.[1];
        if (url && token) resolve({ url, token });
      });
      child.on('exit', (code) => reject(new Error(`serve exited ${code}: ${err}`)));
    });
    const { url, token } = await ready;
    expect(statSync(join(root, TOKEN_FILE)).mode & 0o777).toBe(0o600);
    const list = await fetch(`${url}/api/v1/instances`, { headers: { authorization: `Bearer ${token}` } });
    expect(((await list.json()) as Array<{ instance: string }>).map((i) => i.instance)).toEqual([
      'h/planner',
    ]);
    expect((await fetch(`${url}/api/v1/instances`)).status).toBe(401);
    // An open event stream must not hold the shutdown up.
    const stream = await fetch(`${url}/api/v1/events`, { headers: { authorization: `Bearer ${token}` } });
    expect(stream.status).toBe(200);
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    // Read to its end: a stream the server ends is done; one cut off after the grace period is an error.
    const reader = stream.body!.getReader();
    const drained = (async () => {
      for (;;) if ((await reader.read()).done) return 'ended';
    })().catch((e: Error) => `cut off: ${e.message}`);
    child.kill('SIGTERM');
    expect(await drained).toBe('ended');
    expect(await exited).toBe(0);
    await stream.body?.cancel().catch(() => {});
  }, 30_000);

  it('refuses to bind a non-loopback address without a token', () => {
    const root = tempDir('agentstate-serve-cli-');
    const r = runCli(['--root', root, 'serve', '--bind', '0.0.0.0', '--port', '0', '--json']);
    expect(r.code).toBe(2);
    expect(r.errorJson).toMatchObject({ error: { code: 'INVALID_INPUT', field: 'host' } });
  });

  it('refuses a --verify-every that is no duration, or zero, with exit 2 before serving', () => {
    const root = tempDir('agentstate-serve-cli-');
    const soon = runCli(['--root', root, 'serve', '--port', '0', '--verify-every', 'soon', '--json']);
    expect(soon.code).toBe(2);
    expect((soon.errorJson as { error: { message: string } }).error.message).toMatch(
      /--verify-every "soon" is not a duration/,
    );
    const zero = runCli(['--root', root, 'serve', '--port', '0', '--verify-every', '0s', '--json']);
    expect(zero.code).toBe(2);
    expect(zero.errorJson).toMatchObject({ error: { code: 'INVALID_INPUT', field: 'verify_every' } });
  });
});
