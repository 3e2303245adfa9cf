// Test helpers for kinds: a hand-made CommitContext, example documents, and error capture.
import { readFileSync } from 'node:fs';
import type { CommitContext, DocSnapshot } from '../../src/core/kind.js';
import type { JsonObject } from '../../src/core/types.js';
import type { AgentStateError } from '../../src/errors.js';

export const NOW = Date.parse('2025-01-01T12:00:00Z');

/** Loads test/kinds/examples/<name>.json (a fresh copy each time). */
export function example(name: string): JsonObject {
  return JSON.parse(readFileSync(new URL(`./examples/${name}.json`, import.meta.url), 'utf8')) as JsonObject;
}

export function clone<T>(v: T): T {
  return structuredClone(v);
}

/** The head of the event log `makeCtx` pretends there is: positions 1 … LOG_HEAD exist. */
export const LOG_HEAD = 100;

/**
 * A CommitContext for `kind`/`id`; `docs` answers ctx.read by `kind/id`, and `head` is the last position of
 * the event log ctx.missingEvents sees (default LOG_HEAD).
 */
export function makeCtx(
  over: Partial<CommitContext> & { docs?: Record<string, JsonObject>; head?: number } = {},
): CommitContext {
  const { docs = {}, head = LOG_HEAD, ...rest } = over;
  return {
    kind: 'agent-run',
    id: 'doc-1',
    fromVersion: 1,
    toVersion: 2,
    actor: 'coder',
    actor_kind: 'tool',
    role: null,
    provenance: null,
    override: null,
    reason: null,
    now: NOW,
    async read(kind: string, id: string): Promise<DocSnapshot | null> {
      const body = docs[`${kind}/${id}`];
      return body ? { kind, id, version: 3, body: clone(body) } : null;
    },
    async missingEvents(positions: readonly number[]): Promise<number[]> {
      return positions.filter((p) => p < 1 || p > head);
    },
    ...rest,
  };
}

/** Runs `fn` and returns the typed error it threw (fails the test if it did not throw). */
export async function refusal(fn: () => unknown): Promise<AgentStateError> {
  try {
    await fn();
  } catch (err) {
    return err as AgentStateError;
  }
  throw new Error('expected a refusal, but the write was accepted');
}
