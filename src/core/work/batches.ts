// Batch events: a batched call (claimMany, resolveMany, enqueueMany, the expired-lease sweep, coalesced single
// calls) writes one event per batch and type, naming every item; readers of an item's history expand it back
// into that item's own event (expandBatchEvent), and agents read it as a digest (digestBatchEvent).
import type { NewEvent } from '../backend.js';
import type { Json, JsonObject } from '../types.js';

/**
 * Batched calls (claimMany, resolveMany, enqueueMany, the expired-lease sweep, and the single calls a
 * handle coalesces) write one event per batch and type instead of one per item: `work_items_<x>` on the
 * instance-wide `work_items` stream, naming every item with what its `work_item_<x>` event would carry.
 * Readers of an item's history see it as that item's own event (`expandBatchEvent`).
 */
export const BATCH_STREAM = 'work_items';

/** The per-item event type → the type of the event that records a batch of them. */
export const BATCH_TYPE_OF: Readonly<Record<string, string>> = {
  work_item_enqueued: 'work_items_enqueued',
  work_item_claimed: 'work_items_claimed',
  work_item_resolved: 'work_items_resolved',
  work_item_reclaimed: 'work_items_reclaimed',
};

/** The batch event type → the per-item type each of its entries stands for. */
export const ITEM_TYPE_OF_BATCH: Readonly<Record<string, string>> = Object.fromEntries(
  Object.entries(BATCH_TYPE_OF).map(([item, batch]) => [batch, item]),
);

/** Every batch event type, in a fixed order (backends index them). */
export const BATCH_TYPES: readonly string[] = Object.values(BATCH_TYPE_OF);

/**
 * Folds the per-item events of one batched call into one event per type: every run of two or more events
 * of a batchable type (same time) becomes one `work_items_<x>` event at the place of the first of them,
 * whose `data.items` lists `{ id, …the per-item data }` in order, with `actor` on an entry only when it is
 * not the batch event's. Anything else, and a lone event of its type, is kept as it is: a batch of one
 * item writes exactly what a single call writes.
 */
export function batchEvents(events: NewEvent[]): NewEvent[] {
  const groups = new Map<string, NewEvent[]>();
  for (const e of events) {
    // Stryker disable next-line ConditionalExpression: equivalent: every event of a batchable type names its item
    if (!BATCH_TYPE_OF[e.type] || e.work_item_id === null || !isPlainObject(e.data)) continue;
    const key = `${e.type}\u0000${e.created_at}`;
    const g = groups.get(key);
    if (g) g.push(e);
    else groups.set(key, [e]);
  }
  const out: NewEvent[] = [];
  const emitted = new Set<string>();
  for (const e of events) {
    const key = `${e.type}\u0000${e.created_at}`;
    const g = groups.get(key);
    if (!g || g.length < 2 || !g.includes(e)) {
      out.push(e);
      continue;
    }
    if (emitted.has(key)) continue;
    emitted.add(key);
    const actor = g[0]!.actor;
    // The actor kind every entry shares is said once, on the batch (as its actor is).
    const kind = (g[0]!.data as JsonObject).actor_kind;
    const shared = g.every((x) => (x.data as JsonObject).actor_kind === kind) ? kind : undefined;
    const items: Json[] = g.map((x) => {
      const entry: JsonObject = { id: x.work_item_id as string };
      if (x.actor !== actor) entry.actor = x.actor;
      Object.assign(entry, x.data as JsonObject);
      if (shared !== undefined) delete entry.actor_kind;
      return entry;
    });
    out.push({
      type: BATCH_TYPE_OF[e.type]!,
      stream: BATCH_STREAM,
      // Stryker disable next-line ConditionalExpression: equivalent in the stored bytes: JSON leaves out an undefined actor_kind
      data: shared === undefined ? { items } : { actor_kind: shared, items },
      actor,
      correlation_id: null,
      causation_id: null,
      work_item_id: null,
      created_at: e.created_at,
    });
  }
  return out;
}

function isPlainObject(v: unknown): v is JsonObject {
  // Stryker disable next-line ConditionalExpression: equivalent for JSON: a string or number has no items or id either
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** One item's view of a batch event: what its own event would have said. */
export interface BatchEntry {
  work_item_id: string;
  type: string;
  data: JsonObject;
  actor: string | null;
}

/**
 * The per-item views of a stored batch event (type `work_items_<x>`, no work_item_id), in the order the
 * batch names them, each with the batch's actor and actor kind unless it names its own; null when the event is no batch event, 'malformed' when its data lists no items as
 * batch events do (an entry without a string id, an id named twice, fewer than one entry).
 */
export function expandBatchEvent(e: {
  type: string;
  data: Json;
  actor: string | null;
  work_item_id: string | null;
}): BatchEntry[] | null | 'malformed' {
  const type = ITEM_TYPE_OF_BATCH[e.type];
  if (type === undefined || e.work_item_id !== null) return null;
  const items = isPlainObject(e.data) ? e.data.items : undefined;
  if (!Array.isArray(items) || items.length === 0) return 'malformed';
  const kind = (e.data as JsonObject).actor_kind;
  const seen = new Set<string>();
  const out: BatchEntry[] = [];
  for (const entry of items) {
    if (!isPlainObject(entry) || typeof entry.id !== 'string' || seen.has(entry.id)) return 'malformed';
    seen.add(entry.id);
    const { id, actor, ...data } = entry;
    if (actor !== undefined && actor !== null && typeof actor !== 'string') return 'malformed';
    if (kind !== undefined && data.actor_kind === undefined) data.actor_kind = kind;
    out.push({ work_item_id: id, type, data, actor: actor === undefined ? e.actor : actor });
  }
  return out;
}

/** How many ids a batch event's digest names. */
export const DIGEST_IDS = 5;

/**
 * A batch event as an agent reads it (MCP, resume, `agentstate events` for people): its data becomes the
 * item count, the first ids and how to read one item's part (`read_events` with `work_item_id`), instead of
 * every item with its payload (1,000 of them are half a million characters). Any other event, and a
 * malformed batch, is returned as it is. What the log stores and `verify` proves do not change.
 */
export function digestBatchEvent<E extends { type: string; data: Json; work_item_id: string | null }>(
  e: E,
): E {
  if (ITEM_TYPE_OF_BATCH[e.type] === undefined || e.work_item_id !== null || !isPlainObject(e.data)) return e;
  const items = e.data.items;
  if (!Array.isArray(items)) return e;
  const ids = items.flatMap((x) => (isPlainObject(x) && typeof x.id === 'string' ? [x.id] : []));
  const data: JsonObject = {
    batch_of: items.length,
    first_ids: ids.slice(0, DIGEST_IDS),
    read: "one item's part: read the events of its work_item_id",
  };
  return { ...e, data };
}
