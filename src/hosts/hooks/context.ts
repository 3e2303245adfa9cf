// The text a SessionStart hook gives the host as additional context: what the agent must not lose at a
// compaction or a restart (its open todos, decisions, blockers, delegations, its held work and what others
// hold, the human decisions waiting), within a token budget. Every open todo and decision is listed by its
// id; when the list does not fit, titles are shortened before anything is left out, and what is left out is
// counted and named as where to read it.
import type { Blocker, Decision, Delegation, Todo } from '../../kinds/workflow-sessions/model.js';

/** The most tokens the context may take (the issue's 1.5k). */
export const CONTEXT_TOKENS = 1500;

/**
 * Tokens of `text`, estimated from above: one per 3 UTF-8 bytes. English prose is about 4 bytes a token in
 * Claude's and OpenAI's tokenizers and code or ids fewer, so the estimate errs on the long side.
 */
export const estimateTokens = (text: string): number => Math.ceil(Buffer.byteLength(text) / 3);

interface Brief {
  id: string;
  title: string;
}

/** What the context is made of. */
export interface ContextParts {
  /** Why the session starts: startup, resume, compact, clear. */
  source: string;
  /** The worker id the agent claims with. */
  worker: string;
  /** The session document (`workflow-sessions/<doc>`), and its plan when it has one. */
  doc: string;
  plan: {
    label: string;
    phase: string | null;
    todos: Todo[];
    decisions: Decision[];
    blockers: Blocker[];
    delegations: Delegation[];
  } | null;
  held: Array<Brief & { until: string | null }>;
  heldByOthers: Array<Brief & { worker: string }>;
  ready: Brief[];
  readyCount: number;
  waitingHuman: Brief[];
  blockedOnFailure: Brief[];
  /** Other sessions of the project that still have open todos, most recently changed first. */
  otherPlans: Array<{ doc: string; open: number; updated: string; todos: Todo[] }>;
}

const clip = (s: string, n: number) => (s.length > n ? `${s.slice(0, Math.max(1, n - 1))}…` : s);
const oneLine = (s: string) => s.replace(/\s+/g, ' ').trim();
const mark = (t: Todo) => (t.status === 'in-progress' ? '[~]' : t.status === 'completed' ? '[x]' : '[ ]');

/** The context text, at most `budget` tokens (estimateTokens). */
export function renderContext(p: ContextParts, budget: number = CONTEXT_TOKENS): string {
  // Titles are shortened step by step until the whole fits; at the shortest, lists are cut and counted.
  for (const width of [160, 100, 70, 48, 32, 20]) {
    const text = render(p, width, Number.POSITIVE_INFINITY);
    if (estimateTokens(text) <= budget) return text;
  }
  let keep = 200;
  for (;;) {
    const text = render(p, 20, keep);
    if (estimateTokens(text) <= budget || keep === 0) return text;
    keep = Math.floor(keep * 0.7);
  }
}

function render(p: ContextParts, width: number, keep: number): string {
  const t = (s: string) => clip(oneLine(s), width);
  const lines: string[] = [];
  const after =
    p.source === 'compact'
      ? 'The context was just compacted: this is the plan as the store holds it. Continue from it; do not restart.'
      : p.source === 'resume'
        ? 'This session resumes: continue from the plan below.'
        : 'Read it before you plan: it is what this project holds now.';
  lines.push(`# agentstate (${p.source}) — ${after}`);
  lines.push(
    `Your worker id is ${p.worker}: pass it as worker to claim, heartbeat and resolve (MCP or \`agentstate claim --worker ${p.worker}\`). Your plan is document workflow-sessions/${p.doc}.`,
  );
  const cut = <T>(list: readonly T[], one: (x: T) => string, rest: string): string[] => {
    const shown = list.slice(0, keep).map(one);
    if (list.length > shown.length) shown.push(`+${list.length - shown.length} more ${rest}`);
    return shown;
  };
  if (p.plan) {
    const open = p.plan.todos.filter((x) => x.status !== 'completed');
    const done = p.plan.todos.length - open.length;
    lines.push(
      `## Plan "${t(p.plan.label)}"${p.plan.phase ? `, phase ${t(p.plan.phase)}` : ''}: ${open.length} open, ${done} done`,
    );
    // In progress first, then in list order.
    const ordered = [
      ...open.filter((x) => x.status === 'in-progress'),
      ...open.filter((x) => x.status !== 'in-progress'),
    ];
    lines.push(
      ...cut(ordered, (x) => `${mark(x)} ${x.id} ${t(x.title)}`, `open todos (resume_workflow ${p.doc})`),
    );
    if (p.plan.decisions.length > 0) {
      lines.push('## Decisions');
      lines.push(
        ...cut(
          p.plan.decisions,
          (d) =>
            `- [${d.type}] ${t(d.description)}${d.workaround && d.correct_solution ? ` → correct: ${t(d.correct_solution)}` : ''}`,
          'decisions',
        ),
      );
    }
    if (p.plan.blockers.length > 0) {
      lines.push('## Open blockers');
      lines.push(...cut(p.plan.blockers, (b) => `- ${b.id} ${t(b.description)}`, 'blockers'));
    }
    if (p.plan.delegations.length > 0) {
      lines.push('## Sub-agents still working');
      lines.push(...cut(p.plan.delegations, (d) => `- ${d.id} ${d.agent}: ${t(d.task)}`, 'delegations'));
    }
  } else {
    lines.push(
      '## Plan: none stored for this session yet (your todo list is mirrored here as you write it).',
    );
  }
  const items = (title: string, list: Brief[], extra: (x: Brief) => string = () => '') => {
    if (list.length === 0) return;
    lines.push(`## ${title}`);
    lines.push(...cut(list, (x) => `- ${x.id} ${t(x.title)}${extra(x)}`, 'items'));
  };
  items('Held by you (heartbeat or resolve them)', p.held, (x) => {
    const until = (x as Brief & { until: string | null }).until;
    return until ? ` (lease until ${until})` : '';
  });
  items(
    'Held by others (do not work on these)',
    p.heldByOthers,
    (x) => ` [${(x as Brief & { worker: string }).worker}]`,
  );
  items('Waiting for a human decision (MCP ask_human puts it to the person here)', p.waitingHuman);
  items('Blocked behind a failed item', p.blockedOnFailure);
  if (p.ready.length > 0) {
    items(`Ready to claim (${p.readyCount})`, p.ready);
  }
  if (p.otherPlans.length > 0) {
    lines.push('## Other sessions with open todos');
    lines.push(
      ...cut(
        p.otherPlans,
        (o) =>
          `- ${o.doc} (${o.open} open, updated ${o.updated}): ${o.todos
            .slice(0, 3)
            .map((x) => `${mark(x)} ${clip(oneLine(x.title), Math.min(width, 40))}`)
            .join(' | ')}`,
        'sessions',
      ),
    );
  }
  lines.push(
    `More: the MCP tool resume (held, ready, events), or \`agentstate resume ${p.doc}\` (this plan, whole).`,
  );
  return `${lines.join('\n')}\n`;
}
