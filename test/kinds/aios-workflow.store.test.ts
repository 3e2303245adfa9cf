// Kind `aios-workflow` through the store, on every backend: refused writes change nothing, operations are CAS
// commits, and the .aios/<instance>-state.yaml file round-trips through export and import keeping its
// comments.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CommitInput, JsonObject } from '../../src/core/types.js';
import type { Instance } from '../../src/instance/instance.js';
import { aiosWorkflowKind } from '../../src/kinds/aios-workflow/kind.js';
import { targetFor } from '../../src/views/files.js';
import { exportView, importView } from '../../src/views/sync.js';
import { validateView } from '../../src/views/validate.js';
import { backendsForThisFile } from '../helpers/backends.js';
import { tempDir } from '../helpers/tmp.js';

const root = tempDir();
let n = 0;
let inst: Instance;
const T_START = Date.parse('2026-02-01T10:00:00.000Z');
let t = T_START;
const ID = 'greenfield-service-20260131-a1b2c3';
const KIND = 'aios-workflow';

const backends = await backendsForThisFile();

const exampleText = () =>
  readFileSync(
    new URL('./examples/aios/greenfield-service-20260131-a1b2c3-state.yaml', import.meta.url),
    'utf8',
  );
const seed = (): JsonObject => aiosWorkflowKind.file!.parse(exampleText()).body;
const clone = <T>(v: T): T => structuredClone(v);
const commit = (expected: number, body: JsonObject): CommitInput => ({
  kind: KIND,
  id: ID,
  expected_version: expected,
  body,
  actor: 'pm',
  actor_kind: 'tool',
});

