// A large, realistic instance for the tests and benchmarks of what agents are answered (issue 40): thousands of
// items enqueued in batches (so the log holds work_items_enqueued events naming them all, with their titles, keys
// and payload hashes), some claimed by a few workers, some resolved, human decisions waiting, documents and one
// very large one.
import type { Json, JsonObject } from '../../src/core/types.js';
import type { Instance } from '../../src/instance/instance.js';

/** The shape of the state `fillBigInstance` writes. */
export interface BigInstanceShape {
  /** Work items enqueued (besides the decision items escalation enqueues). */
  items: number;
  /** In how many enqueueMany calls (one work_items_enqueued event each when it holds two or more items). */
  batches: number;
  /** Items left in flight, held by the workers under leases of a day (they never run out in a test). */
  claimed: number;
  /** Items claimed and then resolved (done, or failed for `failures` of them). */
  done: number;
  /** Characters of the large document's body as JSON (about; it is built of whole tasks). */
  docChars: number;
  /** How many of the `done` items are resolved failed. @default a tenth of `done` */
  failures?: number;
  /** Steps recorded by the run of one held item (what list_steps answers). @default 20 */
  steps?: number;
}

/** The default shape of issue 40: 1,000 items in one batch, 300 held, 150 resolved, one 400 KB document. */
export const DEFAULT_SHAPE: BigInstanceShape = {
  items: 1000,
  batches: 1,
  claimed: 300,
  done: 150,
  docChars: 400_000,
};

/** The large shape of issue 40: 10,000 items in 100 batches. */
export const LARGE_SHAPE: BigInstanceShape = { ...DEFAULT_SHAPE, items: 10_000, batches: 100 };

/** The workers that hold items: names with a `|`, a `+` and non-ASCII, as real ones may have. */
export const BIG_WORKERS = ['planner', 'coder|2', 'reviewer+ci', 'agent-ø'] as const;

/** The kind and id of a document. */
export interface DocRef {
  kind: string;
  id: string;
}

/** What `fillBigInstance` wrote, for the callers that read it back. */
export interface BigInstance {
  /** The shape it was built with (defaults filled in). */
  shape: Required<BigInstanceShape>;
  /** The large document (kind `json`, several versions). */
  bigDoc: DocRef;
  /** Every document written, the large one included. */
  docs: DocRef[];
  /** The task whose open questions were escalated to humans. */
  decisionDoc: DocRef;
  /** The decision items waiting for a human. */
  decisions: string[];
  /** Ids of the items each worker holds. */
  held: Record<string, string[]>;
  /** A held item whose run recorded `steps` steps: its id, worker and attempt (null when none is held). */
  stepsItem: { id: string; worker: string; attempt: number } | null;
  /** Ids of the items resolved done, and of those resolved failed. */
  resolved: { done: string[]; failed: string[] };
}

/** One day, the longest lease a claim may take (LIMITS.leaseMs). */
const LEASE_MS = 86_400_000;
/** claimMany and resolveMany take at most this many items (LIMITS.claimLimit). */
const CHUNK = 1000;

const VERBS = ['Refactor', 'Investigate', 'Migrate', 'Document', 'Fix', 'Benchmark', 'Review', 'Übersetze'];
const OBJECTS = [
  'the billing webhook retry path',
  'the session store’s lease renewal',
  'flaky integration test in checkout',
  'données clients export to CSV',
  'the search index rebuild job',
  '日本語 locale date formatting',
  'rate limiter for the OpenAI client',
  'the PostgreSQL connection pool sizing',
];
const CONTEXTS = [
  'so that nightly runs stop timing out',
  'before the release freeze on Friday',
  'as reported by the on-call engineer',
  'keeping the public API unchanged',
  'without a downtime window — naïve approach failed',
];

/** A deterministic pseudo-random stream (mulberry32), so every build of a shape is the same. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A title of 60 to 120 characters (code points, so no surrogate pair is cut), some of it non-ASCII. */
function titleOf(i: number): string {
  const len = 60 + ((i * 37) % 61);
  const base = `${VERBS[i % VERBS.length]} ${OBJECTS[(i * 3) % OBJECTS.length]} ${CONTEXTS[(i * 7) % CONTEXTS.length]} (#${i})`;
  let s = base;
  while ([...s].length < len) s += ` — ${CONTEXTS[(i + s.length) % CONTEXTS.length]}`;
  return [...s].slice(0, len).join('').trimEnd().padEnd(60, '.');
}

