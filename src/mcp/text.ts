// The short text form of each tool's result, next to its structuredContent: what a host that shows only text
// gives the model. Data a model reads (a body, events) is included as compact JSON; the rest is one line.
import type {
  CommitResult,
  DocumentRecord,
  EventRecord,
  HistoryEntry,
  StatusCounts,
  WorkItem,
} from '../core/types.js';
import type { ResumeResult } from '../service/operations/resume.js';

const json = (v: unknown) => JSON.stringify(v);

function item(w: WorkItem): string {
  const lease =
    w.status === 'in_flight'
      ? ` attempt ${w.attempts}, lease ${w.lease_owner} until ${w.lease_expires_at}`
      : '';
  return `${w.id} ${json(w.title)} ${w.status}${lease}`;
}

function counts(c: StatusCounts): string {
  return Object.entries(c)
    .filter(([, n]) => n > 0)
    .map(([s, n]) => `${n} ${s}`)
    .join(', ');
}

/**
 * Resume's text: the counts, what you hold (ids and leases: enough to heartbeat) and how many of the rest —
 * the records are the structured content, not sent twice (1,000 items stay under 1.5k tokens).
 */
function resume(r: ResumeResult): string {
  const lines = [`position ${r.position}; worker ${r.worker}; ${counts(r.counts) || 'no items'}`];
  if (r.held.length > 0) {
    const held = r.held.map((w) => `${w.id} until ${w.lease_expires_at}`).join('; ');
    lines.push(`held: ${held}${r.more_held ? ` (${r.more_held} more: resume with full)` : ''}`);
  }
  const rest = (
    [
      ['held by others', r.held_by_others.length],
      ['ready', r.ready.length],
      ['decisions', r.decisions.length],
      ['documents', r.documents.length],
      ['events', r.events.length],
      ['blocked on a failure', r.blocked_on_failure?.length ?? 0],
    ] as const
  )
    .filter(([, n]) => n > 0)
    .map(([what, n]) => `${n} ${what}`);
  if (rest.length > 0) lines.push(`${rest.join(', ')}: in the structured content`);
  if (r.more > 0) lines.push(`(${r.more} earlier events not shown: read_events)`);
  if (r.hint) lines.push(r.hint);
  return lines.join('\n');
}

/**
 * The text form of `tool`'s result; `brief` leaves out the values it would carry (payloads, bodies, event
 * data), for a result too large to send twice: the structured content holds them.
 */
export function textOf(tool: string, result: unknown, brief = false): string {
  switch (tool) {
    case 'resume':
      return resume(result as ResumeResult);
    case 'claim':
    case 'claim_many': {
      const items = (Array.isArray(result) ? result : result ? [result] : []) as WorkItem[];
      if (items.length === 0) return 'no item is ready';
      return items
        .map((w) => `claimed ${item(w)}${w.payload === null || brief ? '' : `\npayload ${json(w.payload)}`}`)
        .join('\n');
    }
    case 'enqueue':
      return `enqueued ${item(result as WorkItem)}`;
    case 'heartbeat':
    case 'resolve':
    case 'release':
    case 'annotate':
    case 'cancel':
    case 'park':
    case 'unpark':
    case 'retry':
    case 'get_item':
      return item(result as WorkItem);
    case 'commit':
    case 'fork':
    case 'apply': {
      const c = result as CommitResult;
      const what = c.replayed
        ? 'replayed'
        : c.noop
          ? 'no-op recorded'
          : c.changed
            ? 'committed'
            : 'unchanged';
      return `${what} ${c.kind}/${c.id} v${c.version} (from v${c.previous_version})`;
    }
    case 'get_document': {
      const d = result as DocumentRecord & { values?: unknown; missing?: string[]; omitted?: string };
      const head = `${d.kind}/${d.id} v${d.version}`;
      if (d.omitted !== undefined) return `${head}: ${d.omitted}`;
      if (brief) {
        const what = d.values === undefined ? 'body' : 'values';
        return `${head}: the ${what} (${json(d.values ?? d.body).length} characters) is in the structured content`;
      }
      if (d.values !== undefined) {
        return `${d.kind}/${d.id} v${d.version} ${json(d.values)}${d.missing?.length ? ` missing ${d.missing.join(', ')}` : ''}`;
      }
      return `${d.kind}/${d.id} v${d.version} ${json(d.body)}`;
    }
    case 'history': {
      const h = result as { entries: HistoryEntry[]; next_after: number | null };
      const lines = h.entries.map(
        (e) =>
          `v${e.version}${e.noop ? ' no-op' : ''} by ${e.actor} (${e.actor_kind}) ${e.created_at}${e.reason ? ` ${json(e.reason)}` : ''}`,
      );
      if (h.next_after !== null) lines.push(`more: after ${h.next_after}`);
      return lines.join('\n') || 'no history';
    }
    case 'append_event': {
      const e = result as EventRecord;
      return `appended #${e.position} ${e.type} to ${e.stream}`;
    }
    case 'read_events': {
      const es = result as EventRecord[];
      if (es.length === 0) return 'no events';
      return es
        .map(
          (e) =>
            `#${e.position} ${e.type} ${e.stream}${e.work_item_id ? ` ${e.work_item_id}` : ''}${e.actor ? ` by ${e.actor}` : ''}${brief ? '' : ` ${json(e.data)}`}`,
        )
        .join('\n');
    }
    default:
      return brief ? `${tool}: the result is in the structured content` : json(result);
  }
}
