// The SDK's suite against agentstate's World on PostgreSQL (AGENTSTATE_TEST_PG_URL, else the local server),
// in a schema of its own, dropped at the end.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestSuite } from '@workflow/world-testing';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { verifyWorldInstance, WORLD_MODULE } from './world.js';

const url = process.env.AGENTSTATE_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const schema = `agentstate_wf_suite_${process.pid}`;
process.env.AGENTSTATE_WORKFLOW_URL = url;
process.env.AGENTSTATE_WORKFLOW_SCHEMA = schema;
process.env.AGENTSTATE_WORKFLOW_DIR = join(mkdtempSync(join(tmpdir(), 'agentstate-wf-pg-')), 'world');

afterAll(async () => {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await client.end();
});

createTestSuite(WORLD_MODULE);

describe('after the suite', () => {
  it('verify finds every run, step, hook and wait the suite left in step with the hash chain', async () => {
    const result = await verifyWorldInstance();
    expect(result.problems).toEqual([]);
    expect(result.ok).toBe(true);
    expect(result.checked.workflow_runs).toBeGreaterThan(10);
  });
});
