// The SDK's suite against agentstate's World on PostgreSQL (AGENTSTATE_TEST_PG_URL, else the local server),
// in a schema of its own, dropped at the end.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestSuite } from '@workflow/world-testing';
import pg from 'pg';
import { afterAll } from 'vitest';
import { WORLD_MODULE } from './world.js';

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
