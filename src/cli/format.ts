// Human-readable one-line renderings for the CLI (agents pass --json for the full documents).
import type { EventRecord, WorkItem } from '../core/types.js';
import { duration } from '../reports/markdown.js';

export function formatItem(i: WorkItem, now: number = Date.now()): string {
  const parts = [`${i.id}  ${i.status.padEnd(13)} p${i.priority}  ${JSON.stringify(i.title)}`];
  if (i.kind) parts.push(`kind=${i.kind}`);
  if (i.status === 'in_flight' && i.lease_expires_at) {
    parts.push(
      `owner=${i.lease_owner} attempt=${i.attempts}/${i.max_attempts} lease=${duration(Date.parse(i.lease_expires_at) - now)}`,
    );
  } else if (i.attempts > 0) {
    parts.push(`attempts=${i.attempts}/${i.max_attempts}`);
  }
  if (i.blocked_by.length > 0 && i.status === 'pending') parts.push(`blocked_by=${i.blocked_by.join(',')}`);
  if (i.error) parts.push(`error=${JSON.stringify(i.error)}`);
  return parts.join('  ');
}

export function formatEvent(e: EventRecord): string {
  const data = e.data === null ? '' : `  ${JSON.stringify(e.data)}`;
  const shown = data.length > 160 ? `${data.slice(0, 159)}…` : data;
  return `#${e.position}  ${e.created_at}  ${e.type}  ${e.stream}#${e.stream_seq}${e.actor ? `  by ${e.actor}` : ''}${shown}`;
}
