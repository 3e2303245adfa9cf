// resume: what an agent needs to continue, in one read — the items it holds with their leases, the top ready
// items, the documents it works on with their versions, the open human decisions, and what happened since its
// last call. Composed from the work, document and event services, so every edge (MCP, HTTP, CLI) offers it.

import { recordSummary } from '../../core/codecs/run-records.js';
import type { JsonSchema } from '../../core/json-schema.js';
import { inputSchema } from '../../core/json-schema.js';
import { EVENT, STATUS_COUNTS, WORK_ITEM } from '../../core/output-schemas.js';
import type { EventRecord, Json, StatusCounts, WorkItem } from '../../core/types.js';
import { digestBatchEvent } from '../../core/work/batches.js';
import { InvalidInputError } from '../../errors.js';
import type { Instance } from '../../instance/instance.js';
import { operation } from '../operation.js';

export const RESUME_INPUT = {
  worker: { type: 'name' },
  after: { type: 'int', min: 0 },
  documents: { type: 'names' },
  ready: { type: 'int', min: 0, max: 100 },
  events: { type: 'int', min: 0, max: 1000 },
  full: { type: 'bool' },
} as const;

export interface ResumeInput {
  /** Whose held items. @default the instance's worker (an MCP session's own worker) */
  worker?: string;
  /** The `position` an earlier resume returned: only events after it. @default the newest `events` events */
  after?: number;
  /** Documents to report as `kind/id`, besides the most recently changed ones. */
  documents?: string[];
  /** How many ready items. @default 5 */
  ready?: number;
  /** At most this many events. @default 10 (compact), 100 (full) */
  events?: number;
  /** Whole records (payloads, notes, event data) instead of the compact form. @default false */
  full?: boolean;
}

/** Where a held item's durable run is: how many records it has, and the last one in a few words. */
interface RunPlace {
  recorded: number;
  last: string;
}

/**
 * A held item as resume reports it compactly: enough to heartbeat and resolve it, and where its durable run is
 * (`run`, when it recorded anything: a replay returns those records).
 */
type HeldItem = Pick<WorkItem, 'id' | 'title' | 'attempts' | 'lease_expires_at'> & {
  kind?: string;
  run?: RunPlace;
};
type Brief = Pick<WorkItem, 'id' | 'title' | 'priority'>;

export interface ResumeResult {
  /** The log's head now: pass it back as `after` next time. */
  position: number;
  worker: string;
  counts: StatusCounts;
  /** Items this worker holds under a lease (in_flight). */
  held: Array<HeldItem | WorkItem>;
  /** Items other workers hold (at most 5 compact, 100 full; counts.in_flight says how many): what not to work on. */
  held_by_others: Array<Pick<WorkItem, 'id' | 'title' | 'lease_owner' | 'lease_expires_at'> | WorkItem>;
  /** The next items a claim would take, in claim order. */
  ready: Array<Brief | WorkItem>;
  /** Items waiting for a human decision. */
  decisions: Array<Brief | WorkItem>;
  documents: Array<{ kind: string; id: string; version: number; updated_at?: string } | { missing: string }>;
  /** Events after `after` (oldest first), at most `events`; `more` counts those left out. */
  events: Array<Partial<EventRecord>>;
  more: number;
  /** Held items the compact form leaves out (it shows HELD_SHOWN); absent when none is. */
  more_held?: number;
  /**
   * Pending items that cannot become ready because a blocker upstream ended failed or cancelled (`failed`
   * names those blockers), with `hint`; both absent when there are none.
   */
  blocked_on_failure?: Array<StuckItem | WorkItem>;
  hint?: string;
}

type StuckItem = Pick<WorkItem, 'id' | 'title'> & { failed: string[] };

/** What resume says once when items are blocked on a failure. */
export const BLOCKED_ON_FAILURE_HINT =
  'blocked_on_failure: retry the failed blocker (retry {id}) so they can go on, or cancel the items that should not';

const DOCUMENTS_SHOWN = 10;

/**
 * Held items the compact form shows (the leases that end first): an agent holding more reads them with
 * `full` or list_items; 1,000 items fit in 1.5k tokens.
 */
const HELD_SHOWN = 5;

/** Others' items the compact form shows: enough to see who works on what (1,000 items fit in 1.5k tokens). */
const OTHERS_SHOWN = 5;

