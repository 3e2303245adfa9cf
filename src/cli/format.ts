// Human-readable one-line renderings for the CLI (agents pass --json for the full documents).
import type { RunRecord } from '../core/codecs/run-records.js';
import type {
  CommitResult,
  EventRecord,
  HistoryEntry,
  JsonPatchOp,
  VerifyResult,
  WorkItem,
  WorkLimit,
} from '../core/types.js';
import { digestBatchEvent } from '../core/work/batches.js';
import { attemptsText } from '../core/work/rules.js';
import { duration } from '../reports/markdown.js';

/** A concurrency key's limit on one line: `openai:org-1  max_in_flight=2  rate=60/60000ms`. */
export function formatLimit(l: WorkLimit): string {
  const parts = [l.key];
  if (l.max_in_flight !== null) parts.push(`max_in_flight=${l.max_in_flight}`);
  if (l.rate) parts.push(`rate=${l.rate.count}/${l.rate.period_ms}ms`);
  return parts.join('  ');
}

/**
 * One item on one line. Attempts show what was started and what is left (`attempt=2 (1 left after it)`,
 * `attempts=1 (3 left)`; attemptsText), never `attempts/max_attempts`.
 */
export function formatItem(i: WorkItem, now: number = Date.now()): string {
  const parts = [`${i.id}  ${i.status.padEnd(13)} p${i.priority}  ${JSON.stringify(i.title)}`];
  if (i.kind) parts.push(`kind=${i.kind}`);
  if (i.concurrency_key) parts.push(`key=${i.concurrency_key}`);
  if (i.status === 'in_flight' && i.lease_expires_at) {
    const lease = Date.parse(i.lease_expires_at) - now;
    parts.push(
      `owner=${i.lease_owner} attempt=${attemptsText(i)} ${lease > 0 ? `lease=${duration(lease)}` : `lease expired ${duration(-lease)} ago`}`,
    );
  } else if (i.attempts > 0) {
    // A finished item has nothing left to try (retry gives it a fresh budget).
    parts.push(`attempts=${attemptsText(i)}`);
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

export function formatEvent(record: EventRecord): string {
  // A batch event for people: its item count and first ids (`--json` prints what the log stores).
  const e = digestBatchEvent(record);
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
    const runs = c.workflow_runs;
    const world =
      runs === null
        ? "; the Workflow World's tables are not checked (@workflow/world, whose rules the check replays, is not installed)"
        : runs > 0
          ? `; the Workflow World's tables (${plural(runs, 'run')}, with their steps, hooks and waits) match the log`
          : '';
    const anchored = r.expected_head
      ? `; the given head #${r.expected_head.position} is still in the log`
      : '';
    return `ok: ${r.events} events, chain intact${rows}${world}${anchored}${r.anchor ? `\nhead ${r.anchor}` : ''}`;
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

function short(v: unknown, max = 70): string {
  const s = JSON.stringify(v) ?? 'undefined';
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}

export function formatHistory(entries: HistoryEntry[]): string {
  if (entries.length === 0) return 'no history';
  return entries
    .map((e) => {
      const what = e.noop ? 'no-op' : e.parent_version === 0 ? 'created' : `from v${e.parent_version}`;
      const by = `${e.actor} (${e.actor_kind})`;
      const extra = [
        e.reason ? JSON.stringify(e.reason) : '',
        e.write_id ? `write ${e.write_id}` : '',
        e.provenance?.model_id ? `model ${e.provenance.model_id}` : '',
        e.override ? `override ${e.override.rules.join(',')}` : '',
      ].filter(Boolean);
      return `v${String(e.version).padEnd(4)} ${e.created_at.replace('T', ' ').slice(0, 19)}  ${what.padEnd(10)} ${by}${
        extra.length ? `  ${extra.join('  ')}` : ''
      }`;
    })
    .join('\n');
}

export function formatPatch(patch: JsonPatchOp[]): string {
  if (patch.length === 0) return '(no changes)';
  return patch
    .map((op) => {
      switch (op.op) {
        case 'add':
          return `+ ${op.path} = ${short(op.value)}`;
        case 'remove':
          return `- ${op.path}`;
        case 'replace':
          return `~ ${op.path} = ${short(op.value)}`;
        default:
          return `${op.op} ${op.path}${op.from ? ` from ${op.from}` : ''}`;
      }
    })
    .join('\n');
}

/** One commit's outcome on one line. */
export function formatCommit(kind: unknown, id: unknown, r: CommitResult): string {
  return r.replayed
    ? `${kind}/${id} v${r.version} (retry of write ${r.write_id}: already committed)`
    : r.noop
      ? `${kind}/${id} v${r.version} unchanged (no-op recorded)`
      : r.changed
        ? `${kind}/${id} v${r.previous_version} → v${r.version}`
        : `${kind}/${id} v${r.version}: nothing changed, nothing written`;
}

/** One event of a document's stream: the version it made, and Grid's role and fields. */
export function formatDocEvent(e: EventRecord): string {
  const d = (e.data ?? {}) as { version?: number; noop?: boolean; agent_type?: unknown; fields?: unknown };
  const v = d.version === undefined ? '' : ` v${d.version}${d.noop ? ' (no-op)' : ''}`;
  // Grid's grid_state_updated: the role written as and the fields changed.
  const role = typeof d.agent_type === 'string' ? ` as ${d.agent_type}` : '';
  const f = Array.isArray(d.fields) ? d.fields : null;
  const fields =
    f === null
      ? ''
      : `: ${f.slice(0, 6).join(', ') || '(none)'}${f.length > 6 ? ` +${f.length - 6} more` : ''}`;
  return `#${e.position}  ${e.created_at}  ${e.type}${v}${e.actor ? `  by ${e.actor}` : ''}${role}${fields}`;
}

/** What an escalation put to a human, and how a human answers. */
export function formatEscalation(id: string, r: CommitResult & { decisions: WorkItem[] }): string {
  const head = r.changed
    ? `task-ir/${id} v${r.previous_version} → v${r.version}: escalated`
    : `task-ir/${id} v${r.version}: nothing new to escalate, nothing written`;
  if (r.decisions.length === 0) return `${head}\nnothing is waiting for a human`;
  const rows = r.decisions.map((d) => {
    const p = (d.payload ?? {}) as { ambiguity_id?: string; question?: string };
    return `  ${d.id}  ${p.ambiguity_id ?? '?'}  ${p.question ?? d.title}`;
  });
  return [
    `${head}\nwaiting for a human:`,
    ...rows,
    `a human answers with: agentstate resolve <item> done --result '{"answer":…}' --actor <name> --actor-kind human`,
  ].join('\n');
}

/** One record of a durable run on one line (`agentstate steps`). */
export function formatRecord(r: RunRecord): string {
  const name = `${JSON.stringify(r.name)}${r.occurrence > 1 ? ` #${r.occurrence}` : ''}`;
  const clip = (t: string) => (t.length > 120 ? `${t.slice(0, 119)}…` : t);
  switch (r.type) {
    case 'step':
      return [
        String(r.seq).padStart(3),
        'step ',
        name,
        r.status,
        `attempt=${r.attempt}`,
        `${r.duration_ms}ms${r.tries > 1 ? ` (${r.tries} tries)` : ''}`,
        r.status === 'completed' ? clip(JSON.stringify(r.result)) : `error=${clip(JSON.stringify(r.error))}`,
      ].join('  ');
    case 'sleep':
      return [String(r.seq).padStart(3), 'sleep', name, `until ${r.wake_at}`, `attempt=${r.attempt}`].join(
        '  ',
      );
    case 'waiting':
      return [
        String(r.seq).padStart(3),
        'wait ',
        name,
        r.timeout_at === null ? 'for the signal' : `for the signal, or until ${r.timeout_at}`,
        `attempt=${r.attempt}`,
      ].join('  ');
    case 'waited':
      return [
        String(r.seq).padStart(3),
        'wait ',
        name,
        r.outcome === 'timeout' ? 'timed out' : `signalled by ${r.sent_by ?? 'unknown'}`,
        `attempt=${r.attempt}`,
        ...(r.outcome === 'signal' ? [clip(JSON.stringify(r.payload))] : []),
      ].join('  ');
    case 'reset':
      return `  -  reset  ${name}  from place ${r.from_seq}  by ${r.actor ?? 'unknown'} (${r.actor_kind})${r.reason ? `: ${JSON.stringify(r.reason)}` : ''}`;
  }
}

/**
 * A value as one table cell: characters a terminal would act on (C0 and C1 controls, line and paragraph
 * separators, bidirectional overrides) written as `\u{…}`, and, past `max` characters, cut with an ellipsis.
 */
export function cell(value: string, max = Number.POSITIVE_INFINITY): string {
  const safe = value.replace(
    // biome-ignore lint/suspicious/noControlCharactersInRegex: these are the characters escaped
    /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]/g,
    (c) => `\\u{${c.codePointAt(0)!.toString(16)}}`,
  );
  return safe.length > max ? `${safe.slice(0, max - 1)}…` : safe;
}

/** Rows under a header, each column as wide as its widest cell, two spaces apart (the last one not padded). */
export function table(header: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  const widths = header.map((h, k) => Math.max(h.length, ...rows.map((r) => (r[k] ?? '').length)));
  const line = (r: readonly string[]) =>
    r
      .map((c, k) => (k === r.length - 1 ? c : c.padEnd(widths[k]!)))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)].join('\n');
}

/** An ISO time as a table shows it (`2026-01-15 12:00:00`, UTC), or `—` for none. */
export const when = (iso: string | null): string => (iso ? iso.replace('T', ' ').slice(0, 19) : '—');
