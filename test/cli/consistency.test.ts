// CLI consistency (issue 11, point 7): commander owns dispatch (global options before a workflow name),
// grouped help with the global options under every subcommand, one duration grammar, an expired lease shown
// as such, and no progress noise when stderr is not a terminal.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatItem } from '../../src/cli/format.js';
import type { WorkItem } from '../../src/core/types.js';
import { ROOT, runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';

const root = tempDir();

describe('dispatch', () => {
  it('global options work before a workflow name, as after it', () => {
    const dir = join(root, 'dispatch');
    expect(runCli(['--dir', dir, 'init']).code).toBe(0);
    const env = { MF_TRIGGER_PAYLOAD_JSON: '{"title":"from env"}' };
    const before = runCli(['--dir', dir, '--project', root, 'EnqueueWorkItem'], env);
    expect(before.code, before.stderr).toBe(0);
    expect((before.json as WorkItem).title).toBe('from env');
    const after = runCli(['EnqueueWorkItem', '--dir', dir, '--payload', '{"title":"flag"}']);
    expect(after.code, after.stderr).toBe(0);
    const mixed = runCli([
      '--json',
      '--dir',
      dir,
      'GetWorkItem',
      '--payload',
      JSON.stringify({ id: (after.json as WorkItem).id }),
    ]);
    expect(mixed.code, mixed.stderr).toBe(0);
    expect((mixed.json as WorkItem).title).toBe('flag');
    // A workflow's errors keep the workflow contract (one JSON line on stderr), whichever way it was reached.
    const bad = runCli(['--dir', dir, 'EnqueueWorkItem', '--payload', '{"title":5}']);
    expect(bad.code).toBe(2);
    expect(bad.errorJson).toMatchObject({ error: { code: 'INVALID_INPUT', field: 'title' } });
  });
});

describe('version', () => {
  it('--version prints the version in package.json', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    const r = runCli(['--version']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trim()).toBe(pkg.version);
  });
});

describe('help', () => {
  it('groups the commands and shows the global options under each subcommand', () => {
    const top = runCli(['--help']).stdout;
    for (const heading of [
      'Global options',
      'Work items:',
      'Events:',
      'Documents:',
      'State files',
      'Instances:',
      'Bundle workflows',
    ]) {
      expect(top).toContain(heading);
    }
    expect(top.indexOf('Work items:')).toBeLessThan(top.indexOf('Bundle workflows'));
    for (const sub of [['claim'], ['state', 'commit'], ['verify'], ['EnqueueWorkItem']]) {
      const help = runCli([...sub, '--help']);
      expect(help.code, sub.join(' ')).toBe(0);
      expect(help.stdout, sub.join(' ')).toMatch(/--dir <path>/);
    }
    expect(runCli(['claim', '--help']).stdout).toMatch(/Global Options:[\s\S]*--url <url>/);
  });
});

describe('durations and leases', () => {
  const dir = join(root, 'leases');

  it('one duration grammar: a bare number is refused with a hint, units work everywhere', () => {
    expect(runCli(['--dir', dir, 'init']).code).toBe(0);
    const bare = runCli(['--dir', dir, 'claim', '--lease', '30']);
    expect(bare.code).toBe(2);
    expect(bare.stderr).toMatch(/give a unit, e\.g\. 30s or 30ms/);
    expect(runCli(['--dir', dir, 'enqueue', 'later', '--not-before', '1d']).code).toBe(0);
    const listed = runCli(['--dir', dir, 'list', '--blocked', '--json']).json as WorkItem[];
    expect(listed).toHaveLength(1);
    expect(Date.parse(listed[0]!.not_before!) - Date.now()).toBeGreaterThan(23 * 3_600_000);
    expect(runCli(['--dir', dir, 'events', '--since', '1d']).code).toBe(0);
    expect(runCli(['--dir', dir, 'gate', 'B', '--max-age', '90']).code).toBe(2);
  });

  it('an expired lease lists as "lease expired … ago", not a negative lease', async () => {
    expect(runCli(['--dir', dir, 'enqueue', 'short']).code).toBe(0);
    const claimed = runCli(['--dir', dir, 'claim', '--lease', '1ms', '--json']).json as WorkItem;
    expect(claimed.title).toBe('short');
    // The condition, not a guess at how long it takes: the lease has run out by this process's clock.
    const expires = Date.parse(claimed.lease_expires_at!);
    while (Date.now() <= expires) await new Promise((r) => setTimeout(r, 5));
    const text = runCli(['--dir', dir, 'list', '--status', 'in_flight']).stdout;
    // How long ago depends on how busy the machine is (1ms, 1.1s …); that it says so is the behaviour.
    expect(text).toMatch(/lease expired \d+(\.\d+)?(ms|s|m|h|d)( \d+[smh])? ago/);
    expect(text).not.toMatch(/lease=-/);
  });

  it('the lease text is exact for a given now: time left, or how long ago it ran out', () => {
    const at = Date.parse('2026-01-01T00:00:00.000Z');
    const item = {
      id: 'wi_1',
      title: 't',
      kind: null,
      status: 'in_flight',
      priority: 0,
      attempts: 1,
      max_attempts: 3,
      lease_owner: 'w1',
      lease_expires_at: new Date(at).toISOString(),
      blocked_by: [],
      error: null,
    } as unknown as WorkItem;
    expect(formatItem(item, at - 30_000)).toContain('owner=w1 attempt=1 (2 left after it) lease=30s');
    expect(formatItem(item, at + 250)).toContain(
      'owner=w1 attempt=1 (2 left after it) lease expired 250ms ago',
    );
    expect(formatItem(item, at + 90_000)).toContain('lease expired 1m 30s ago');
  });

  it('verify prints no progress when stderr is not a terminal', () => {
    const r = runCli(['--dir', dir, 'verify']);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    expect(r.stdout).toMatch(/^ok: /);
  });
});