const str = { type: 'string' } as const;
const int = { type: 'integer' } as const;
const list = (items: JsonSchema): JsonSchema => ({ type: 'array', items });
const brief: JsonSchema = { type: 'object', properties: { id: str, title: str, priority: int } };
const anyItem = (compact: JsonSchema): JsonSchema => ({ anyOf: [compact, WORK_ITEM] });

export const RESUME_RESULT: JsonSchema = {
  type: 'object',
  properties: {
    position: int,
    worker: str,
    counts: STATUS_COUNTS,
    held: list(
      anyItem({
        type: 'object',
        properties: {
          id: str,
          title: str,
          kind: str,
          attempts: int,
          lease_expires_at: { type: ['string', 'null'] },
          run: { type: 'object', properties: { recorded: int, last: str } },
        },
      }),
    ),
    held_by_others: list(
      anyItem({
        type: 'object',
        properties: { id: str, title: str, lease_owner: str, lease_expires_at: { type: ['string', 'null'] } },
      }),
    ),
    ready: list(anyItem(brief)),
    decisions: list(anyItem(brief)),
    documents: list({
      anyOf: [
        { type: 'object', properties: { kind: str, id: str, version: int, updated_at: str } },
        { type: 'object', properties: { missing: str }, required: ['missing'] },
      ],
    }),
    events: list({ anyOf: [{ type: 'object', properties: { position: int, type: str } }, EVENT] }),
    more: int,
    more_held: int,
    blocked_on_failure: list(
      anyItem({ type: 'object', properties: { id: str, title: str, failed: list(str) } }),
    ),
    hint: str,
  },
  required: [
    'position',
    'worker',
    'counts',
    'held',
    'held_by_others',
    'ready',
    'decisions',
    'documents',
    'events',
    'more',
  ],
};

/** `kind/id` split at its last slash (a kind may not contain one, an id may: `a/b/c` is kind a/b, id c). */
function splitDocRef(ref: string): { kind: string; id: string } {
  const at = ref.indexOf('/');
  if (at <= 0 || at === ref.length - 1) {
    throw new InvalidInputError(`resume: documents names kind/id, got ${JSON.stringify(ref)}`, {
      field: 'documents',
    });
  }
  return { kind: ref.slice(0, at), id: ref.slice(at + 1) };
}

/** An event without its chain fields (hashes, per-stream sequence): what an agent reads. */
function compactEvent(e: EventRecord): Record<string, Json> {
  const out: Record<string, Json> = { position: e.position, type: e.type, stream: e.stream };
  if (e.work_item_id) out.work_item_id = e.work_item_id;
  if (e.actor) out.actor = e.actor;
  return out;
}

