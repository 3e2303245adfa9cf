// The document both document benchmarks commit (SQLite D1–D4, PostgreSQL P1–P3): a ~270 B body, its
// per-commit merge patch, RFC 7396 as a hand-written app applies it, and the agentstate committer.
// Imports nothing heavy, so the PostgreSQL child bundle does not pull in SQLite.
import type { JsonObject } from '../src/index.js';
import type { Instance } from './lib.js';

export const DOC_KIND = 'json';

/** A realistic small document (~270 bytes of JSON). */
export function docBody(i = 0): JsonObject {
  return {
    title: 'Migrate the billing service to the new queue',
    status: 'in_progress',
    owner: 'planner',
    tags: ['infra', 'billing', 'q3'],
    counter: i,
    meta: { step: i, model: 'model-a', run: 'run-0001' },
    notes: 'Drain the old consumers first; keep the dead-letter queue.',
  };
}

/** The change applied by commit i. */
export function docPatch(i: number): JsonObject {
  return { counter: i, meta: { step: i } };
}

/** RFC 7396 merge patch (null removes a key), as a hand-written app would do it. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (typeof patch !== 'object' || patch === null || Array.isArray(patch)) return patch;
  const out: Record<string, unknown> =
    typeof target === 'object' && target !== null && !Array.isArray(target)
      ? { ...(target as Record<string, unknown>) }
      : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k] ?? null, v);
  }
  return out;
}

/**
 * Creates document `id` in `inst`, then `once(i)` commits `docPatch(i + 1)` against the version it
 * holds. `close` leaves the instance open (its owner closes it).
 */
export async function agentstateCommitter(
  inst: Instance,
  id: string,
): Promise<{ once(i: number): Promise<void>; close(): Promise<void> }> {
  let version = (
    await inst.docs.commit({
      kind: DOC_KIND,
      id,
      expected_version: 0,
      body: docBody(),
      actor: 'bench',
      actor_kind: 'tool',
    })
  ).version;
  return {
    async once(i) {
      const r = await inst.docs.commit({
        kind: DOC_KIND,
        id,
        expected_version: version,
        merge_patch: docPatch(i + 1),
        actor: 'bench',
        actor_kind: 'tool',
      });
      version = r.version;
    },
    async close() {},
  };
}
