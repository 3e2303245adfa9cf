// Storage URLs with secrets through the CLI and the workflow entry points: whether the store is reachable,
// unreachable, unparsable or of an unsupported scheme, neither stdout nor stderr ever shows a password
// (user info, ?password=, ?sslpassword=, a …token… parameter), in plain and in --json output.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type RunResult, runBun, runCli } from '../helpers/cli.js';
import { PG_URL, postgresForThisFile } from '../helpers/postgres.js';
import { tempDir } from '../helpers/tmp.js';

const SECRETS = ['sekret1-user', 'sekret2-query', 'sekret3-token'];
const root = tempDir('agentstate-url-redaction-');
let n = 0;

function expectNoSecret(r: RunResult, what: string): void {
  for (const s of SECRETS) {
    for (const f of [s, encodeURIComponent(s)]) {
      expect(r.stdout, `${what}: stdout`).not.toContain(f);
      expect(r.stderr, `${what}: stderr`).not.toContain(f);
    }
  }
}

/** A URL carrying every secret at once, on `host` (a server, or nothing listening). */
function secretUrl(base: string, extra: Record<string, string> = {}): string {
  const u = new URL(base);
  u.username = u.username || 'postgres';
  u.password = SECRETS[0]!;
  u.searchParams.set('password', SECRETS[1]!);
  u.searchParams.set('api_token', SECRETS[2]!);
  for (const [k, v] of Object.entries(extra)) u.searchParams.set(k, v);
  return u.toString();
}

function dir(): string {
  return join(root, `i${++n}`);
}

describe('CLI: a URL that cannot be used never shows its secrets', () => {
  const unreachable = `postgres://u:${SECRETS[0]}@127.0.0.1:1/x?password=${SECRETS[1]}&api_token=${SECRETS[2]}`;
  const cases: Array<[string, string, number]> = [
    ['unreachable server', unreachable, 5],
    ['unparsable host', `postgres://u:${SECRETS[0]}@[bad/x?password=${SECRETS[1]}&t=${SECRETS[2]}`, 2],
    [
      'port out of range',
      `postgres://u:${SECRETS[0]}@127.0.0.1:99999/x?password=${SECRETS[1]}&a_token=${SECRETS[2]}`,
      2,
    ],
    [
      'password with a slash',
      `postgres://u:${SECRETS[0]}/x@127.0.0.1:1/x?password=${SECRETS[1]}&api_token=${SECRETS[2]}`,
      2,
    ],
    ['unsupported scheme', `mysql://u:${SECRETS[0]}@h/x?password=${SECRETS[1]}&api_token=${SECRETS[2]}`, 2],
  ];
  it.for(cases)('%s', ([what, url, code]) => {
    for (const args of [
      ['--url', url, 'list'],
      ['--json', '--url', url, 'list'],
      ['--json', '--url', url, 'init'],
      ['--url', url, 'verify'],
    ]) {
      const r = runCli(['--dir', dir(), '--host', 'h', ...args]);
      expect(r.code, `${what} ${args.join(' ')}: ${r.stderr}`).toBe(code);
      expect(r.stderr).toMatch(code === 5 ? /STORAGE_UNAVAILABLE/ : /INVALID_INPUT/);
      expectNoSecret(r, `${what} ${args.join(' ')}`);
    }
    const env = { AGENTSTATE_URL: url, MF_INSTANCE_DIR: dir() };
    const wf = runCli(['ScaffoldFolders'], env);
    expect(wf.code).toBe(code);
    expectNoSecret(wf, `${what} ScaffoldFolders`);
  });

  it('the unreachable server is named, with the secrets masked', () => {
    const r = runCli(['--dir', dir(), '--json', '--url', unreachable, 'list']);
    const err = (r.errorJson as { error: { message: string; url: string } }).error;
    expect(err.url).toBe('postgres://u:***@127.0.0.1:1/x?password=***&api_token=***');
    expect(err.message).toContain('postgres://u:***@127.0.0.1:1/x?password=***&api_token=***');
  });
});

const schema = await postgresForThisFile();
const suite = schema === null ? describe.skip : describe;

suite('CLI: a working PostgreSQL URL with secrets (the test server trusts, so they are accepted)', () => {
  it('init --json, init, enqueue, list, verify, export and the workflows show no secret', () => {
    const url = secretUrl(PG_URL, { schema: schema! });
    const d = dir();
    const init = runCli(['--dir', d, '--json', '--url', url, 'init']);
    expect(init.code, init.stderr).toBe(0);
    expect((init.json as { db: string }).db).toMatch(/^postgres:\/\/postgres:\*\*\*@.*password=\*\*\*/);
    expectNoSecret(init, 'init --json');
    for (const args of [
      ['init'],
      ['enqueue', 'a task'],
      ['list'],
      ['--json', 'list'],
      ['verify'],
      ['--json', 'verify'],
      ['instance', 'export', join(d, 'dump.jsonl')],
    ]) {
      const r = runCli(['--dir', d, '--url', url, ...args]);
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0);
      expectNoSecret(r, args.join(' '));
    }
    const env = { AGENTSTATE_URL: url, MF_INSTANCE_DIR: dir() };
    const wf = runCli(['ScaffoldFolders'], env);
    expect(wf.code, wf.stderr).toBe(0);
    expectNoSecret(wf, 'ScaffoldFolders');
    const bun = runBun('ScaffoldFolders', { AGENTSTATE_URL: url, MF_INSTANCE_DIR: dir() });
    expect(bun.code, bun.stderr).toBe(0);
    expect(bun.stdout).toContain('***');
    expectNoSecret(bun, 'bun ScaffoldFolders');
  });
});
