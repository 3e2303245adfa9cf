// Kind `grid-mission` through the store, on every backend: the role comes with the commit, a refused write
// changes nothing (no version, no event), updated_at is the store's clock, and status changes are events.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { contentHash } from '../../src/core/json.js';
import type { CommitInput, JsonObject } from '../../src/core/types.js';
import type { Instance } from '../../src/instance/instance.js';
import { gridMissionKind } from '../../src/kinds/grid-mission/kind.js';
import { targetFor } from '../../src/views/files.js';
import { importView } from '../../src/views/sync.js';
import { validateView } from '../../src/views/validate.js';
import { backendsForThisFile } from '../helpers/backends.js';
import { tempDir } from '../helpers/tmp.js';

let inst: Instance;
const T_START = Date.parse('2026-01-24T17:00:00.000Z');
let t = T_START;

const backends = await backendsForThisFile();
const projects = tempDir();
let projectSeq = 0;

const seed = (): JsonObject =>
  JSON.parse(readFileSync(new URL('./examples/grid/seed.json', import.meta.url), 'utf8')) as JsonObject;
const clone = <T>(v: T): T => structuredClone(v);

const write = (expected: number, body: JsonObject, extra: Partial<CommitInput> = {}): CommitInput => ({
  kind: 'grid-mission',
  id: 'mission',
  expected_version: expected,
  body,
  actor: 'executor-003',
  actor_kind: 'tool',
  ...extra,
});

async function snapshot() {
  const doc = await inst.docs.find('grid-mission', 'mission');
  return {
    version: doc?.version ?? 0,
    body: doc?.body ?? null,
    head: (await inst.events.head())?.position ?? 0,
  };
}

/** Asserts the commit is refused with `code` and `rule`, and that nothing at all was written. */
async function refusedWithoutWrite(input: CommitInput, code: string, rule: string, pointer?: string) {
  const before = await snapshot();
  let err: { code?: string; details?: { rule?: string; pointer?: string; role?: unknown } } | undefined;
  try {
    await inst.docs.commit(input);
  } catch (e) {
    err = e as typeof err;
  }
  expect(err?.code, `expected ${code}`).toBe(code);
  expect(err?.details?.rule).toBe(rule);
  if (pointer !== undefined) expect(err?.details?.pointer).toBe(pointer);
  expect(await snapshot()).toEqual(before);
  return err?.details;
}

async function created(): Promise<JsonObject> {
  await inst.docs.commit(write(0, seed(), { actor: 'mc', role: 'mc' }));
  return (await inst.docs.get({ kind: 'grid-mission', id: 'mission' })).body;
}

