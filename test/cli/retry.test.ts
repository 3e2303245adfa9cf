// Issue 17 at the CLI: a dependant of a failed blocker says so in `list` (with the hint), `list
// --blocked-on-failure` finds it, `agentstate retry` puts the blocker back (exit 3 with the status when it
// is not failed or cancelled, nothing written), and the RetryWorkItem workflow does the same.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { WorkItem } from '../../src/core/types.js';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';

const root = tempDir();

describe('agentstate retry', () => {
  it('a → b, a fails: b is listed blocked on a with the hint; retry a; a second retry is exit 3', () => {
    const dir = join(root, 'retry');
    const cli = (...args: string[]) => runCli(['--dir', dir, ...args]);
    expect(cli('init').code).toBe(0);
    const a = cli('--json', 'enqueue', 'fetch').json as WorkItem;
    const b = cli('--json', 'enqueue', 'build', '--blocked-by', a.id).json as WorkItem;
    const c = cli('--json', 'enqueue', 'ship', '--blocked-by', b.id, '--on-blocker-failure', 'cascade')
      .json as WorkItem;
    expect(c.on_blocker_failure).toBe('cascade');
    expect(cli('claim', '--worker', 'w').code).toBe(0);
    const failed = cli('resolve', a.id, 'failed', '--worker', 'w', '--error', 'network down');
    expect(failed.code, failed.stderr).toBe(0);

    const listed = cli('list', '--blocked-on-failure');
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toContain(b.id);
    expect(listed.stdout).toContain(
      `BLOCKED ON FAILURE of ${a.id} (agentstate retry ${a.id}, or cancel ${b.id})`,
    );
    // c waited on b (pending), so the cascade did not cancel it; it is blocked on a too.
    expect(listed.stdout).toContain(c.id);
    const got = cli('--json', 'get', b.id).json as WorkItem;
    expect(got.blocked_on_failure).toEqual([a.id]);

    const before = cli('--json', 'events').json as unknown[];
    const refused = cli('retry', b.id);
    expect(refused.code).toBe(3);
    expect(refused.stderr).toContain(`it is pending; only a failed or cancelled item can be retried`);
    expect(cli('--json', 'events').json as unknown[]).toHaveLength(before.length);

    const retried = cli('--json', 'retry', a.id, '--reason', 'network back');
    expect(retried.code, retried.stderr).toBe(0);
    expect(retried.json).toMatchObject({ id: a.id, status: 'pending', max_attempts: 4 });
    expect(cli('retry', a.id).code).toBe(3);
    expect(cli('list', '--blocked-on-failure').stdout).not.toContain(b.id);
  });

  it('several ids go in one transaction; the RetryWorkItem workflow retries one', () => {
    const dir = join(root, 'many');
    const cli = (...args: string[]) => runCli(['--dir', dir, ...args]);
    expect(cli('init').code).toBe(0);
    const ids = ['x', 'y', 'z'].map((t) => (cli('--json', 'enqueue', t).json as WorkItem).id);
    for (const id of ids.slice(0, 2)) expect(cli('cancel', id).code).toBe(0);
    // z is pending: the batch is refused whole.
    expect(cli('retry', ...ids).code).toBe(3);
    expect((cli('--json', 'get', ids[0]!).json as WorkItem).status).toBe('cancelled');
    const both = cli('--json', 'retry', ids[0]!, ids[1]!);
    expect(both.code, both.stderr).toBe(0);
    expect((both.json as WorkItem[]).map((i) => i.status)).toEqual(['pending', 'pending']);
    expect(cli('cancel', ids[2]!).code).toBe(0);
    const wf = cli('RetryWorkItem', '--payload', JSON.stringify({ id: ids[2], reason: 'again' }));
    expect(wf.code, wf.stderr).toBe(0);
    expect((wf.json as WorkItem).status).toBe('pending');
    const bad = cli('RetryWorkItem', '--payload', JSON.stringify({ id: ids[2], extra: 1 }));
    expect(bad.code).toBe(2);
    expect(bad.errorJson).toMatchObject({ error: { code: 'INVALID_INPUT' } });
  });

  it('cancel takes several ids in one transaction: a finished one refuses the batch whole', () => {
    const dir = join(root, 'cancel-many');
    const cli = (...args: string[]) => runCli(['--dir', dir, ...args]);
    expect(cli('init').code).toBe(0);
    const ids = ['p', 'q', 'r'].map((t) => (cli('--json', 'enqueue', t).json as WorkItem).id);
    expect(cli('claim', '--id', ids[2]!, '--worker', 'w').code).toBe(0);
    expect(cli('resolve', ids[2]!, 'done', '--worker', 'w').code).toBe(0);
    const refused = cli('cancel', ...ids, '-r', 'tidy');
    expect(refused.code).toBe(3);
    expect(refused.stderr).toContain(ids[2]);
    expect((cli('--json', 'get', ids[0]!).json as WorkItem).status).toBe('pending');
    const two = cli('--json', 'cancel', ids[0]!, ids[1]!, '-r', 'tidy');
    expect(two.code, two.stderr).toBe(0);
    expect((two.json as WorkItem[]).map((i) => [i.status, i.error])).toEqual([
      ['cancelled', 'tidy'],
      ['cancelled', 'tidy'],
    ]);
    expect(cli('cancel', ids[0]!, ids[0]!).code).toBe(2);
  });
});
