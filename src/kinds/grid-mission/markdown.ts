// The Markdown body of `.grid/STATE.md`, regenerated from the frontmatter as in the seed's example (§6):
// mission, status, mode and a progress bar; the current position; blockers (when any); recent activity
// (from the document's recent events); active agents; the session summary; "End of Line."

import type { ViewContext } from '../../core/kind.js';
import type { Json, JsonObject } from '../../core/types.js';
import { isPlainObject } from '../rules.js';
import type { GridMission } from './schema.js';

/** Width of the progress bar, as in the seed's example. */
export const PROGRESS_BAR_WIDTH = 60;
/** Rows of the Recent Activity table. */
export const RECENT_ACTIVITY_ROWS = 10;

const oneLine = (s: string) =>
  s
    .split(/[\r\n]+/)
    .map((l) => l.trim())
    .filter(Boolean)
    .join(' ');
const cell = (s: string) => oneLine(s).replaceAll('|', '\\|') || '—';

/**
 * The bar fills by blocks complete when the block counts are known (so the seed's example, 2 of 12
 * blocks, shows 10 of 60), else by the percent.
 */
export function progressBar(p: GridMission['progress'], width = PROGRESS_BAR_WIDTH): string {
  const ratio = p.blocks_total > 0 ? p.blocks_complete / p.blocks_total : p.percent / 100;
  const filled = Math.max(0, Math.min(width, Math.floor(ratio * width + 1e-9)));
  return `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}]`;
}

const str = (v: Json | undefined) => (typeof v === 'string' && v.trim() !== '' ? v : undefined);

function activityRow(e: ViewContext['recentEvents'][number]): string {
  const data: JsonObject = isPlainObject(e.data) ? e.data : {};
  const time = /^\d{4}-\d{2}-\d{2}T(\d{2}:\d{2})/.exec(e.created_at)?.[1] ?? e.created_at;
  const version = typeof data.version === 'number' ? ` v${data.version}` : '';
  const action =
    str(data.action) ??
    str(data.summary) ??
    str(data.reason) ??
    str(data.operation) ??
    `${e.type.replaceAll('_', ' ')}${version}`;
  const result =
    str(data.result) ??
    str(data.status) ??
    (e.type === 'state_committed' ? (data.noop === true ? 'no-op' : 'success') : undefined) ??
    '—';
  return `| ${cell(time)} | ${cell(e.actor ?? '—')} | ${cell(action)} | ${cell(result)} |`;
}

/** The Markdown below the frontmatter, for a body whose caller supplied none. Ends with a newline. */
export function renderMarkdown(b: GridMission, ctx: ViewContext): string {
  const pos = b.position;
  const phaseName = pos.phase_name ?? pos.phase_id;
  const blockName = pos.block_name ?? pos.block_id;
  const out: string[] = [
    '# THE GRID - Mission State',
    '',
    `## Mission: ${oneLine(b.cluster)}`,
    '',
    `**Status:** ${b.status}`,
    `**Mode:** ${b.mode}`,
    `**Progress:** ${progressBar(b.progress)} ${b.progress.percent}%`,
    '',
    '## Current Position',
    '',
    `Phase ${pos.phase}/${b.phases.total}${phaseName ? `: ${oneLine(phaseName)}` : ''}`,
    `Block ${pos.block}${blockName ? `: ${oneLine(blockName)}` : ''}`,
    `Thread ${pos.thread}/${pos.thread_total}`,
    '',
  ];
  const blockers = b.blockers ?? [];
  if (blockers.length > 0) {
    out.push('## Blockers', '');
    for (const x of blockers) {
      const thread = x.blocking_thread ? ` (blocks thread ${oneLine(x.blocking_thread)})` : '';
      out.push(`- **${x.id}** [${x.type}]: ${oneLine(x.description)}${thread}`);
    }
    out.push('');
  }
  out.push('## Recent Activity', '');
  // One row per write: its grid_state_updated event repeats what the state_committed row shows.
  const events = ctx.recentEvents
    .filter((e) => e.type !== 'grid_state_updated')
    .slice(0, RECENT_ACTIVITY_ROWS);
  if (events.length === 0) out.push('No recent activity recorded.');
  else {
    out.push('| Time | Agent | Action | Result |', '|------|-------|--------|--------|');
    for (const e of events) out.push(activityRow(e));
  }
  out.push('', '## Active Agents', '');
  const active = b.agents?.active ?? [];
  if (active.length === 0) out.push('- none');
  for (const a of active) out.push(`- **${a.id}**: ${oneLine(a.task)} (${a.block})`);
  const budget = b.budget;
  out.push(
    '',
    '## Session Summary',
    '',
    `- Started: ${b.created_at}`,
    `- Last Update: ${b.updated_at}`,
    `- Session: ${b.session_id}`,
  );
  if (budget) {
    out.push(
      `- Agents Spawned: ${budget.spawns_this_session}`,
      `- Cost: $${budget.session_cost_usd} this session, $${budget.total_cost_usd} total`,
    );
  }
  out.push('', '---', 'End of Line.', '');
  return out.join('\n');
}
