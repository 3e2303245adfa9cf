// The hooks' additionalContext stays bounded at size (issue 40): SessionStart (and a sub-agent's start) on the
// issue's instance of 1,000 items (300 held, 3 decisions, a 400 KB document) and on one of 10,000 items in 100
// batch events is within CONTEXT_TOKENS, as the host counts it.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CONTEXT_TOKENS, estimateTokens } from '../../src/hosts/hooks/context.js';
import { runHook } from '../../src/hosts/hooks/run.js';
import { openInstance } from '../../src/instance/instance.js';
import { DEFAULT_SHAPE, fillBigInstance, LARGE_SHAPE } from '../helpers/big-instance.js';
import { tempDir } from '../helpers/tmp.js';

describe('hook context at size', () => {
  for (const [name, shape] of [
    ['1,000 items', DEFAULT_SHAPE],
    ['10,000 items in 100 batches', LARGE_SHAPE],
  ] as const) {
    it(`SessionStart and SubagentStart on ${name}`, async () => {
      const inst = await openInstance({ dir: join(tempDir(), 'inst') });
      try {
        await fillBigInstance(inst, shape);
        const start = await runHook(inst, {
          event: 'session-start',
          format: 'claude-code',
          session: '3f9a1c2d-0000-4000-8000-000000000001',
          source: 'compact',
        });
        expect(start.context!.length).toBeGreaterThan(0);
        expect(estimateTokens(start.context!), start.context).toBeLessThanOrEqual(CONTEXT_TOKENS);
        const sub = await runHook(inst, {
          event: 'subagent-start',
          format: 'claude-code',
          session: '3f9a1c2d-0000-4000-8000-000000000001',
          agent: { id: 'a1b2c3d4e5', type: 'general-purpose' },
        });
        if (sub.context !== undefined) {
          expect(estimateTokens(sub.context), sub.context).toBeLessThanOrEqual(CONTEXT_TOKENS);
        }
      } finally {
        await inst.close();
      }
    }, 120_000);
  }
});
