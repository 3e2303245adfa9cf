// The SDK's suite (@workflow/world-testing 5.0.0-beta.35: addition, idempotency, hooks, null bytes,
// retriable and fatal errors, inline execution, lineage) against agentstate's World on embedded SQLite, one
// fresh instance folder for the whole file (the SDK's servers inherit it through the environment).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestSuite } from '@workflow/world-testing';
import { describe, expect, it } from 'vitest';
import { verifyWorldInstance, WORLD_MODULE } from './world.js';

process.env.AGENTSTATE_WORKFLOW_DIR = join(mkdtempSync(join(tmpdir(), 'agentstate-wf-sqlite-')), 'world');
delete process.env.AGENTSTATE_WORKFLOW_URL;
createTestSuite(WORLD_MODULE);

describe('after the suite', () => {
  it('verify finds every run, step, hook and wait the suite left in step with the hash chain', async () => {
    const result = await verifyWorldInstance();
    expect(result.problems).toEqual([]);
    expect(result.ok).toBe(true);
    expect(result.checked.workflow_runs).toBeGreaterThan(10);
  });
});
