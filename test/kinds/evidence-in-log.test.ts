// Issue 12, point 6, on every backend: evidence must exist. A fact that cites an event cites one in this
// instance's log — an event reference (event_refs) naming a position the log does not have is no evidence —
// and a fact citing a receipt cites one in the state. Refusals write nothing.
import { describe, expect, it } from 'vitest';
import type { CommitInput, JsonObject } from '../../src/core/types.js';
import type { Instance } from '../../src/instance/instance.js';
import { backendsForThisFile } from '../helpers/backends.js';

const backends = await backendsForThisFile();

const AT = '2026-01-01T00:00:00.000Z';
const RUN: JsonObject = {
  run_id: 'r1',
  agent: 'coder',
  status: 'running',
  intent: { text: 'fix the parser' },
  receipts: [{ id: 'rc1', type: 'tool', name: 'shell', status: 'error', at: AT }],
};

async function snapshot(inst: Instance) {
  const doc = await inst.docs.find('agent-run', 'r1');
  return {
    version: doc?.version ?? 0,
    hash: doc?.content_hash ?? null,
    head: (await inst.events.head())?.position ?? 0,
  };
}

async function refused(inst: Instance, input: CommitInput) {
  const before = await snapshot(inst);
  const err = await inst.docs.commit(input).then(
    () => null,
    (e: unknown) => e as { code: string; message: string; details: Record<string, unknown> },
  );
  expect(err, 'the commit must be refused').not.toBeNull();
  expect(await snapshot(inst)).toEqual(before);
  return err!;
}

for (const b of backends) {
  describe(`evidence exists on ${b.name}`, () => {
    it('point 6: an event position not in the log, or a receipt not in the state, is refused as evidence', async () => {
      const key = `ev-${Math.random().toString(36).slice(2)}`;
      const inst = await b.open(key);
      // Another instance (on PostgreSQL: the same tables) whose log is longer: its positions are not ours.
      const other = await b.open();
      try {
        await other.events.appendMany(Array.from({ length: 40 }, () => ({ type: 'note' })));
        const ci = await inst.events.append({ type: 'ci.failed', data: { run: 88 } });
        const body = structuredClone(RUN);
        body.event_refs = [{ position: ci.position, type: 'ci.failed' }];
        body.facts = [{ id: 'f1', statement: 'CI failed', evidence: [{ event: ci.position }] }];
        const v1 = await inst.docs.commit({
          kind: 'agent-run',
          id: 'r1',
          expected_version: 0,
          body,
          actor: 'coder',
        });
        const head = (await inst.events.head())!.position;

        const commit = (change: (b: JsonObject) => void): CommitInput => {
          const next = structuredClone(v1.body);
          change(next);
          return { kind: 'agent-run', id: 'r1', expected_version: 1, body: next, actor: 'coder' };
        };
        const refs = (n: JsonObject) => n.event_refs as JsonObject[];
        const facts = (n: JsonObject) => n.facts as JsonObject[];

        // A fact resting on an event reference to a position the log does not have (yet, or at all).
        for (const position of [head + 1, 999, 40]) {
          const err = await refused(
            inst,
            commit((n) => {
              refs(n).push({ position, type: 'deploy.ok' });
              facts(n).push({ id: 'f2', statement: 'deployed', evidence: [{ event: position }] });
            }),
          );
          expect(err).toMatchObject({
            code: 'VALIDATION_FAILED',
            details: { pointer: '/facts/1/evidence/0', rule: 'fact-needs-evidence', position },
          });
          expect(err.message).toContain(`fact f2 cites event ${position}, which is not in the event log`);
        }
        // The reference alone, or a receipt recording an event that never happened, is refused too.
        expect(
          await refused(
            inst,
            commit((n) => refs(n).push({ position: 999 })),
          ),
        ).toMatchObject({ details: { pointer: '/event_refs/1/position', rule: 'event-in-log' } });
        expect(
          await refused(
            inst,
            commit((n) =>
              (n.receipts as JsonObject[]).push({
                id: 'rc2',
                type: 'tool',
                name: 'deploy',
                status: 'ok',
                at: AT,
                event_position: 999,
              }),
            ),
          ),
        ).toMatchObject({ details: { pointer: '/receipts/1/event_position', rule: 'event-in-log' } });
        // A receipt id the state does not hold is no evidence either.
        expect(
          await refused(
            inst,
            commit((n) => facts(n).push({ id: 'f2', statement: 'x', evidence: [{ receipt: 'rc9' }] })),
          ),
        ).toMatchObject({
          code: 'VALIDATION_FAILED',
          details: { pointer: '/facts/1/evidence/0', rule: 'fact-needs-evidence' },
        });

        // Once the event is recorded, the same fact is accepted; facts citing earlier evidence stay valid.
        const deploy = await inst.events.append({ type: 'deploy.ok' });
        const ok = await inst.docs.commit(
          commit((n) => {
            refs(n).push({ position: deploy.position, type: 'deploy.ok' });
            facts(n).push({
              id: 'f2',
              statement: 'deployed',
              evidence: [{ event: deploy.position }, { receipt: 'rc1' }],
            });
          }),
        );
        expect(ok.version).toBe(2);
        expect((await inst.events.verify()).ok).toBe(true);
      } finally {
        await inst.close();
        await other.close();
      }
    });
  });
}