/** The resume summary of one instance (read-only; several reads, each consistent on its own). */
export async function resumeAgent(inst: Instance, i: ResumeInput): Promise<ResumeResult> {
  const full = i.full === true;
  const worker = i.worker ?? inst.work.defaultWorker;
  const refs = (i.documents ?? []).map(splitDocRef);
  // The head first: events after it show in the next call, so none falls between two resumes.
  const position = (await inst.events.head())?.position ?? 0;
  const maxEvents = i.events ?? (full ? 100 : 10);
  const [counts, inFlight, ready, decisions, docs, stuck] = await Promise.all([
    inst.work.counts(),
    inst.work.list({ status: 'in_flight', limit: 100_000 }),
    inst.work.list({ ready: true, limit: i.ready ?? 5 }),
    inst.work.list({ status: 'waiting_human', limit: full ? 100 : 10 }),
    inst.docs.list({ limit: 100_000 }),
    inst.work.list({ blocked_on_failure: true, limit: full ? 100 : 10 }),
  ]);
  const held = inFlight.filter((w) => w.lease_owner === worker);
  // The compact form shows the leases that end first: those to heartbeat or finish now.
  const shownHeld = full
    ? held
    : [...held]
        .sort((a, b) => ((a.lease_expires_at ?? '') < (b.lease_expires_at ?? '') ? -1 : 1))
        .slice(0, HELD_SHOWN);
  // Where each held item's durable run is (one read of its records each; an agent holds few).
  const runs = new Map<string, RunPlace>();
  for (const [k, records] of (
    await Promise.all(shownHeld.map((w) => inst.work.steps(w.id).catch(() => [])))
  ).entries()) {
    const last = records.at(-1);
    if (last) runs.set(shownHeld[k]!.id, { recorded: records.length, last: recordSummary(last) });
  }
  const named = new Set(refs.map((r) => `${r.kind}\u0000${r.id}`));
  const key = (d: { kind: string; id: string }) => `${d.kind}\u0000${d.id}`;
  const found = new Map(docs.map((d) => [key(d), d]));
  const recent = docs
    .filter((d) => !named.has(key(d)))
    .sort((a, b) => (a.updated_at < b.updated_at ? 1 : a.updated_at > b.updated_at ? -1 : 0))
    .slice(0, Math.max(0, DOCUMENTS_SHOWN - refs.length));
  // The compact form: which version to commit against; full adds when it changed.
  const docView = (d: { kind: string; id: string; version: number; updated_at: string }) =>
    full
      ? { kind: d.kind, id: d.id, version: d.version, updated_at: d.updated_at }
      : { kind: d.kind, id: d.id, version: d.version };
  const documents: ResumeResult['documents'] = [
    ...refs.map((r) => {
      const d = found.get(key(r));
      return d ? docView(d) : { missing: `${r.kind}/${r.id}` };
    }),
    ...recent.map(docView),
  ];
  let events: EventRecord[] = [];
  let more = 0;
  if (maxEvents > 0 && position > 0) {
    if (i.after === undefined) {
      events = (await inst.events.read({ until: position, limit: maxEvents, reverse: true })).reverse();
      more = Math.max(0, (events[0]?.position ?? 1) - 1);
    } else if (i.after < position) {
      events = await inst.events.read({ after: i.after, until: position, limit: maxEvents });
      // Positions are gapless, so what was left out is a difference, not a count query.
      more = position - (events.at(-1)?.position ?? i.after);
    }
  }
  const heldView = (w: WorkItem): HeldItem | WorkItem => {
    const run = runs.get(w.id);
    return full
      ? { ...w, ...(run ? { run } : {}) }
      : {
          id: w.id,
          title: w.title,
          ...(w.kind ? { kind: w.kind } : {}),
          attempts: w.attempts,
          lease_expires_at: w.lease_expires_at,
          ...(run ? { run } : {}),
        };
  };
  const briefView = (w: WorkItem): Brief | WorkItem =>
    full ? w : { id: w.id, title: w.title, priority: w.priority };
  return {
    position,
    worker,
    counts,
    held: shownHeld.map(heldView),
    ...(!full && held.length > HELD_SHOWN ? { more_held: held.length - HELD_SHOWN } : {}),
    held_by_others: inFlight
      .filter((w) => w.lease_owner !== worker)
      .slice(0, full ? 100 : OTHERS_SHOWN)
      .map((w) =>
        full
          ? w
          : { id: w.id, title: w.title, lease_owner: w.lease_owner, lease_expires_at: w.lease_expires_at },
      ),
    ready: ready.map(briefView),
    decisions: decisions.map(briefView),
    documents,
    // A batch event (1,000 enqueued items are half a million characters) as its count and first ids.
    events: full ? events.map(digestBatchEvent) : events.map(compactEvent),
    more,
    ...(stuck.length > 0
      ? {
          blocked_on_failure: stuck.map((w) =>
            full ? w : { id: w.id, title: w.title, failed: w.blocked_on_failure ?? [] },
          ),
          hint: BLOCKED_ON_FAILURE_HINT,
        }
      : {}),
  };
}

export const RESUME_OPERATIONS = [
  operation({
    name: 'resume',
    group: 'work',
    description:
      'What to continue with: your held items and leases, what others hold, top ready items, documents and versions, open human decisions, events since your last call.',
    input: inputSchema(RESUME_INPUT, {
      worker: 'whose held items (default: yours)',
      after: 'events after this position (default: since your last resume)',
      documents: 'kind/id of documents you work on',
      ready: 'ready items to show (default 5)',
      events: 'events to show (default 10)',
      full: 'whole records, not the compact form',
    }),
    output: RESUME_RESULT,
    writes: false,
    // "Since your last call": an edge that keeps its callers' positions (MCP) starts after the worker's last.
    run: async (inst, i: ResumeInput, { cursors }) => {
      const last = i.after === undefined ? cursors?.get(i.worker ?? inst.work.defaultWorker) : undefined;
      const r = await resumeAgent(inst, last === undefined ? i : { ...i, after: last });
      cursors?.set(r.worker, r.position);
      return r;
    },
  }),
] as const;
