// One instance resolver for every edge (issue 11, points 2 and 7): flags over environment, XDG_CONFIG_HOME
// as the default root, AGENTSTATE_DURABILITY everywhere; and no command but init creates an instance.
import { existsSync, readdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openInstance } from '../../src/instance/instance.js';
import { resolveInstance } from '../../src/service/instance-resolver.js';
import { runCli } from '../helpers/cli.js';
import { PG_URL, postgresForThisFile } from '../helpers/postgres.js';
import { tempDir } from '../helpers/tmp.js';

const root = tempDir();
const schema = await postgresForThisFile();

describe('resolveInstance', () => {
  it('prefers flags, then MF_*/AGENTSTATE_* variables; --name wins over MF_INSTANCE_DIR', () => {
    const env = {
      MF_INSTANCE_DIR: '/tmp/from-env',
      MF_AGENT_NAME: 'env-agent',
      MF_HOST: 'env-host',
      AGENTSTATE_ROOT: '/tmp/root-env',
      AGENTSTATE_URL: 'postgres://x@h/db',
      AGENTSTATE_DURABILITY: 'normal',
    };
    expect(resolveInstance({}, env)).toEqual({
      dir: '/tmp/from-env',
      name: 'env-agent',
      host: 'env-host',
      root: '/tmp/root-env',
      url: 'postgres://x@h/db',
      durability: 'normal',
    });
    expect(resolveInstance({ name: 'flag-agent', durability: 'full' }, env)).toMatchObject({
      dir: undefined,
      name: 'flag-agent',
      durability: 'full',
    });
    expect(resolveInstance({ dir: '/tmp/flag' }, env).dir).toBe('/tmp/flag');
    // Empty variables count as unset.
    expect(resolveInstance({}, { MF_AGENT_NAME: '', MF_INSTANCE_DIR: '' })).toMatchObject({
      dir: undefined,
      name: undefined,
    });
  });

  it('takes XDG_CONFIG_HOME as the root when ~/.config would be the default (absolute paths only)', () => {
    expect(resolveInstance({ name: 'a' }, { XDG_CONFIG_HOME: '/xdg' }).root).toBe('/xdg');
    expect(resolveInstance({ name: 'a' }, { XDG_CONFIG_HOME: '/xdg', AGENTSTATE_ROOT: '/r' }).root).toBe(
      '/r',
    );
    expect(resolveInstance({ name: 'a', root: '/f' }, { XDG_CONFIG_HOME: '/xdg' }).root).toBe('/f');
    expect(resolveInstance({ name: 'a' }, { XDG_CONFIG_HOME: 'relative' }).root).toBeUndefined();
  });

  it('refuses a durability other than full or normal, from a flag or the environment', () => {
    expect(() => resolveInstance({ durability: 'fast' })).toThrow(/durability must be full or normal/);
    expect(() => resolveInstance({}, { AGENTSTATE_DURABILITY: 'off' })).toThrow(/durability/);
  });
});

describe('commands other than init never create an instance', () => {
  it('a mistyped --dir or --name is NOT_FOUND (exit 1) saying to run init, and writes nothing', () => {
    const xdg = join(root, 'xdg');
    for (const args of [
      ['--dir', join(root, 'typo'), 'list'],
      ['--dir', join(root, 'typo'), 'verify'],
      ['--dir', join(root, 'typo'), 'enqueue', 'x'],
      ['--dir', join(root, 'typo'), 'state', 'list'],
      ['--name', 'typo', 'list'],
      ['--name', 'typo', 'events'],
    ]) {
      const r = runCli([...args, '--json'], { XDG_CONFIG_HOME: xdg });
      expect(r.code, args.join(' ')).toBe(1);
      expect(r.errorJson, args.join(' ')).toMatchObject({ error: { code: 'NOT_FOUND' } });
      expect((r.errorJson as { error: { message: string } }).error.message).toMatch(/agentstate init/);
    }
    expect(existsSync(join(root, 'typo'))).toBe(false);
    expect(existsSync(xdg)).toBe(false);
  });

  it('init creates it under $XDG_CONFIG_HOME/<host>/agents/<name>; then the other commands find it', () => {
    const xdg = join(root, 'xdg2');
    const env = { XDG_CONFIG_HOME: xdg, MF_HOST: 'box' };
    expect(runCli(['--name', 'planner', 'init'], env).code).toBe(0);
    expect(existsSync(join(xdg, 'box', 'agents', 'planner', 'state.sqlite'))).toBe(true);
    expect(runCli(['--name', 'planner', 'enqueue', 'x'], env).code).toBe(0);
    expect(runCli(['--name', 'planner', 'list', '--json'], env).json).toHaveLength(1);
    expect(readdirSync(join(xdg, 'box', 'agents'))).toEqual(['planner']);
    expect(existsSync(join(homedir(), '.config', 'box'))).toBe(false);
  });

  it('AGENTSTATE_DURABILITY reaches CLI commands too (refused when invalid, before anything is opened)', () => {
    const dir = join(root, 'dur');
    expect(runCli(['--dir', dir, 'init']).code).toBe(0);
    const r = runCli(['--dir', dir, 'list', '--json'], { AGENTSTATE_DURABILITY: 'sometimes' });
    expect(r.code).toBe(2);
    expect(r.errorJson).toMatchObject({ error: { code: 'INVALID_INPUT', field: 'durability' } });
    expect(runCli(['--dir', dir, 'list'], { AGENTSTATE_DURABILITY: 'normal' }).code).toBe(0);
  });

  it('the library still creates by default, and refuses with create: false', async () => {
    const dir = join(root, 'lib');
    await expect(openInstance({ dir, create: false })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect(existsSync(dir)).toBe(false);
    const inst = await openInstance({ dir });
    await inst.close();
    const again = await openInstance({ dir, create: false });
    await again.close();
  });

  it.runIf(schema !== null)(
    'on PostgreSQL, an instance never opened is NOT_FOUND with create: false',
    async () => {
      const url = `${PG_URL}?schema=${schema}`;
      const dir = join(root, 'pg-typo');
      await expect(openInstance({ dir, url, create: false })).rejects.toMatchObject({ code: 'NOT_FOUND' });
      const r = runCli(['--dir', dir, '--url', url, 'list', '--json']);
      expect(r.code).toBe(1);
      const inst = await openInstance({ dir, url });
      await inst.close();
      expect(runCli(['--dir', dir, '--url', url, 'list', '--json']).code).toBe(0);
    },
  );
});
