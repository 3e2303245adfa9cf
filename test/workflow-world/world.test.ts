// createWorld's own settings (the SDK calls it with no arguments, so they come from the environment): a
// durability other than full or normal is refused before anything is created; `normal` opens a World that
// works. The SQLite folder is a temp one; the environment is restored after each test.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isAgentStateError } from '../../src/errors.js';
import { createWorld } from '../../src/workflow-world/world.js';
import { adminQuery, PG_URL, postgresForThisFile } from '../helpers/postgres.js';
import { tempDir } from '../helpers/tmp.js';

const schema = await postgresForThisFile();

const root = tempDir();
const saved = { ...process.env };
afterEach(() => {
  for (const k of ['AGENTSTATE_DURABILITY', 'AGENTSTATE_WORKFLOW_DIR', 'AGENTSTATE_WORKFLOW_CONCURRENCY']) {
    if (saved[k] === undefined) delete process.env[k];
    else process.env[k] = saved[k];
  }
});

describe('createWorld settings from the environment', () => {
  it.each(['fast', 'FULL', 'off; DROP'])(
    'refuses AGENTSTATE_DURABILITY=%j with INVALID_INPUT, creating nothing',
    async (v) => {
      const dir = join(root, `bad-${v.replace(/\W/g, '_')}`);
      process.env.AGENTSTATE_DURABILITY = v;
      process.env.AGENTSTATE_WORKFLOW_DIR = dir;
      const err = await createWorld().then(
        () => null,
        (e: unknown) => e,
      );
      expect(isAgentStateError(err) && err.code).toBe('INVALID_INPUT');
      expect(String((err as Error).message)).toContain('AGENTSTATE_DURABILITY must be full or normal');
      expect(existsSync(dir)).toBe(false);
    },
  );

  it('opens with AGENTSTATE_DURABILITY=normal and records a run', async () => {
    process.env.AGENTSTATE_DURABILITY = 'normal';
    process.env.AGENTSTATE_WORKFLOW_DIR = join(root, 'normal');
    const world = await createWorld();
    try {
      const created = await world.events.create(null, {
        eventType: 'run_created',
        eventData: { deploymentId: 'd', workflowName: 'w|ü+1', input: new Uint8Array([0]) },
      } as never);
      expect((await world.runs.get(created.run!.runId)).status).toBe('pending');
    } finally {
      await world.close();
    }
  });

  it('refuses AGENTSTATE_WORKFLOW_CONCURRENCY that is not a whole number of 1 or more, creating nothing', async () => {
    const dir = join(root, 'conc');
    process.env.AGENTSTATE_WORKFLOW_CONCURRENCY = '0';
    process.env.AGENTSTATE_WORKFLOW_DIR = dir;
    const err = await createWorld().then(
      () => null,
      (e: unknown) => e,
    );
    expect(isAgentStateError(err) && err.code).toBe('INVALID_INPUT');
    expect(existsSync(dir)).toBe(false);
  });
});

describe('createWorld given a namespace the queue refuses', () => {
  it('refuses a namespace the SDK would refuse, at once and typed (the SDK checks it only when the queue starts)', async () => {
    const dir = join(root, 'ns');
    const err = await createWorld({ dir, namespace: '../ns\u0000' }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(isAgentStateError(err) && err.code).toBe('INVALID_INPUT');
    const again = await createWorld({ dir });
    await again.close();
  });

  it.runIf(schema !== null)('on PostgreSQL, leaves no connection of its pool open', async () => {
    const app = `agentstate-world-test-${process.pid}`;
    const err = await createWorld({
      url: PG_URL,
      schema: schema!,
      dir: join(root, 'pg-ns'),
      namespace: 'Not-Valid',
      open: { postgres: { applicationName: app } },
    }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(isAgentStateError(err) && err.code).toBe('INVALID_INPUT');
    const rows = await adminQuery<{ n: string }>(
      'SELECT count(*) AS n FROM pg_stat_activity WHERE application_name = $1',
      [app],
    );
    expect(Number(rows[0]!.n)).toBe(0);
  });
});
