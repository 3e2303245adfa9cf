// Retrospective: a Markdown summary of one time window (done, failed, durations, retries, reasons,
// busiest event types), written to retros/.
import { join } from 'node:path';
import { checkInput } from '../core/input.js';
import { parseTime } from '../core/time.js';
import type { EventRecord } from '../core/types.js';
import { InvalidInputError } from '../errors.js';
import { writeFileAtomic } from '../fs/files.js';
import type { Instance } from '../instance/instance.js';
import { duration, table } from './markdown.js';

/** The window `retrospective` reports on: [since, until). */
export interface RetroInput {
  /** Start of the window: ISO time or a duration before now (`24h`). @default 24h before `until` */
  since?: string;
  /** End of the window (exclusive). @default now */
  until?: string;
}

export const RETRO_INPUT = { since: { type: 'time' }, until: { type: 'time' } } as const;

/** The retro's numbers: outcomes, reclaims and retries in the window, durations, and events written. */
export interface RetroSummary {
  done: number;
  failed: number;
  reclaimed: number;
  retried_items: number;
  /** Pending items blocked on a failed or cancelled blocker when the retro was written. */
  blocked_on_failure: number;
  median_duration_ms: number | null;
  p95_duration_ms: number | null;
  events: number;
}

/** What `retrospective` wrote: the file, the window, the numbers and the Markdown itself. */
export interface RetroResult {
  path: string;
  since: string;
  until: string;
  summary: RetroSummary;
  markdown: string;
}

const PAGE = 5000;

async function readAll(
  inst: Instance,
  types: string[],
  since: string,
  before: string,
): Promise<EventRecord[]> {
  const out: EventRecord[] = [];
  let after = 0;
  for (;;) {
    const page = await inst.events.read({ type: types, since, before, after, limit: PAGE });
    out.push(...page);
    if (page.length < PAGE) return out;
    after = page[page.length - 1]!.position;
  }
}

function percentile(sorted: number[], p: number): number | null {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
}

/** Builds the retro for [since, until) and writes it to `retros/<since>--<until>.md`. */
export async function retrospective(inst: Instance, input: RetroInput = {}): Promise<RetroResult> {
  const i = checkInput<RetroInput>('RetrospectiveSummary', input, RETRO_INPUT);
  const now = inst.clock();
  const untilMs = i.until === undefined ? now : parseTime(i.until, 'until', now);
  const sinceMs = i.since === undefined ? untilMs - 86_400_000 : parseTime(i.since, 'since', now);
  if (sinceMs >= untilMs) throw new InvalidInputError('since must be before until', { field: 'since' });
  const since = new Date(sinceMs).toISOString();
  const until = new Date(untilMs).toISOString();

  const [outcomes, typeCounts, stuck] = await Promise.all([
    readAll(inst, ['work_item_resolved', 'work_item_reclaimed'], since, until),
    inst.events.countByType(sinceMs, untilMs),
    inst.work.list({ blocked_on_failure: true, limit: 100_000 }),
  ]);
  type Outcome = { status?: string; error?: string; attempt?: number; duration_ms?: number };
  const resolved = outcomes.filter((e) => e.type === 'work_item_resolved');
  const reclaimed = outcomes.filter((e) => e.type === 'work_item_reclaimed');
  const done = resolved.filter((e) => (e.data as Outcome).status === 'done');
  const failed = outcomes.filter((e) => (e.data as Outcome).status === 'failed');
  const durations = resolved
    .map((e) => (e.data as Outcome).duration_ms)
    .filter((d): d is number => typeof d === 'number')
    .sort((a, b) => a - b);
  const retried = new Set(
    outcomes.filter((e) => ((e.data as Outcome).attempt ?? 1) > 1).map((e) => e.work_item_id),
  );
  const reasons = new Map<string, number>();
  for (const e of failed) {
    const reason = (e.data as Outcome).error ?? '(no error given)';
    reasons.set(reason, (reasons.get(reason) ?? 0) + 1);
  }
  const titles = new Map<string, string>();
  for (const e of [...done.slice(0, 30), ...failed.slice(0, 30)]) {
    if (e.work_item_id && !titles.has(e.work_item_id)) {
      titles.set(e.work_item_id, (await inst.work.find(e.work_item_id))?.title ?? '');
    }
  }
  const totalEvents = typeCounts.reduce((n, t) => n + t.count, 0);
  const summary: RetroSummary = {
    done: done.length,
    failed: failed.length,
    reclaimed: reclaimed.length,
    retried_items: retried.size,
    blocked_on_failure: stuck.length,
    median_duration_ms: percentile(durations, 0.5),
    p95_duration_ms: percentile(durations, 0.95),
    events: totalEvents,
  };
  /** The first 30 resolutions of `events`: item, title, attempt and the `last` column. */
  const outcomeTable = (events: EventRecord[], last: string, cell: (d: Outcome) => unknown) =>
    table(
      ['item', 'title', 'attempt', last],
      events.slice(0, 30).map((e) => {
        const d = e.data as Outcome;
        return [e.work_item_id, titles.get(e.work_item_id ?? ''), d.attempt ?? '', cell(d)];
      }),
    );
  const fmt = (ms: number | null) => (ms === null ? 'n/a' : duration(ms));
  const markdown = [
    `# Retrospective — ${inst.name} @ ${inst.host}`,
    '',
    `Window: ${since} → ${until}`,
    '',
    '## Summary',
    '',
    `- **${summary.done}** done, **${summary.failed}** failed, ${summary.reclaimed} lease(s) expired and reclaimed`,
    `- ${summary.retried_items} item(s) needed more than one attempt`,
    `- work duration (claim → resolve): median ${fmt(summary.median_duration_ms)}, p95 ${fmt(summary.p95_duration_ms)}, longest ${fmt(durations.at(-1) ?? null)}`,
    `- ${totalEvents} event(s) in the window`,
    '',
    '## Done',
    '',
    outcomeTable(done, 'took', (d) => (d.duration_ms === undefined ? '' : duration(d.duration_ms))) +
      (done.length > 30 ? `\n_30 of ${done.length} shown._\n` : ''),
    '## Failed',
    '',
    outcomeTable(failed, 'error', (d) => d.error ?? ''),
    `## Blocked by a failure (${stuck.length}, now)`,
    '',
    stuck.length > 0
      ? 'Pending items a failed or cancelled blocker keeps from ever running: retry the blocker (`agentstate retry <id>`) or cancel the item.\n'
      : '',
    table(
      ['item', 'title', 'failed blocker'],
      stuck.slice(0, 30).map((w) => [w.id, w.title, (w.blocked_on_failure ?? []).join(', ')]),
    ) + (stuck.length > 30 ? `\n_30 of ${stuck.length} shown._\n` : ''),
    '## Failure reasons',
    '',
    table(['reason', 'count'], [...reasons.entries()].sort((a, b) => b[1] - a[1]).slice(0, 15)),
    '## Busiest event types',
    '',
    table(
      ['type', 'count'],
      typeCounts.slice(0, 15).map((t) => [t.type, t.count]),
    ),
  ].join('\n');
  const stamp = (iso: string) => iso.replace(/[:.]/g, '-');
  const path = join(inst.paths.retros, `${stamp(since)}--${stamp(until)}.md`);
  writeFileAtomic(path, markdown);
  return { path, since, until, summary, markdown };
}
