// Human-readable one-line renderings for the CLI (agents pass --json for the full documents).
import type { EventRecord, VerifyResult, WorkItem } from '../core/types.js';
import { duration } from '../reports/markdown.js';

export function formatItem(i: WorkItem, now: number = Date.now()): string {
  const parts = [`${i.id}  ${i.status.padEnd(13)} p${i.priority}  ${JSON.stringify(i.title)}`];
  if (i.kind) parts.push(`kind=${i.kind}`);
  if (i.status === 'in_flight' && i.lease_expires_at) {
    const left = Date.parse(i.lease_expires_at) - now;
    parts.push(
      `owner=${i.lease_owner} attempt=${i.attempts}/${i.max_attempts} ${left > 0 ? `lease=${duration(left)}` : `lease expired ${duration(-left)} ago`}`,
    );
  } else if (i.attempts > 0) {
    parts.push(`attempts=${i.attempts}/${i.max_attempts}`);
  }
  if (i.blocked_by.length > 0 && i.status === 'pending') parts.push(`blocked_by=${i.blocked_by.join(',')}`);
  if (i.error) parts.push(`error=${JSON.stringify(i.error)}`);
  if (i.blocked_on_failure?.length) {
    parts.push(
      `BLOCKED ON FAILURE of ${i.blocked_on_failure.join(',')} (agentstate retry ${i.blocked_on_failure.join(' ')}, or cancel ${i.id})`,
    );
  }
  return parts.join('  ');
}

export function formatEvent(e: EventRecord): string {
  const data = e.data === null ? '' : `  ${JSON.stringify(e.data)}`;
  const shown = data.length > 160 ? `${data.slice(0, 159)}…` : data;
  return `#${e.position}  ${e.created_at}  ${e.type}  ${e.stream}#${e.stream_seq}${e.actor ? `  by ${e.actor}` : ''}${shown}`;
}

const plural = (n: number, what: string) => `${n} ${what}${n === 1 ? '' : 's'}`;

/** How many problems the text output of verify lists (--json lists up to 1000). */
const SHOWN_PROBLEMS = 20;

export function formatVerify(r: VerifyResult): string {
  const c = r.checked;
  if (r.ok) {
    const rows =
      c.counters || c.work_items + c.documents > 0
        ? `; ${plural(c.work_items, 'work item')} and ${plural(c.documents, 'document')} (${plural(c.history, 'version')}) match the log`
        : '';
    const anchored = r.expected_head
      ? `; the given head #${r.expected_head.position} is still in the log`
      : '';
    return `ok: ${r.events} events, chain intact${rows}${anchored}${r.anchor ? `\nhead ${r.anchor}` : ''}`;
  }
  const first = r.broken
    ? `BROKEN at event #${r.broken.position}: ${r.broken.reason} (${r.events} events verified before it)`
    : `BROKEN: the chain is intact (${r.events} events), but the instance disagrees with it`;
  const lines = r.problems.slice(0, SHOWN_PROBLEMS).map((p) => `  ${p.message}`);
  if (r.problem_count > lines.length) {
    lines.push(`  … and ${r.problem_count - lines.length} more (--json lists up to ${r.problems.length})`);
  }
  return [`${first}; ${plural(r.problem_count, 'problem')}:`, ...lines].join('\n');
}
