// Shared setup of the store conformance suite: the backend factory, a fresh context per test on a fake
// clock, the clean verify every test ends with, and small assertion helpers.
import { expect, it } from 'vitest';
import type { StoreBackend } from '../../src/core/backend.js';
import type { DocumentStore } from '../../src/core/documents/store.js';
import type { EventLog } from '../../src/core/events/log.js';
import type { WorkQueue } from '../../src/core/work/queue.js';
import { isAgentStateError } from '../../src/errors.js';
import { createStore, type StoreOptions } from '../../src/instance/store.js';

/** Creates a fresh, empty, migrated backend for one test (each call a new instance). */
export type StoreFactory = () => Promise<StoreBackend>;

/** The fake clock's start. */
export const T0 = Date.parse('2026-01-01T00:00:00.000Z');

/** What a conformance test gets: the services over one fresh backend, wired as an instance wires them. */
export interface Ctx {
  backend: StoreBackend;
  work: WorkQueue;
  events: EventLog;
  docs: DocumentStore;
  /** A document store over the same backend that keeps only the newest `keep` versions. */
  docsKeeping(keep: number): DocumentStore;
  /**
   * The same services over a backend (e.g. a wrapper of this one, or this one with coalescing off), wired by
   * createStore on this test's clock.
   */
  over(backend: StoreBackend, options?: Pick<StoreOptions, 'keepVersions' | 'coalesce'>): Services;
  /**
   * Another fresh backend from the factory, with its services: closed when the test ends, after it too
   * has verified.
   */
  another(): Promise<Services & { backend: StoreBackend }>;
  /** Moves the fake clock forward. */
  advance(ms: number): void;
  now(): number;
}

/** The store's services over one backend. */
export type Services = Pick<Ctx, 'work' | 'events' | 'docs'>;

/** Declares one conformance test: `fn` runs on a fresh store that must still verify when it returns. */
export type ConformanceTest = (title: string, fn: (c: Ctx) => Promise<void>) => void;

async function setup(
  factory: StoreFactory,
  others: Array<Services & { backend: StoreBackend }>,
): Promise<Ctx> {
  const backend = await factory();
  let t = T0;
  const clock = () => t;
  // The wiring every instance uses (src/instance/store.ts), on this test's clock.
  const over = (b: StoreBackend, options: Pick<StoreOptions, 'keepVersions' | 'coalesce'> = {}): Services => {
    const { work, events, docs } = createStore(b, { clock, actor: 'agent', ...options });
    return { work, events, docs };
  };
  return {
    backend,
    ...over(backend),
    docsKeeping: (keep) => over(backend, { keepVersions: keep }).docs,
    over,
    another: async () => {
      const b = await factory();
      const other = { backend: b, ...over(b) };
      others.push(other);
      return other;
    },
    advance: (ms) => {
      t += ms;
    },
    now: () => t,
  };
}

/** Runs `fn` with a fresh store, checks that it still verifies, and closes it. */
function withStore(factory: StoreFactory, fn: (c: Ctx) => Promise<void>): () => Promise<void> {
  return async () => {
    const others: Array<Services & { backend: StoreBackend }> = [];
    const c = await setup(factory, others);
    try {
      await fn(c);
      // Whatever the test did through the API, the rows still agree with the log (verify's cross-checks
      // must never flag honest activity).
      for (const s of [c, ...others]) await expectVerifies(s.events);
    } finally {
      await Promise.all([c, ...others].map((s) => s.backend.close()));
    }
  };
}

/** The `t` of every conformance file: `it` on a fresh store from `factory`, ending with a clean verify. */
export function conformanceTest(factory: StoreFactory): ConformanceTest {
  return (title, fn) => it(title, withStore(factory, fn));
}

/** The instance's log verifies: chain, documents, history and work items all agree with it. */
export async function expectVerifies(events: EventLog): Promise<void> {
  const v = await events.verify();
  expect(v.problems).toEqual([]);
  expect(v.ok).toBe(true);
}

/** Awaits `p`, expecting an AgentStateError with `code`; returns its details. */
export async function expectCode(p: Promise<unknown>, code: string): Promise<Record<string, unknown>> {
  try {
    await p;
  } catch (err) {
    expect(isAgentStateError(err), `expected an AgentStateError, got ${String(err)}`).toBe(true);
    expect((err as { code: string }).code).toBe(code);
    return (err as { details: Record<string, unknown> }).details;
  }
  throw new Error(`expected ${code}, but the call succeeded`);
}

/** How many events the instance holds (the head position). */
export async function eventCount(c: Pick<Ctx, 'events'>): Promise<number> {
  return (await c.events.head())?.position ?? 0;
}

/** The event types of a work item's history, in order. */
export async function typesOf(c: Pick<Ctx, 'events'>, id: string): Promise<string[]> {
  return (await c.events.read({ work_item_id: id })).map((e) => e.type);
}
