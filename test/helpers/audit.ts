// How many times the log names each work item as claimed and as resolved, single events (work_item_claimed)
// and batch events (work_items_claimed, data.items) alike: the per-item audit the worker runtime keeps.
import type { EventRecord } from '../../src/core/types.js';
import type { Instance } from '../../src/instance/instance.js';

export interface ItemAudit {
  claimed: number;
  resolved: number;
}

/** Adds `events` to `into` (item id → how often it is named claimed and resolved). */
export function countAudit(
  events: EventRecord[],
  into = new Map<string, ItemAudit>(),
): Map<string, ItemAudit> {
  for (const e of events) {
    const what = /^work_items?_(claimed|resolved)$/.exec(e.type)?.[1] as keyof ItemAudit | undefined;
    if (!what) continue;
    const batch = (e.data as { items?: Array<{ id: string }> } | null)?.items;
    for (const id of batch ? batch.map((i) => i.id) : e.work_item_id ? [e.work_item_id] : []) {
      const a = into.get(id) ?? { claimed: 0, resolved: 0 };
      a[what]++;
      into.set(id, a);
    }
  }
  return into;
}

/** The audit of the whole log of `inst`, read in pages. */
export async function auditOf(inst: Instance): Promise<Map<string, ItemAudit>> {
  const out = new Map<string, ItemAudit>();
  for (let after = 0; ; ) {
    const page = await inst.events.read({ after, limit: 1000 });
    if (page.length === 0) return out;
    after = page.at(-1)!.position;
    countAudit(page, out);
  }
}
