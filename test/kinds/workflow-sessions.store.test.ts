// Kind `workflow-sessions` through the store, on every backend: sessions are never overwritten or deleted
// (refused writes change nothing), operations are CAS commits, and the .copilot/state/<workflow>.json file
// round-trips.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RESUME_FIXTURE, resumeFixture } from '../../bench/resume-fixture.js';
import type { CommitInput, JsonObject } from '../../src/core/types.js';
import type { Instance } from '../../src/instance/instance.js';
import { type ResumeSummary, renderResume } from '../../src/kinds/workflow-sessions/operations.js';
import { checkGate, gateFile } from '../../src/kinds/workflow-sessions/rules.js';
import { runOperation } from '../../src/service/invoke.js';
import { targetFor } from '../../src/views/files.js';
import { exportView, importView } from '../../src/views/sync.js';
import { validateView } from '../../src/views/validate.js';
import { backendsForThisFile } from '../helpers/backends.js';
import { tempDir } from '../helpers/tmp.js';

const root = tempDir();
let n = 0;
let inst: Instance;
const T_START = Date.parse('2026-02-03T12:00:00.000Z');
let t = T_START;
const KIND = 'workflow-sessions';
const ID = 'deploy';

const backends = await backendsForThisFile();

const example = (): JsonObject =>
  JSON.parse(readFileSync(new URL('./examples/sessions/deploy.json', import.meta.url), 'utf8')) as JsonObject;
type Body = { sessions: Array<Record<string, unknown>>; activeSessionId: string | null } & JsonObject;
const clone = (v: JsonObject): Body => structuredClone(v) as Body;
const commit = (expected: number, body: JsonObject): CommitInput => ({
  kind: KIND,
  id: ID,
  expected_version: expected,
  body,
  actor: 'orchestrator',
  actor_kind: 'model',
  provenance: { model_id: 'model-a', run_id: 'run-1', step_id: 'sync', prompt_ref: 'skill/workflow-state' },
});

async function refused(fn: () => Promise<unknown>, code: string, rule: string): Promise<void> {
  const before = {
    version: (await inst.docs.find(KIND, ID))?.version ?? 0,
    head: (await inst.events.head())?.position ?? 0,
  };
  let err: { code?: string; details?: { rule?: string } } | undefined;
  try {
    await fn();
  } catch (e) {
    err = e as typeof err;
  }
  expect([err?.code, err?.details?.rule]).toEqual([code, rule]);
  expect({
    version: (await inst.docs.find(KIND, ID))?.version ?? 0,
    head: (await inst.events.head())?.position ?? 0,
  }).toEqual(before);
}

