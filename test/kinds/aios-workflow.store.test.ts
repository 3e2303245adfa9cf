// Kind `aios-workflow` through the store, on every backend: refused writes change nothing, operations are CAS
// commits, and the .aios/<instance>-state.yaml file round-trips through export and import keeping its
// comments.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CommitInput, JsonObject } from '../../src/core/types.js';
import type { Instance } from '../../src/instance/instance.js';
import { aiosWorkflowKind } from '../../src/kinds/aios-workflow/kind.js';
import { targetFor } from '../../src/views/files.js';
import { exportView, importView } from '../../src/views/sync.js';
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
        const { mkdirSync } = await import('node:fs');
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
  });
}