/** A payload of a few hundred bytes of nested JSON, as a planner hands a coder. */
function payloadOf(i: number, rnd: () => number): JsonObject {
  const hex = Array.from({ length: 40 }, () => Math.floor(rnd() * 16).toString(16)).join('');
  return {
    source: {
      repo: 'acme/platform',
      path: `services/${['billing', 'search', 'auth', 'ui-ß'][i % 4]}/src/module-${i % 40}/handler.ts`,
      line: 1 + Math.floor(rnd() * 900),
      commit: hex,
    },
    spec: {
      summary: `Make ${OBJECTS[i % OBJECTS.length]} behave under load`,
      steps: ['read the failing test', 'write a smaller reproduction', 'change the handler, keep the API'],
      acceptance: [
        { id: 'ac1', text: 'the reproduction passes 100 times in a row' },
        { id: 'ac2', text: 'p95 latency does not regress' },
      ],
    },
    labels: ['area|backend', 'team+core', `sprint-${(i % 12) + 1}`, 'prio-ü'],
    estimate: { points: 1 + (i % 8), confidence: Math.round(rnd() * 100) / 100 },
    refs: { issue: `#${1000 + i}`, key: `import|acme+platform/ü-${i}` },
  };
}

/** The large document: `{ title, owner, tasks: [...] }` of about `chars` characters as JSON. */
export function bigDocBody(chars: number): JsonObject {
  const rnd = random(7);
  const tasks: JsonObject[] = [];
  const head = { title: 'Release plan 2026.12 — Übersicht', owner: 'planner', milestone: 'M|4+ß' };
  let size = JSON.stringify({ ...head, tasks: [] }).length;
  for (let i = 0; size < chars; i++) {
    const task: JsonObject = {
      id: `T-${i}`,
      title: titleOf(i),
      status: ['todo', 'doing', 'done', 'blocked'][i % 4]!,
      owner: BIG_WORKERS[i % BIG_WORKERS.length]!,
      depends_on: i === 0 ? [] : [`T-${Math.floor(rnd() * i)}`],
      notes: `Checked ${OBJECTS[i % OBJECTS.length]}; next: ${CONTEXTS[i % CONTEXTS.length]}.`,
      subtasks: [
        { id: `T-${i}.1`, text: 'write the test first', done: i % 3 === 0 },
        { id: `T-${i}.2`, text: 'change the code', done: i % 5 === 0 },
      ],
      tags: ['plan', i % 2 === 0 ? 'backend' : 'frontend|ui', 'äöü'],
    };
    size += JSON.stringify(task).length + (tasks.length === 0 ? 0 : 1);
    tasks.push(task);
  }
  return { ...head, tasks };
}

/** Splits `n` into `parts` sizes differing by at most one. */
function sizes(n: number, parts: number): number[] {
  return Array.from({ length: parts }, (_, k) => Math.floor(n / parts) + (k < n % parts ? 1 : 0));
}

/**
 * Fills an open (empty) instance with a large, realistic state in batched calls, on any backend: `items` items
 * enqueued in `batches` calls; `done` of them claimed and resolved (`failures` failed); `claimed` more held by
 * BIG_WORKERS under day-long leases, one of them with a run of `steps` recorded steps; a task whose three open
 * questions are escalated (three decision items waiting for a human); a few small documents; and one large
 * `json` document of about `docChars` characters in three versions.
 * @example const big = await fillBigInstance(inst, DEFAULT_SHAPE);
 */