for (const backend of backends) {
  describe(`on ${backend.name}`, () => {
    beforeEach(async () => {
      n++;
      // Each test on its own instance, from the same moment.
      t = T_START;
      inst = await backend.open(undefined, { clock: () => t });
    });
    afterEach(async () => {
      await inst.close();
    });

    describe('workflow-sessions through the store', () => {
      it('refuses writes that delete or rewrite sessions, and writes nothing', async () => {
        await inst.docs.commit(commit(0, example()));
        const deleted = clone(example());
        deleted.sessions.splice(1, 1);
        await refused(
          () => inst.docs.commit(commit(1, deleted)),
          'VALIDATION_FAILED',
          'sessions-append-only',
        );
        const emptied = { ...clone(example()), sessions: [], activeSessionId: null };
        await refused(
          () => inst.docs.commit(commit(1, emptied)),
          'VALIDATION_FAILED',
          'sessions-append-only',
        );
        const rewritten = clone(example());
        rewritten.sessions[0]!.summary = 'a nicer story';
        await refused(
          () => inst.docs.commit(commit(1, rewritten)),
          'VALIDATION_FAILED',
          'closed-session-frozen',
        );
        const reopened = clone(example());
        reopened.sessions[1]!.status = 'active';
        await refused(() => inst.docs.commit(commit(1, reopened)), 'VALIDATION_FAILED', 'one-active-session');
        // The operations refuse the same way: completing with a delegation still in progress.
        await refused(
          () => inst.docs.apply({ kind: KIND, id: ID, operation: 'complete-session' }),
          'VALIDATION_FAILED',
          'session-complete-delegations',
        );
        expect((await inst.docs.history({ kind: KIND, id: ID })).entries).toHaveLength(1);
      });

      it('start-session creates the file; later sessions append and carry directives', async () => {
        const apply = (operation: string, args: Record<string, unknown> = {}) => {
          t += 60_000;
          return inst.docs.apply({ kind: KIND, id: 'release', operation, args, actor: 'orchestrator' });
        };
        await apply('start-session', { label: 'Cut 1.0', workflow: 'release' });
        await apply('add-directive', { text: 'Tag every release' });
        await apply('complete-session', { summary: 'tagged' });
        const r = await apply('start-session', { label: 'Cut 1.1' });
        expect(r.version).toBe(4);
        const sessions = r.body.sessions as Array<{
          id: string;
          directives: Array<{ id: string; carriedFrom?: string }>;
        }>;
        expect(sessions.map((s) => s.id)).toEqual(['session-1', 'session-2']);
        expect(sessions[1]!.directives).toMatchObject([{ id: 'dir-1', carriedFrom: 'session-1' }]);
        let err: { code?: string } | undefined;
        try {
          await apply('start-session', { label: 'Cut 1.2' });
        } catch (e) {
          err = e as typeof err;
        }
        expect(err?.code).toBe('INVALID_TRANSITION');
      });

      it('the file exports with its stamp, passes gate B against the store, and an import that drops a session is refused', async () => {
        const project = join(root, `p${n}`);
        await inst.docs.commit(commit(0, example()));
        const target = targetFor(KIND, ID, project);
        expect(target.path).toBe(join(project, '.copilot/state/deploy.json'));
        await exportView(inst, target);
        const text = readFileSync(target.path, 'utf8');
        expect(JSON.parse(text).$agentstate).toEqual({ kind: KIND, id: ID, version: 1 });
        const stored = await inst.docs.get({ kind: KIND, id: ID });
        const store = { deploy: { version: stored.version, body: stored.body } };
        expect(checkGate('B', [gateFile('.copilot/state/deploy.json', text)], { store }).ok).toBe(true);

        // A hand edit that deletes session-2 is refused on import; the store and the file stay as they were.
        const edited = JSON.parse(text) as Body;
        edited.sessions.splice(1, 1);
        writeFileSync(target.path, JSON.stringify(edited, null, 2));
        await refused(
          () => importView(inst, target, { actor: 'alice' }),
          'VALIDATION_FAILED',
          'sessions-append-only',
        );
        const gate = checkGate(
          'B',
          [gateFile('.copilot/state/deploy.json', readFileSync(target.path, 'utf8'))],
          {
            store,
          },
        );
        expect(gate.failures).toHaveLength(1);
        expect(gate.failures[0]).toMatch(
          /^\.copilot\/state\/deploy\.json: differs from version 1 in the store at \/sessions\/2, .*: import it \(or re-export to discard\)$/,
        );

        // An edit that records progress imports as version 2 and is re-exported.
        const progress = JSON.parse(text) as Body;
        (progress.sessions[2]!.todos as Array<{ status: string }>)[1]!.status = 'completed';
        mkdirSync(join(project, '.copilot/state'), { recursive: true });
        writeFileSync(target.path, JSON.stringify(progress, null, 2));
        t += 60_000;
        const r = await importView(inst, target, { actor: 'alice' });
        expect(r.version).toBe(2);
        const after = JSON.parse(readFileSync(target.path, 'utf8'));
        expect(after.$agentstate.version).toBe(2);
        const now = new Date(t).toISOString().replace('.000Z', 'Z');
        expect([after.updatedAt, after.sessions[2].updatedAt]).toEqual([now, now]);
      });
    });

    describe('workflow-sessions: a UTF-8 BOM is accepted, as in YAML files (issue 12, point 12)', () => {
      it('a file starting with a BOM validates, passes the gates and imports like the same file without one', async () => {
        const project = join(root, `p${n}`);
        mkdirSync(join(project, '.copilot/state'), { recursive: true });
        const target = targetFor(KIND, ID, project);
        const text = JSON.stringify(example(), null, 2);
        writeFileSync(target.path, `\uFEFF${text}`);
        expect(readFileSync(target.path).subarray(0, 3)).toEqual(Buffer.from([0xef, 0xbb, 0xbf]));
        expect(await validateView(target)).toMatchObject({ ok: true, version: null });
        const g = checkGate(
          'A',
          [gateFile('.copilot/state/deploy.json', readFileSync(target.path, 'utf8'))],
          {
            workflow: ID,
          },
        );
        expect(g).toMatchObject({ ok: true, failures: [] });
        const r = await importView(inst, target, { actor: 'alice' });
        expect(r.version).toBe(1);
        expect(r.body).toEqual((await inst.docs.get({ kind: KIND, id: ID })).body);
        expect(r.body.sessions).toEqual(example().sessions);
        // A syntax error after a BOM is reported at the file's own line and column, with no invisible character.
        writeFileSync(target.path, '\uFEFF{"workflow": }');
        const bad = await validateView(target);
        expect(bad.error?.message).toBe(
          'workflow-sessions file: line 1, column 14: expected a value, found "}"',
        );
        expect(bad.error?.message).not.toContain('\uFEFF');
      });
    });

    describe('workflow-sessions: resume carries decisions and the full todo list (issue 12, point 11)', () => {
      it('--json has every todo with its status and full title, and the decisions, workarounds first; the text stays lean', async () => {
        const body = resumeFixture('release') as JsonObject;
        await inst.docs.commit({ ...commit(0, body), id: 'release' });
        // No file on disk: resume reads the store.
        const r = (await runOperation(inst, 'resume_workflow', {
          workflow: 'release',
          project: join(root, `p${n}-none`),
        })) as ResumeSummary;
        const active = (
          body.sessions as Array<{ todos: unknown[]; decisions: Array<Record<string, unknown>> }>
        )[2]!;
        // The todo list manage_todo_list is rebuilt from: all of it, in order, statuses and titles as stored.
        expect(r.todos).toEqual(active.todos);
        expect(r.todos).toHaveLength(RESUME_FIXTURE.todos);
        expect(r.openTodos.map((t) => t.status).slice(0, 6)).toEqual([
          'in-progress',
          'in-progress',
          'in-progress',
          'in-progress',
          'in-progress',
          'not-started',
        ]);
        // Decisions: the standing workarounds first, each with what the correct solution is and when to revisit.
        const workarounds = active.decisions.filter((d) => d.workaround === true);
        expect(workarounds).toHaveLength(5);
        expect(r.decisions).toEqual([
          ...workarounds,
          ...active.decisions.filter((d) => d.workaround !== true),
        ]);
        expect(r.decisions[0]).toMatchObject({
          correct_solution: expect.any(String),
          revisit_when: expect.any(String),
          why_not_implemented: expect.any(String),
        });

        const text = renderResume(r);
        const lines = text.split('\n');
        expect(lines[1]).toMatch(/^todos: \[~\] 36 .* \| \[ \] 41 .*\+50 more open; 35 of 100 done$/);
        const wa = lines.filter((l) => l.startsWith('workaround: '));
        expect(wa).toHaveLength(5);
        expect(wa[0]).toBe(
          'workaround: Keep notifications behind a feature flag until the migration of step 4 is verif… → correct: Subscribe to the notifications change feed instead of polling it every 30 seconds; revisit: The broker is upgraded to 4.x (ticket OPS-1182)',
        );
        expect(lines.filter((l) => l.startsWith('decisions: '))).toHaveLength(1);
        expect(text).toContain('| +10 earlier');
        // Lean: under 1,500 tokens (chars / 4) for 3 sessions, 100 todos, 20 decisions and 30 lessons.
        expect(text.length / 4).toBeLessThan(1500);
      });
    });
  });
}