async function refusedWithoutWrite(input: CommitInput, code: string, rule: string): Promise<void> {
  const before = {
    version: (await inst.docs.find(input.kind, input.id))?.version ?? 0,
    head: (await inst.events.head())?.position ?? 0,
  };
  let err: { code?: string; details?: { rule?: string } } | undefined;
  try {
    await inst.docs.commit(input);
  } catch (e) {
    err = e as typeof err;
  }
  expect([err?.code, err?.details?.rule]).toEqual([code, rule]);
  expect({
    version: (await inst.docs.find(input.kind, input.id))?.version ?? 0,
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

    describe('aios-workflow through the store', () => {
      it('the seed example commits; refused writes leave the document, history and log untouched', async () => {
        expect((await inst.docs.commit(commit(0, seed()))).version).toBe(1);
        const skipped = clone(seed()) as { steps: Array<Record<string, unknown>> } & JsonObject;
        skipped.steps[1]!.status = 'skipped';
        await refusedWithoutWrite(commit(1, skipped), 'VALIDATION_FAILED', 'skip-only-optional');
        const reopened = clone(seed()) as { steps: Array<Record<string, unknown>> } & JsonObject;
        reopened.steps[0]!.status = 'in_progress';
        await refusedWithoutWrite(commit(1, reopened), 'INVALID_TRANSITION', 'step-transition');
        const rewritten = clone(seed()) as { decisions: Array<Record<string, unknown>> } & JsonObject;
        rewritten.decisions[0]!.decision = 'Did brainstorm after all';
        await refusedWithoutWrite(commit(1, rewritten), 'VALIDATION_FAILED', 'decisions-append-only');
        await refusedWithoutWrite(
          commit(1, { ...seed(), status: 'completed' }),
          'VALIDATION_FAILED',
          'workflow-completed-steps',
        );
        expect((await inst.docs.history({ kind: KIND, id: ID })).entries).toHaveLength(1);
      });

      it('operations run as CAS commits; the store keeps updated_at current', async () => {
        await inst.docs.commit(commit(0, seed()));
        t += 3_600_000;
        const r = await inst.docs.apply({
          kind: KIND,
          id: ID,
          operation: 'complete-step',
          args: { artifacts: ['prd.md'] },
        });
        expect(r.version).toBe(2);
        expect(r.body).toMatchObject({ status: 'completed', updated_at: '2026-02-01T11:00:00Z' });
        let err: { code?: string } | undefined;
        try {
          await inst.docs.apply({ kind: KIND, id: ID, operation: 'start-step' });
        } catch (e) {
          err = e as typeof err;
        }
        expect(err?.code).toBe('INVALID_TRANSITION');
        expect((await inst.docs.get({ kind: KIND, id: ID })).version).toBe(2);
        // A plain commit that forgets updated_at gets the time of the write.
        const body = clone(r.body);
        body.current_phase = 'done';
        t += 60_000;
        expect((await inst.docs.commit(commit(2, body))).body.updated_at).toBe('2026-02-01T11:01:00Z');
      });

      it('export writes the stamped YAML; an edited file imports as a commit and keeps its comments', async () => {
        const project = join(root, `p${n}`);
        await inst.docs.commit(commit(0, seed()));
        const target = targetFor(KIND, ID, project);
        expect(target.path).toBe(join(project, `.aios/${ID}-state.yaml`));
        // The file exists with the seed's comments: the export keeps them and adds the stamp.
        mkdirSync(join(project, '.aios'), { recursive: true });
        writeFileSync(
          target.path,
          exampleText().replace('status: active\n', 'status: active # set by the PM\n'),
        );
        await exportView(inst, target);
        const exported = readFileSync(target.path, 'utf8');
        expect(exported.split('\n')[0]).toBe(`# agentstate: kind=aios-workflow id=${ID} version=1`);
        expect(exported).toContain('status: active # set by the PM');
        // A hand edit: register the PRD as created.
        writeFileSync(
          target.path,
          exported.replace(
            'path: docs/prd.md\n    status: pending',
            'path: docs/prd.md\n    status: created',
          ),
        );
        t += 60_000;
        const r = await importView(inst, target, { actor: 'pm' });
        expect(r.version).toBe(2);
        const after = readFileSync(target.path, 'utf8');
        expect(after.split('\n')[0]).toBe(`# agentstate: kind=aios-workflow id=${ID} version=2`);
        expect(after).toContain('status: active # set by the PM');
        expect(after).toContain('# Example state file of the AIOS workflow state schema 1.0.0');
        expect(after).toContain(`updated_at: "${new Date(t).toISOString().replace('.000Z', 'Z')}"`);
      });
    });

    /** The store's state: the document's version (0: none) and the log's head. */
    async function state() {
      return {
        version: (await inst.docs.find(KIND, ID))?.version ?? 0,
        head: (await inst.events.head())?.position ?? 0,
      };
    }

    describe('aios-workflow: the file name and the body agree (issue 12, point 9)', () => {
      it('validate and import refuse .aios/<X>-state.yaml holding instance_id <Y>, and write nothing', async () => {
        const project = join(root, `p${n}`);
        mkdirSync(join(project, '.aios'), { recursive: true });
        const other = 'greenfield-service-20260131-ffffff';
        const target = targetFor(KIND, other, project);
        // The seed's example (instance_id …-a1b2c3) under another instance's name.
        writeFileSync(target.path, exampleText());
        const v = await validateView(target);
        expect(v).toMatchObject({
          ok: false,
          error: { code: 'VALIDATION_FAILED', pointer: '/instance_id', rule: 'file-name-matches-id' },
        });
        expect(v.error?.message).toContain(`${ID}-state.yaml`);
        const before = await state();
        const err = (await importView(inst, target).catch((e: unknown) => e)) as {
          code?: string;
          details?: Record<string, unknown>;
        };
        expect(err.code).toBe('VALIDATION_FAILED');
        expect(err.details).toMatchObject({ rule: 'file-name-matches-id', expected: other, actual: ID });
        expect(await inst.docs.find(KIND, other)).toBeNull();
        expect(await state()).toEqual(before);
        // Under its own name the same text validates and imports.
        const own = targetFor(KIND, ID, project);
        writeFileSync(own.path, exampleText());
        expect((await validateView(own)).ok).toBe(true);
        expect((await importView(inst, own)).version).toBe(1);
      });
    });

    describe('aios-workflow: YAML tags are refused as in STATE.md (issue 12, point 10)', () => {
      const tagged = (text: string) =>
        text.replace(
          'workflow_name: Greenfield Service/API Development',
          'workflow_name: !!python/object:os.system "Greenfield Service/API Development"',
        );

      it('validate and import refuse a tagged value naming its line, and nothing is written', async () => {
        const project = join(root, `p${n}`);
        mkdirSync(join(project, '.aios'), { recursive: true });
        const target = targetFor(KIND, ID, project);
        const text = tagged(exampleText());
        expect(text).not.toBe(exampleText());
        for (const tag of ['!!python/object:os.system', '!local', '!!binary']) {
          writeFileSync(target.path, text.replace('!!python/object:os.system', tag));
          const v = await validateView(target);
          expect(v.error, tag).toMatchObject({ code: 'INVALID_INPUT' });
          expect(v.error?.message).toMatch(/line \d+, column \d+: Unresolved tag/);
          const before = await state();
          const err = (await importView(inst, target).catch((e: unknown) => e)) as { code?: string };
          expect(err.code, tag).toBe('INVALID_INPUT');
          expect(await state()).toEqual(before);
        }
      });

      it('an export over a tagged file writes no tag: the file a YAML safe_load reader gets is plain data', async () => {
        const project = join(root, `p${n}`);
        mkdirSync(join(project, '.aios'), { recursive: true });
        const target = targetFor(KIND, ID, project);
        await inst.docs.commit(commit(0, seed()));
        await exportView(inst, target);
        // Someone tags a value in the exported file; the store moves on; the next export replaces the file.
        writeFileSync(target.path, tagged(readFileSync(target.path, 'utf8')));
        t += 60_000;
        await inst.docs.apply({
          kind: KIND,
          id: ID,
          operation: 'log-decision',
          args: { decision: 'ship it' },
        });
        await exportView(inst, target);
        const out = readFileSync(target.path, 'utf8');
        expect(out).not.toContain('!!');
        expect(out).toContain('version=2');
        expect(aiosWorkflowKind.file!.parse(out).body.workflow_name).toBe(
          'Greenfield Service/API Development',
        );
      });
    });
  });
}