export async function fillBigInstance(inst: Instance, input: BigInstanceShape): Promise<BigInstance> {
  const shape: Required<BigInstanceShape> = {
    failures: Math.floor(input.done / 10),
    steps: 20,
    ...input,
  };
  if (shape.claimed + shape.done > shape.items || shape.failures > shape.done || shape.batches < 1) {
    throw new Error(`fillBigInstance: an impossible shape ${JSON.stringify(shape)}`);
  }
  const rnd = random(42);

  let i = 0;
  for (const [b, n] of sizes(shape.items, Math.min(shape.batches, shape.items)).entries()) {
    await inst.work.enqueueMany(
      Array.from({ length: n }, () => {
        const k = i++;
        return {
          title: titleOf(k),
          kind: ['code', 'research', 'review+docs'][k % 3]!,
          priority: k % 5,
          payload: payloadOf(k, rnd),
          idempotency_key: `import|acme+platform/ü-${b}-${k}`,
          ...(k % 4 === 0 ? { concurrency_key: 'openai|org+ø' } : {}),
        };
      }),
    );
  }

  // Claim the items to resolve, a chunk per worker in turn, and resolve each chunk in one call.
  const resolved: BigInstance['resolved'] = { done: [], failed: [] };
  for (let left = shape.done, w = 0; left > 0; w++) {
    const worker = BIG_WORKERS[w % BIG_WORKERS.length]!;
    const got = await inst.work.claimMany({ worker, limit: Math.min(CHUNK, left), lease_ms: LEASE_MS });
    if (got.length === 0) throw new Error('fillBigInstance: nothing left to claim');
    left -= got.length;
    await inst.work.resolveMany(
      got.map((item) => {
        // The failures spread evenly over the resolves.
        const k = resolved.done.length + resolved.failed.length;
        const failed = Math.floor(((k + 1) * shape.failures) / shape.done) > resolved.failed.length;
        (failed ? resolved.failed : resolved.done).push(item.id);
        const common = { id: item.id, worker, attempt: item.attempts };
        return failed
          ? {
              ...common,
              status: 'failed' as const,
              error: `tool exited with status 1: npm test failed (${k})`,
            }
          : {
              ...common,
              status: 'done' as const,
              result: { ok: true, files_changed: 1 + (k % 5), summary: 'fixed; the tests pass' },
            };
      }),
    );
  }

  // The items left in flight: shared out between the workers, each claim at most CHUNK.
  const held: Record<string, string[]> = Object.fromEntries(BIG_WORKERS.map((w) => [w, []]));
  let stepsItem: BigInstance['stepsItem'] = null;
  for (const [w, n] of sizes(shape.claimed, BIG_WORKERS.length).entries()) {
    const worker = BIG_WORKERS[w]!;
    for (let left = n; left > 0; ) {
      const got = await inst.work.claimMany({ worker, limit: Math.min(CHUNK, left), lease_ms: LEASE_MS });
      if (got.length === 0) throw new Error('fillBigInstance: nothing left to claim');
      left -= got.length;
      held[worker]!.push(...got.map((x) => x.id));
      if (!stepsItem) stepsItem = { id: got[0]!.id, worker, attempt: got[0]!.attempts };
    }
  }
  if (stepsItem) {
    for (let s = 0; s < shape.steps; s++) {
      await inst.work.step({ ...stepsItem, name: `call-tool|${s % 4}+ü` }, () => ({
        tool: 'shell',
        command: `npm test -- --grep "module-${s}"`,
        exit_code: s % 7 === 6 ? 1 : 0,
        output: `${'ok '.repeat(40)}(${s})`,
      }));
    }
  }

  // A task with three open questions, escalated: three decisions waiting for a human.
  const decisionDoc = { kind: 'task-ir', id: 'release+2026|Ω' };
  await inst.docs.commit({
    ...decisionDoc,
    expected_version: 0,
    body: {
      goal: 'Ship release 2026.12 without breaking the public API',
      acceptance_criteria: [{ id: 'ac1', text: 'every item of the plan is done or deferred' }],
      ambiguities: [
        {
          id: 'a1',
          question: 'Defer the search rebuild to 2027.01?',
          status: 'open',
          options: ['yes', 'no'],
        },
        { id: 'a2', question: 'Which locale is the default — en or de?', status: 'open' },
        { id: 'a3', question: 'Drop Node 18 support now?', status: 'open', options: ['now', 'later'] },
      ],
    },
  });
  const escalation = await inst.docs.escalate(decisionDoc);
  const decisions = escalation.decisions.map((d) => d.id);

  // A few small documents, with ids as people and tools spell them.
  const small: Array<[string, JsonObject]> = [
    ['notes|session+1', { text: 'Picked up after compaction; see the plan.', seen: ['T-1', 'T-2'] }],
    ['config+prod/ü', { retries: 3, regions: ['eu-west-1', 'us-east-1'], flags: { beta: true } }],
    ['handoff|coder→reviewer', { from: 'coder|2', to: 'reviewer+ci', items: [] as Json[] }],
    ['glossary-日本', { terms: { lease: 'リース', claim: '取得' } }],
  ];
  const docs: DocRef[] = [decisionDoc];
  for (const [id, body] of small) {
    await inst.docs.commit({ kind: 'json', id, expected_version: 0, body });
    docs.push({ kind: 'json', id });
  }

  // The large document: created whole, then two small changes, as a planner keeps its plan.
  const bigDoc = { kind: 'json', id: 'plan|release+2026.12/ü' };
  await inst.docs.commit({ ...bigDoc, expected_version: 0, body: bigDocBody(shape.docChars) });
  await inst.docs.commit({ ...bigDoc, expected_version: 1, merge_patch: { owner: 'reviewer+ci' } });
  await inst.docs.commit({ ...bigDoc, expected_version: 2, merge_patch: { milestone: 'M|5+ß' } });
  docs.push(bigDoc);

  return { shape, bigDoc, docs, decisionDoc, decisions, held, stepsItem, resolved };
}
