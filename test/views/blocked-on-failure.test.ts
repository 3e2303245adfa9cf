// Issue 17, point 2: a pending item whose blocker ended failed or cancelled is reported as blocked by a
// failure — in the dashboard file, the retrospective and resume — with the hint to retry the blocker or
// cancel the item; once the blocker is retried the reports stop saying so.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { Instance } from '../../src/instance/instance.js';
import { regenerateDashboard } from '../../src/reports/dashboard.js';
import { retrospective } from '../../src/reports/retro.js';
import { BLOCKED_ON_FAILURE_HINT, resumeAgent } from '../../src/service/operations/resume.js';
import { backendsForThisFile } from '../helpers/backends.js';

const backends = await backendsForThisFile();

/** The Markdown section under `## <title…>`, up to the next one. */
function section(md: string, title: string): string {
  const start = md.indexOf(`## ${title}`);
  if (start < 0) return '';
  const next = md.indexOf('\n## ', start + 3);
  return md.slice(start, next < 0 ? undefined : next);
}

async function failedChain(inst: Instance) {
  const a = await inst.work.enqueue({ title: 'fetch data' });
  const b = await inst.work.enqueue({ title: 'train model', blocked_by: [a.id] });
  const c = await inst.work.enqueue({ title: 'publish', blocked_by: [b.id] });
  const held = await inst.work.claim({ worker: 'w' });
  await inst.work.resolve({ id: held!.id, status: 'failed', error: 'source gone', worker: 'w' });
  return { a, b, c };
}

for (const be of backends) {
  describe(`blocked on a failure, reported (${be.name})`, () => {
    it('dashboard, retro and resume name the stuck items and the failed blocker, with the hint', async () => {
      const inst = await be.open();
      try {
        const { a, b, c } = await failedChain(inst);
        const dash = readFileSync((await regenerateDashboard(inst)).path, 'utf8');
        const stuck = section(dash, 'Blocked by a failure');
        expect(stuck).toContain('## Blocked by a failure (2)');
        expect(stuck).toContain(`| ${b.id} | train model | ${a.id} |`);
        expect(stuck).toContain(`| ${c.id} | publish | ${a.id} |`);
        expect(stuck).toContain('agentstate retry <id>');
        // Not also shown as ordinary blocked work.
        expect(section(dash, 'Blocked or scheduled')).not.toContain(b.id);

        const retro = await retrospective(inst);
        expect(retro.summary.blocked_on_failure).toBe(2);
        expect(section(retro.markdown, 'Blocked by a failure')).toContain(
          `| ${b.id} | train model | ${a.id} |`,
        );

        const r = await resumeAgent(inst, {});
        expect(r.blocked_on_failure).toEqual([
          { id: b.id, title: 'train model', failed: [a.id] },
          { id: c.id, title: 'publish', failed: [a.id] },
        ]);
        expect(r.hint).toBe(BLOCKED_ON_FAILURE_HINT);

        await inst.work.retry({ id: a.id });
        const after = readFileSync((await regenerateDashboard(inst)).path, 'utf8');
        expect(section(after, 'Blocked by a failure')).toContain('## Blocked by a failure (0)');
        expect(section(after, 'Blocked or scheduled')).toContain(b.id);
        const r2 = await resumeAgent(inst, {});
        expect(r2.blocked_on_failure).toBeUndefined();
        expect(r2.hint).toBeUndefined();
        expect((await retrospective(inst)).summary.blocked_on_failure).toBe(0);
      } finally {
        await inst.close();
      }
    });
  });
}
