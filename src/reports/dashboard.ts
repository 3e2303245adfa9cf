// dashboard.md: what an instance is doing now, regenerated from the store and stamped with the
// event position it reflects and the head (position:hash) that verify --head takes.

import { formatHeadAnchor } from '../core/integrity/head.js';
import { WORK_ITEM_STATUSES } from '../core/types.js';
import { attemptsText } from '../core/work/rules.js';
import { writeFileAtomic } from '../fs/files.js';
import type { Instance } from '../instance/instance.js';
import { duration, table } from './markdown.js';

const SHOWN = 20;

/** What `regenerateDashboard` wrote: the file, the event position it reflects, the item counts by status. */
export interface DashboardResult {
  path: string;
  /** The event position the dashboard reflects (0 for an empty log). */
  position: number;
  counts: Record<string, number>;
}

/** Builds the dashboard Markdown from the store. */
export async function renderDashboard(
  inst: Instance,
): Promise<{ markdown: string; position: number; counts: Record<string, number> }> {
  const now = inst.clock();
  const head = await inst.events.head();
  const position = head?.position ?? 0;
  // The head as `verify --head` takes it: kept elsewhere, it shows later whether the log was rewritten.
  const anchor = formatHeadAnchor(head);
  const counts = await inst.work.counts();
  const [inFlight, ready, blocked, stuck, waiting, failed, recent] = await Promise.all([
    inst.work.list({ status: 'in_flight', limit: SHOWN }),
    inst.work.list({ ready: true, limit: SHOWN }),
    inst.work.list({ ready: false, blocked_on_failure: false, limit: SHOWN }),
    inst.work.list({ blocked_on_failure: true, limit: SHOWN }),
    inst.work.list({ status: 'waiting_human', limit: SHOWN }),
    inst.events.read({
      type: ['work_item_resolved', 'work_item_reclaimed'],
      until: position,
      reverse: true,
      limit: 200,
    }),
    inst.events.read({ until: position, reverse: true, limit: SHOWN }),
  ]);
  const failures = failed
    .filter((e) => (e.data as { status?: string } | null)?.status === 'failed')
    .slice(0, 10);
  const blockerStatus = new Map<string, string>();
  for (const item of blocked) {
    for (const dep of item.blocked_by) {
      if (!blockerStatus.has(dep)) blockerStatus.set(dep, (await inst.work.find(dep))?.status ?? 'missing');
    }
  }
  const total = WORK_ITEM_STATUSES.reduce((n, s) => n + counts[s], 0);
  const more = (shown: number, all: number) => (all > shown ? `\n_${shown} of ${all} shown._\n` : '');

  const md = [
    `# ${inst.name} @ ${inst.host} — dashboard`,
    '',
    `<!-- agentstate:dashboard position=${position}${anchor ? ` head=${anchor}` : ''} generated_at=${new Date(now).toISOString()} -->`,
    `Reflects the store at event #${position}, ${new Date(now).toISOString()}${anchor ? ` (head \`${anchor}\`)` : ''}. Regenerate with \`agentstate dashboard\`; do not edit by hand.`,
    '',
    `## Work items (${total})`,
    '',
    table(
      ['status', 'count'],
      WORK_ITEM_STATUSES.map((s) => [s, counts[s]]),
    ),
    `## In flight (${counts.in_flight})`,
    '',
    table(
      ['id', 'title', 'owner', 'attempt', 'lease age', 'lease left'],
      inFlight.map((i) => [
        i.id,
        i.title,
        i.lease_owner,
        attemptsText(i),
        i.claimed_at ? duration(now - Date.parse(i.claimed_at)) : '',
        i.lease_expires_at ? duration(Date.parse(i.lease_expires_at) - now) : '',
      ]),
    ) + more(inFlight.length, counts.in_flight),
    `## Ready to claim`,
    '',
    table(
      ['id', 'title', 'priority', 'kind', 'waiting'],
      ready.map((i) => [i.id, i.title, i.priority, i.kind, duration(now - Date.parse(i.created_at))]),
    ),
    `## Blocked by a failure (${stuck.length}${stuck.length === SHOWN ? '+' : ''})`,
    '',
    stuck.length > 0
      ? 'These can never become ready as things stand: retry the failed blocker (`agentstate retry <id>`), or cancel the item (`agentstate cancel <id>`).\n'
      : '',
    table(
      ['id', 'title', 'failed blocker'],
      stuck.map((i) => [i.id, i.title, (i.blocked_on_failure ?? []).join(', ')]),
    ),
    `## Blocked or scheduled`,
    '',
    table(
      ['id', 'title', 'waiting on'],
      blocked.map((i) => [
        i.id,
        i.title,
        [
          ...i.blocked_by
            .filter((d) => blockerStatus.get(d) !== 'done')
            .map((d) => `${d} (${blockerStatus.get(d)})`),
          ...(i.not_before && Date.parse(i.not_before) > now ? [`not before ${i.not_before}`] : []),
        ].join(', '),
      ]),
    ),
    `## Waiting for a human (${counts.waiting_human})`,
    '',
    table(
      ['id', 'title', 'since'],
      waiting.map((i) => [i.id, i.title, i.updated_at]),
    ),
    `## Recent failures`,
    '',
    table(
      ['when', 'item', 'attempt', 'error'],
      failures.map((e) => {
        const d = e.data as { error?: string; attempt?: number };
        return [e.created_at, e.work_item_id, d.attempt ?? '', d.error ?? ''];
      }),
    ),
    `## Recent events`,
    '',
    table(
      ['#', 'time', 'type', 'stream', 'actor'],
      recent.map((e) => [e.position, e.created_at, e.type, e.stream, e.actor]),
    ),
  ].join('\n');
  return { markdown: md, position, counts };
}

/** Rewrites `dashboard.md` from the store (atomically) and returns where it is. */
export async function regenerateDashboard(inst: Instance): Promise<DashboardResult> {
  const { markdown, position, counts } = await renderDashboard(inst);
  writeFileAtomic(inst.paths.dashboard, markdown);
  return { path: inst.paths.dashboard, position, counts };
}
