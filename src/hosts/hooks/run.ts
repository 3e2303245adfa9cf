// What each host hook does to the store. A host session (a Claude Code or Codex conversation) has its own
// workflow-sessions document, `<host>-<session id>`, whose one session holds the plan: the todos its todo
// tools write, the decisions and blockers the agent logs. A sub-agent's todos go to a document of its own
// (`<doc>--<agent id>`), so parallel sub-agents never write one list, and it is a delegation of the parent
// session from SubagentStart to SubagentStop (gates F and G). Every write is a kind operation: one CAS commit,
// re-run on the newer version when another hook wrote first, so parallel hooks lose no update.
import { realpathSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import type { DocumentRecord, StatusCounts, WorkItem } from '../../core/types.js';
import { type ErrorCode, InvalidInputError, isAgentStateError } from '../../errors.js';
import { inside } from '../../fs/confine.js';
import type { Instance } from '../../instance/instance.js';
import type { Session, Todo, WorkflowSessions } from '../../kinds/workflow-sessions/model.js';
import { callOperation } from '../../service/edge.js';
import type { Operation } from '../../service/operation.js';
import { DOCUMENT_OPERATIONS } from '../../service/operations/documents.js';
import { WORK_OPERATIONS } from '../../service/operations/work.js';
import { type ContextParts, renderContext } from './context.js';
import type { HookPayload } from './input.js';
import { lastListInTranscript, type TodoChange, type TodoEntry, todoChange } from './todos.js';

const KIND = 'workflow-sessions';

/** What a hook call did: the host's answer (printed as JSON on stdout), and what it wrote. */
export interface HookOutcome {
  /** The JSON the host reads on stdout, when the event has an answer. */
  output?: Record<string, unknown>;
  /** The additional context given to the agent (SessionStart, SubagentStart). */
  context?: string;
  /** The store writes made, as `operation document` (for --json and the tests). */
  wrote: string[];
  /** What the hook left out and why (a transcript it would not read): the host shows them, the hook goes on. */
  warnings?: Array<{ code: ErrorCode; message: string }>;
}

/** How a hook call reads outside the store. */
export interface HookOptions {
  /**
   * The folders a transcript may really be in (symlinks resolved): the host's own folder
   * (hostFolder) and the project. A transcript_path anywhere else is not read.
   */
  transcriptRoots: readonly string[];
}

/**
 * The folder a host keeps its sessions' transcripts under: Claude Code's configuration folder
 * (CLAUDE_CONFIG_DIR, else ~/.claude; transcripts in its projects/), Codex's home (CODEX_HOME, else ~/.codex;
 * rollouts in its sessions/).
 */
export function hostFolder(format: HookPayload['format'], env: NodeJS.ProcessEnv = process.env): string {
  const set = format === 'codex' ? env.CODEX_HOME : env.CLAUDE_CONFIG_DIR;
  return resolve(set || join(homedir(), format === 'codex' ? '.codex' : '.claude'));
}

const PREFIX: Record<HookPayload['format'], string> = { 'claude-code': 'claude', codex: 'codex' };

/** The session's document id: `claude-<session>` (or the sub-agent's, `claude-<session>--<agent>`). */
export function docIdOf(p: HookPayload, agent: boolean = p.agent !== undefined): string {
  const base = `${PREFIX[p.format]}-${p.session}`;
  return agent && p.agent ? `${base}--${p.agent.id}` : base;
}

/** The worker id the session (or the sub-agent) claims with: short, so a model can pass it along. */
export function workerOf(p: HookPayload, agent: boolean = p.agent !== undefined): string {
  const base = `${PREFIX[p.format]}-${p.session.slice(0, 8)}`;
  return agent && p.agent ? `${base}/${p.agent.id.slice(0, 8)}` : base;
}

/** Runs the hook's action on the store (a transcript is read only in the host's own folder unless `o` says more). */
export async function runHook(
  inst: Instance,
  p: HookPayload,
  o: HookOptions = { transcriptRoots: [hostFolder(p.format)] },
): Promise<HookOutcome> {
  switch (p.event) {
    case 'session-start': {
      const context = await sessionContext(inst, p);
      return {
        context,
        output: { hookSpecificOutput: { hookEventName: 'SessionStart', additionalContext: context } },
        wrote: [],
      };
    }
    case 'post-tool-use': {
      const change = todoChange(p.tool!.name, p.tool!.input, p.tool!.response);
      if (!change) return { wrote: [] };
      return { wrote: await applyChange(inst, p, change) };
    }
    case 'pre-compact':
    case 'stop': {
      const warnings: NonNullable<HookOutcome['warnings']> = [];
      const wrote = await reconcile(inst, p, o, warnings);
      if (p.event === 'stop' && inst.paths.dashboard) {
        const { regenerateDashboard } = await import('../../reports/dashboard.js');
        await regenerateDashboard(inst);
        wrote.push('dashboard');
      }
      return { wrote, ...(warnings.length > 0 ? { warnings } : {}) };
    }
    case 'subagent-start':
      return subagentStart(inst, p);
    case 'subagent-stop':
      return { wrote: await subagentStop(inst, p) };
  }
}

/**
 * Runs an operation of the table through the edges' one pipeline, as the machine's user (a hook runs as the
 * CLI does: it names its own actor, `tool`).
 */
const call = <T = unknown>(inst: Instance, op: HookOperation, input: Record<string, unknown>) =>
  callOperation(inst, OPERATIONS.get(op)!, input) as Promise<T>;

/**
 * The operations the hooks run, taken from their groups rather than the whole table: a hook is a short
 * process on every tool call of the host, and loads only what it runs.
 */
const OPERATIONS = new Map(
  ([...DOCUMENT_OPERATIONS, ...WORK_OPERATIONS] as unknown as Operation<never, unknown>[]).map((o) => [
    o.name,
    o,
  ]),
);
type HookOperation = 'get_document' | 'apply' | 'list_items' | 'count_items' | 'release' | 'list_documents';

/** A session document, or null when there is none. */
async function findPlan(inst: Instance, doc: string): Promise<DocumentRecord | null> {
  try {
    return await call<DocumentRecord>(inst, 'get_document', { kind: KIND, id: doc });
  } catch (err) {
    if (isAgentStateError(err, 'NOT_FOUND')) return null;
    throw err;
  }
}

/** The document's active session, or null. */
async function activeSession(inst: Instance, doc: string): Promise<Session | null> {
  const d = await findPlan(inst, doc);
  if (!d) return null;
  const w = d.body as unknown as WorkflowSessions;
  return w.sessions.find((s) => s.id === w.activeSessionId && s.status === 'active') ?? null;
}

function writer(p: HookPayload) {
  return {
    actor: workerOf(p),
    actor_kind: 'tool' as const,
    reason: `${p.format} ${p.event}${p.tool ? ` ${p.tool.name}` : ''}`,
  };
}

/** Runs a workflow-sessions operation on `doc`. */
async function apply(
  inst: Instance,
  p: HookPayload,
  doc: string,
  operation: string,
  args: Record<string, unknown>,
): Promise<string> {
  await call(inst, 'apply', { kind: KIND, id: doc, operation, args, ...writer(p) });
  return `${operation} ${doc}`;
}

/**
 * The document's active session, started first when there is none (a hook racing to start it is not an
 * error): one read when it is active already, as it is for every hook after a session's first.
 */
async function ensureSession(
  inst: Instance,
  p: HookPayload,
  doc: string,
  wrote: string[],
): Promise<Session | null> {
  const found = await activeSession(inst, doc);
  if (found) return found;
  const label = p.agent
    ? `${p.agent.type ?? 'sub-agent'} ${p.agent.id} of ${docIdOf(p, false)}`
    : `${p.format} session ${p.session}`;
  try {
    wrote.push(await apply(inst, p, doc, 'start-session', { label, workflow: doc }));
  } catch (err) {
    // Another hook of this session started it between our read and our write.
    if (!(isAgentStateError(err) && err.code === 'INVALID_TRANSITION')) throw err;
  }
  return activeSession(inst, doc);
}

const sameTodos = (a: readonly Todo[], b: readonly TodoEntry[]) =>
  a.length === b.length &&
  a.every(
    (t, i) => String(t.id) === String(b[i]!.id) && t.title === b[i]!.title && t.status === b[i]!.status,
  );

async function applyChange(inst: Instance, p: HookPayload, change: TodoChange): Promise<string[]> {
  const doc = docIdOf(p);
  const wrote: string[] = [];
  const s = await ensureSession(inst, p, doc, wrote);
  switch (change.op) {
    case 'replace': {
      if (s && sameTodos(s.todos, change.todos)) return wrote;
      wrote.push(await apply(inst, p, doc, 'set-todos', { todos: change.todos }));
      return wrote;
    }
    case 'remove':
      try {
        wrote.push(await apply(inst, p, doc, 'remove-todo', { todo: change.id }));
      } catch (err) {
        // Gone already (a repeated hook, or a task made before the hooks were set up).
        if (!(isAgentStateError(err) && err.code === 'INVALID_INPUT')) throw err;
      }
      return wrote;
    case 'upsert': {
      const known = change.id !== undefined && s?.todos.some((t) => String(t.id) === change.id);
      if (known || change.title !== undefined) {
        const title = change.title ?? s?.todos.find((t) => String(t.id) === change.id)?.title;
        wrote.push(
          await apply(inst, p, doc, 'add-todo', {
            title,
            ...(change.id === undefined ? {} : { todo: change.id }),
            ...(change.status === undefined ? {} : { status: change.status }),
            ...(change.description === undefined ? {} : { description: change.description }),
          }),
        );
      } else {
        // An update of a task the store never saw (made before the hooks): recorded under its id.
        wrote.push(
          await apply(inst, p, doc, 'add-todo', {
            title: `task ${change.id}`,
            todo: change.id,
            ...(change.status === undefined ? {} : { status: change.status }),
          }),
        );
      }
      return wrote;
    }
  }
}

/**
 * PreCompact and Stop: the last whole list in the transcript (TodoWrite, update_plan) into the session
 * document, when it is newer than the document's last change and differs from its list: a todo call whose
 * hook did not run is not lost at compaction, and an older list never overwrites a newer plan (tasks made
 * with TaskCreate after the last TodoWrite, todos the agent set through the store).
 */
async function reconcile(
  inst: Instance,
  p: HookPayload,
  o: HookOptions,
  warnings: NonNullable<HookOutcome['warnings']>,
): Promise<string[]> {
  if (!p.transcript?.endsWith('.jsonl')) return [];
  let real: string;
  try {
    real = realpathSync(p.transcript);
  } catch {
    // No transcript to read (moved, not yet written): the mirrored list stands.
    return [];
  }
  if (!insideAny(real, o.transcriptRoots)) {
    const e = new InvalidInputError(
      `transcript_path ${p.transcript}${real === resolve(p.transcript) ? '' : ` (a link to ${real})`} is outside ${o.transcriptRoots.join(' and ')}: a transcript is read only in the host's own folder or the project; ignored, the plan stands`,
      { field: 'transcript_path' },
    );
    warnings.push({ code: e.code, message: e.message });
    return [];
  }
  let last: ReturnType<typeof lastListInTranscript>;
  try {
    last = lastListInTranscript(real);
  } catch {
    // Gone between the two looks, or not a file: the mirrored list stands.
    return [];
  }
  if (!last || last.at === null) return [];
  const s = await activeSession(inst, docIdOf(p));
  if (s?.updatedAt && last.at <= Date.parse(s.updatedAt)) return [];
  return applyChange(inst, p, { op: 'replace', todos: last.todos });
}

/** Whether the real path `real` lies in one of `roots` (each taken by its real path; a missing one holds nothing). */
function insideAny(real: string, roots: readonly string[]): boolean {
  return roots.some((root) => {
    let r: string;
    try {
      r = realpathSync(root);
    } catch {
      return false;
    }
    return inside(r, real);
  });
}

async function subagentStart(inst: Instance, p: HookPayload): Promise<HookOutcome> {
  const parent = docIdOf(p, false);
  const wrote: string[] = [];
  const s = await ensureSession(inst, { ...p, agent: undefined } as HookPayload, parent, wrote);
  const id = p.agent!.id;
  if (!s?.delegations?.some((d) => d.id === id)) {
    try {
      wrote.push(
        await apply(inst, p, parent, 'open-delegation', {
          delegation: id,
          agent: p.agent!.type ?? 'sub-agent',
          task: `${p.agent!.type ?? 'sub-agent'} ${id}`,
        }),
      );
    } catch (err) {
      if (!(isAgentStateError(err) && err.code === 'INVALID_INPUT')) throw err;
    }
  }
  const worker = workerOf(p);
  const held = await call<WorkItem[]>(inst, 'list_items', { status: 'in_flight', limit: 50 });
  const others = held.filter((w) => w.lease_owner !== worker);
  const lines = [
    `# agentstate — you are a sub-agent; your worker id is ${worker}.`,
    `Before you work on a task or a file, claim it with worker ${worker} (MCP claim, or \`agentstate claim --worker ${worker} --key path:<file>\` for a file): a claim no one else holds is yours alone. Resolve (or release) it when done.`,
    ...(others.length > 0
      ? [
          'Held by others (do not work on these):',
          ...others.slice(0, 20).map((w) => `- ${w.id} ${w.title.slice(0, 80)} [${w.lease_owner}]`),
        ]
      : []),
  ];
  const context = `${lines.join('\n')}\n`;
  return {
    context,
    output: { hookSpecificOutput: { hookEventName: 'SubagentStart', additionalContext: context } },
    wrote,
  };
}

/** SubagentStop: the delegation closed with the sub-agent's last message; the leases it still holds released. */
async function subagentStop(inst: Instance, p: HookPayload): Promise<string[]> {
  const parent = docIdOf(p, false);
  const wrote: string[] = [];
  const s = await activeSession(inst, parent);
  const d = s?.delegations?.find((x) => x.id === p.agent!.id);
  if (d && d.status === 'in-progress') {
    const last = p.agent!.lastMessage?.trim();
    try {
      wrote.push(
        await apply(inst, p, parent, 'close-delegation', {
          delegation: d.id,
          result_summary: last ? last.slice(0, 2000) : 'the sub-agent stopped (no final message)',
        }),
      );
    } catch (err) {
      // Closed by a racing hook between our read and our write.
      if (!(isAgentStateError(err) && err.code === 'INVALID_TRANSITION')) throw err;
    }
  }
  const worker = workerOf(p);
  for (const item of await call<WorkItem[]>(inst, 'list_items', { status: 'in_flight', limit: 1000 })) {
    if (item.lease_owner !== worker) continue;
    try {
      await call(inst, 'release', { id: item.id, worker, actor_kind: 'tool' });
      wrote.push(`release ${item.id}`);
    } catch (err) {
      // The lease ran out or was taken over meanwhile: nothing of this sub-agent's to give back.
      if (!(isAgentStateError(err) && err.code === 'LEASE_LOST')) throw err;
    }
  }
  return wrote;
}

/** How far back another session's open plan is shown. */
const OTHER_PLANS_MS = 7 * 24 * 3600 * 1000;

/** SessionStart: the context that puts the plan back (reads only). */
async function sessionContext(inst: Instance, p: HookPayload): Promise<string> {
  const doc = docIdOf(p, false);
  const worker = workerOf(p, false);
  const [found, counts, inFlight, ready, waiting, stuck, docs] = await Promise.all([
    findPlan(inst, doc),
    call<StatusCounts>(inst, 'count_items', {}),
    call<WorkItem[]>(inst, 'list_items', { status: 'in_flight', limit: 200 }),
    call<WorkItem[]>(inst, 'list_items', { ready: true, limit: 5 }),
    call<WorkItem[]>(inst, 'list_items', { status: 'waiting_human', limit: 50 }),
    call<WorkItem[]>(inst, 'list_items', { blocked_on_failure: true, limit: 20 }),
    call<Array<{ id: string; updated_at: string }>>(inst, 'list_documents', { kind: KIND, limit: 100_000 }),
  ]);
  let plan: ContextParts['plan'] = null;
  if (found) {
    const { resumeSummary } = await import('../../kinds/workflow-sessions/operations.js');
    const r = resumeSummary(found.body);
    if (r.activeSession) {
      plan = {
        label: r.activeSession.label,
        phase: r.phase,
        todos: r.todos,
        decisions: r.decisions,
        blockers: r.unresolvedBlockers,
        delegations: r.delegationsInProgress,
      };
    }
  }
  const mine = (owner: string | null) => owner === worker || (owner?.startsWith(`${worker}/`) ?? false);
  const now = inst.clock();
  const prefix = `${PREFIX[p.format]}-`;
  const recent = docs
    .filter(
      (d) =>
        d.id !== doc &&
        d.id.startsWith(prefix) &&
        !d.id.includes('--') &&
        now - Date.parse(d.updated_at) < OTHER_PLANS_MS,
    )
    .sort((a, b) => (a.updated_at < b.updated_at ? 1 : -1))
    .slice(0, 5);
  const otherPlans: ContextParts['otherPlans'] = [];
  for (const d of recent) {
    const body = (await findPlan(inst, d.id))?.body as unknown as WorkflowSessions | undefined;
    const active = body?.sessions.find((s) => s.status === 'active');
    const open = (active?.todos ?? []).filter((t) => t.status !== 'completed');
    if (open.length > 0)
      otherPlans.push({ doc: d.id, open: open.length, updated: d.updated_at, todos: open });
  }
  const brief = (w: { id: string; title: string }) => ({ id: w.id, title: w.title });
  return renderContext({
    source: p.source ?? 'startup',
    worker,
    doc,
    plan,
    held: inFlight
      .filter((w) => mine(w.lease_owner))
      .map((w) => ({ ...brief(w), until: w.lease_expires_at })),
    heldByOthers: inFlight
      .filter((w) => !mine(w.lease_owner))
      .map((w) => ({ ...brief(w), worker: w.lease_owner ?? '?' })),
    ready: ready.map(brief),
    readyCount: counts.pending,
    waitingHuman: waiting.map(brief),
    blockedOnFailure: stuck.map(brief),
    otherPlans,
  });
}