for (const backend of backends) {
  describe(`on ${backend.name}`, () => {
    beforeEach(async () => {
      // Each test on its own instance, from the same moment.
      t = T_START;
      inst = await backend.open(undefined, { clock: () => t });
    });
    afterEach(async () => {
      await inst.close();
    });

    describe('grid-mission through the store', () => {
      it('MC creates the mission; the stored body has updated_at from the store clock', async () => {
        const body = await created();
        expect(body).toEqual({ ...seed(), updated_at: '2026-01-24T17:00:00Z' });
      });

      it('an executor moving the position is accepted; changing the status is refused and writes nothing', async () => {
        const v1 = await created();
        t += 5_000;
        const moved = clone(v1);
        (moved.position as JsonObject).thread = 3;
        const r = await inst.docs.commit(write(1, moved, { role: 'executor' }));
        expect(r.version).toBe(2);
        expect(r.body.updated_at).toBe('2026-01-24T17:00:05Z');

        const v2 = (await inst.docs.get({ kind: 'grid-mission', id: 'mission' })).body;
        const details = await refusedWithoutWrite(
          write(2, { ...clone(v2), status: 'failed' }, { role: 'executor' }),
          'PERMISSION_DENIED',
          'field-permission',
          '/status',
        );
        expect(details?.role).toBe('executor');
      });

      it('a scout writes nothing; an agent without a role writes nothing; an unknown role writes nothing', async () => {
        const v1 = await created();
        const warned = clone(v1);
        (warned.warnings as JsonObject[]).push({
          level: 'info',
          message: 'found a TODO',
          source: 'scout-001',
          timestamp: '2026-01-24T16:59:00Z',
        });
        await refusedWithoutWrite(
          write(1, warned, { role: 'scout' }),
          'PERMISSION_DENIED',
          'field-permission',
          '/warnings',
        );
        await refusedWithoutWrite(write(1, warned), 'PERMISSION_DENIED', 'role-required', '/');
        await refusedWithoutWrite(
          write(1, warned, { role: 'overlord' }),
          'PERMISSION_DENIED',
          'unknown-role',
        );
        // The same write as a recognizer is fine.
        expect((await inst.docs.commit(write(1, warned, { role: 'recognizer' }))).version).toBe(2);
      });

      it('a human without a role writes as MC (e.g. importing a hand-edited STATE.md)', async () => {
        const v1 = await created();
        const r = await inst.docs.commit(
          write(1, { ...clone(v1), status: 'failed' }, { actor: 'alice', actor_kind: 'human' }),
        );
        expect(r.body.status).toBe('failed');
      });

      it('transitions, logical and format rules are refused through the store and write nothing', async () => {
        const v1 = await created();
        await refusedWithoutWrite(
          write(1, { ...clone(v1), status: 'planning' }, { role: 'mc' }),
          'INVALID_TRANSITION',
          'status-transition',
          '/status',
        );
        const skipped = clone(v1);
        (skipped.phases as JsonObject).current = 3;
        (skipped.position as JsonObject).phase = 3;
        (skipped.phases as JsonObject).completed = ['01-foundation', '02-core'];
        await refusedWithoutWrite(
          write(1, skipped, { role: 'mc' }),
          'INVALID_TRANSITION',
          'phase-transition',
        );
        const over = clone(v1);
        (over.position as JsonObject).thread = 5;
        await refusedWithoutWrite(
          write(1, over, { role: 'executor' }),
          'VALIDATION_FAILED',
          'logic.thread-total',
        );
        await refusedWithoutWrite(
          write(1, { ...clone(v1), session_id: 'session-1' }, { role: 'mc' }),
          'VALIDATION_FAILED',
          'format.session-id',
          '/session_id',
        );
      });

      it('operations run through the store as commits; a status change is an event', async () => {
        await created();
        const op = (name: string) => gridMissionKind.operations!.find((o) => o.name === name)!;
        const v1 = await inst.docs.get({ kind: 'grid-mission', id: 'mission' });
        const next = op('set-status').apply(
          v1.body,
          { status: 'blocked', checkpoint_file: '.grid/CHECKPOINT.md' },
          { now: t, actor: 'mc', role: 'mc' },
        );
        await inst.docs.commit(write(1, next, { actor: 'mc', role: 'mc' }));
        const events = await inst.events.read({ type: 'grid_status_changed' });
        expect(events).toHaveLength(1);
        expect(events[0]!.data).toMatchObject({ from: 'in_progress', to: 'blocked', role: 'mc' });
      });

      it('the file round trip: export, edit by hand, import against the exported version', async () => {
        await created();
        const v1 = await inst.docs.get({ kind: 'grid-mission', id: 'mission' });
        const file = gridMissionKind.file!;
        const text = file.render(
          v1.body,
          { kind: 'grid-mission', id: 'mission', version: v1.version },
          {
            now: t,
            recentEvents: [],
          },
        );
        const edited = text.replace('energy: 8500', 'energy: 9001');
        const { body, stamp } = file.parse(edited);
        expect(stamp).toEqual({ kind: 'grid-mission', id: 'mission', version: 1 });
        const r = await inst.docs.commit(
          write(stamp!.version, body, { actor: 'alice', actor_kind: 'human' }),
        );
        expect(r.body).toMatchObject({ energy: 9001 });
        expect(r.body.markdown_body).toBeUndefined();
        // The same edit by an executor is refused: energy is MC's.
        await refusedWithoutWrite(
          write(2, { ...clone(r.body), energy: 1 }, { role: 'executor' }),
          'PERMISSION_DENIED',
          'field-permission',
          '/energy',
        );
      });
    });

    describe('grid-mission: updated_at as written (seed §3.3, issue 12 point 7)', () => {
      it('validate and import refuse an updated_at that is no real time or is before created_at, before the write time is stamped', async () => {
        const project = join(projects, `p${++projectSeq}`);
        mkdirSync(join(project, '.grid'), { recursive: true });
        const target = targetFor('grid-mission', 'mission', project);
        const fileWith = (updated_at: string) => {
          const text = gridMissionKind.file!.render(
            { ...seed(), updated_at },
            { kind: 'grid-mission', id: 'mission', version: 1 },
            { now: t, recentEvents: [] },
          );
          // An unstamped file: import creates the document.
          writeFileSync(target.path, text.replace(/^# agentstate:.*\n/m, ''));
        };
        for (const [updated, rule] of [
          ['2026-01-24T13:59:59Z', 'logic.chronological-order'],
          ['2026-02-30T25:61:00Z', 'logic.timestamp-valid'],
        ] as const) {
          fileWith(updated);
          const v = await validateView(target);
          expect(v, updated).toMatchObject({
            ok: false,
            error: { code: 'VALIDATION_FAILED', pointer: '/updated_at', rule },
          });
          const before = await snapshot();
          const err = await importView(inst, target).catch((e: unknown) => e);
          expect((err as { details?: { rule?: string } }).details?.rule, updated).toBe(rule);
          expect(await snapshot()).toEqual(before);
        }
        // The same file with a time after created_at is fine, and the store stamps its own time over it.
        fileWith('2026-01-24T16:45:32Z');
        expect((await validateView(target)).ok).toBe(true);
        const r = await importView(inst, target);
        expect(r.body.updated_at).toBe('2026-01-24T17:00:00Z');
      });
    });

    describe('grid-mission: the event of every write (seed §5.1 step 7, issue 12 point 8)', () => {
      it('records the agent, its role and the fields it changed, for every role and on creation', async () => {
        await created();
        const v1 = await inst.docs.get({ kind: 'grid-mission', id: 'mission' });
        t += 1000;
        const moved = clone(v1.body) as JsonObject & {
          position: { thread: number };
          resume: { last_commit: string };
          agents: { active: Array<{ last_heartbeat: string }> };
        };
        moved.position.thread = 3;
        moved.resume.last_commit = 'a1b2c3d';
        moved.agents.active[0]!.last_heartbeat = '2026-01-24T16:59:00Z';
        await inst.docs.commit(write(1, moved, { role: 'executor' }));
        t += 1000;
        const warned = clone((await inst.docs.get({ kind: 'grid-mission', id: 'mission' })).body);
        (warned.warnings as JsonObject[]).push({
          level: 'warning',
          message: 'flaky test',
          source: 'recognizer-001',
          timestamp: '2026-01-24T17:00:01Z',
        });
        await inst.docs.commit(write(2, warned, { actor: 'recognizer-001', role: 'Recognizer' }));

        const events = await inst.events.read({
          stream: 'doc:grid-mission/mission',
          type: 'grid_state_updated',
        });
        expect(events.map((e) => e.data)).toEqual([
          expect.objectContaining({
            mission_id: 'mission-20260124T140000Z-saas-dashboard',
            version: 1,
            agent: 'mc',
            agent_type: 'mc',
            timestamp: '2026-01-24T17:00:00Z',
          }),
          {
            mission_id: 'mission-20260124T140000Z-saas-dashboard',
            version: 2,
            agent: 'executor-003',
            agent_type: 'executor',
            fields: ['position.thread', 'agents.active', 'resume.last_commit'],
            timestamp: '2026-01-24T17:00:01Z',
          },
          {
            mission_id: 'mission-20260124T140000Z-saas-dashboard',
            version: 3,
            agent: 'recognizer-001',
            agent_type: 'recognizer',
            fields: ['warnings'],
            timestamp: '2026-01-24T17:00:02Z',
          },
        ]);
        // The creation names every field it wrote (updated_at is the timestamp, not a field).
        const created1 = events[0]!.data as { fields: string[] };
        expect(created1.fields).toEqual(
          expect.arrayContaining(['status', 'position.phase', 'agents.active']),
        );
        expect(created1.fields).not.toContain('updated_at');
        expect(events.every((e) => e.actor === (e.data as { agent: string }).agent)).toBe(true);
        // A refused write appends no event.
        const head = (await inst.events.head())?.position;
        await refusedWithoutWrite(
          write(3, { ...clone(warned), status: 'failed' }, { role: 'executor' }),
          'PERMISSION_DENIED',
          'field-permission',
        );
        expect((await inst.events.head())?.position).toBe(head);
      });
    });

    describe('grid-mission: the content hash covers what the rules filled in', () => {
      it('stores the hash of the stored body, so committing it again changes nothing', async () => {
        const body = seed();
        const first = await inst.docs.commit(write(0, body, { actor_kind: 'human' }));
        const stored = await inst.docs.get({ kind: 'grid-mission', id: 'mission' });
        // The rules set updated_at to the store's clock; the hash is of the body as stored, not as sent.
        expect(stored.body.updated_at).not.toBe(body.updated_at);
        expect(stored.content_hash).toBe(contentHash(stored.body));
        expect(first.content_hash).toBe(stored.content_hash);
        const again = await inst.docs.commit(write(1, clone(stored.body), { actor_kind: 'human' }));
        expect(again).toMatchObject({ changed: false, version: 1 });
      });
    });
  });
}
