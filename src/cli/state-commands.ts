// `agentstate state …`: versioned documents from the command line (bodies from a file or stdin).
import type { Command } from 'commander';
import { parseJsonInput } from '../core/input.js';
import type {
  CommitResult,
  DocumentRecord,
  EventRecord,
  HistoryEntry,
  Json,
  JsonPatchOp,
  WorkItem,
} from '../core/types.js';
import { list } from './context.js';
import { addCommands, command } from './generate.js';
import { readInputText } from './read-input.js';

/** Reads JSON from a file path, or stdin for `-` (at most 4 MiB of UTF-8). */
async function readJsonArg(pathOrDash: string, what: string): Promise<Json> {
  const text = await readInputText(pathOrDash, what);
  return parseJsonInput(text, `${what} (${pathOrDash === '-' ? 'stdin' : pathOrDash})`);
}

function short(v: unknown, max = 70): string {
  const s = JSON.stringify(v) ?? 'undefined';
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}

/** A projection of some fields of a document (get_document with paths). */
interface Projection {
  values: Record<string, Json>;
  missing: string[];
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

/** A flag that names a JSON file (or `-`, stdin) the command reads: the path now, the JSON in `route`. */
const file = (flags: string, help: string) => ({ flags, help, parse: String });

/** Reads the fields given as files (body, merge_patch, json_patch) into their JSON. */
async function withFiles(input: Record<string, unknown>): Promise<Record<string, unknown>> {
  const out = { ...input };
  for (const f of ['body', 'merge_patch', 'json_patch'] as const) {
    if (typeof input[f] === 'string') out[f] = await readJsonArg(input[f], f);
  }
  return out;
}

/** One commit's outcome on one line. */
function formatCommit(kind: unknown, id: unknown, r: CommitResult): string {
  return r.replayed
    ? `${kind}/${id} v${r.version} (retry of write ${r.write_id}: already committed)`
    : r.noop
      ? `${kind}/${id} v${r.version} unchanged (no-op recorded)`
      : r.changed
        ? `${kind}/${id} v${r.previous_version} → v${r.version}`
        : `${kind}/${id} v${r.version}: nothing changed, nothing written`;
}

/** One event of a document's stream: the version it made, and Grid's role and fields. */
function formatDocEvent(e: EventRecord): string {
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

export const STATE_COMMANDS = [
  command<DocumentRecord | Projection>({
    usage: 'get <kind> <id>',
    op: 'get_document',
    description: 'print a document (latest, or --version N; --path for only some fields)',
    flags: {
      paths: { flags: '-p, --path <path>', help: 'only this field (dot path or JSON pointer; repeatable)' },
    },
    human: (r, i) => {
      if (!('values' in r))
        return `# ${i.kind}/${i.id} v${r.version} (${r.updated_at})\n${JSON.stringify(r.body, null, 2)}`;
      if (r.missing.length > 0) process.stderr.write(`missing: ${r.missing.join(', ')}\n`);
      const paths = i.paths as string[];
      return paths.length === 1 && r.missing.length === 0
        ? JSON.stringify(r.values[paths[0]!], null, 2)
        : JSON.stringify(r, null, 2);
    },
  }),
  command<CommitResult>({
    usage: 'commit <kind> <id>',
    op: 'commit',
    description:
      'commit a new version if the document is still at --expect (STATE_CONFLICT, exit 3, otherwise)',
    defaults: { actor_kind: 'human' },
    flags: {
      body: file('-b, --body <file>', 'the whole new body (JSON file, - for stdin)'),
      merge_patch: file('-m, --merge <file>', 'an RFC 7396 merge patch (JSON file, - for stdin)'),
      json_patch: file('--patch <file>', 'an RFC 6902 JSON Patch (JSON file, - for stdin)'),
      override: {
        flags: '--override <rules>',
        help: 'rules deliberately overridden (comma-separated; needs --reason)',
        parse: list,
      },
    },
    route: async (input) => {
      const i = await withFiles(input);
      if (Array.isArray(i.override)) i.override = { rules: i.override, reason: i.reason ?? '' };
      return { op: 'commit', input: i };
    },
    human: (r, i) => formatCommit(i.kind, i.id, r),
  }),
  command<{ entries: HistoryEntry[]; next_after: number | null }>({
    usage: 'history <kind> <id>',
    op: 'history',
    human: (h) =>
      formatHistory(h.entries) + (h.next_after !== null ? `\n(more: --after ${h.next_after})` : ''),
  }),
  command<{ from: number; to: number; patch: JsonPatchOp[] }>({
    usage: 'diff <kind> <id> <from> [to]',
    op: 'diff',
    human: (d, i) => `${i.kind}/${i.id} v${d.from} → v${d.to}\n${formatPatch(d.patch)}`,
  }),
  command<CommitResult>({
    usage: 'fork <kind> <id> <new-id>',
    op: 'fork',
    defaults: { actor_kind: 'human' },
    flags: { version: { short: 'v', help: 'the version to fork [default: latest]' } },
    human: (_r, i) => `${i.kind}/${i.new_id} v1 forked from ${i.kind}/${i.id}`,
  }),
  command<EventRecord[]>({
    usage: 'log <kind> <id>',
    op: 'read_events',
    description: "the document's event stream: commits, no-ops and what they caused",
    only: ['limit'],
    route: ({ kind, id, ...rest }) => ({
      op: 'read_events',
      input: { stream: `doc:${kind}/${id}`, limit: 100, ...rest },
    }),
    human: (events) => (events.length === 0 ? 'no events' : events.map(formatDocEvent).join('\n')),
  }),
  command<Array<Omit<DocumentRecord, 'body'>>>({
    usage: 'list',
    op: 'list_documents',
    description: 'documents of this instance',
    human: (docs) =>
      docs.length === 0
        ? 'no documents'
        : docs.map((d) => `${d.kind}/${d.id}  v${d.version}  ${d.updated_at}`).join('\n'),
  }),
];

type EscalateResult = CommitResult & { decisions: WorkItem[] };

export const ESCALATE_COMMAND = command<EscalateResult>({
  usage: 'escalate <task-ir> [ambiguities...]',
  op: 'escalate',
  args: { 'task-ir': 'id' },
  defaults: { actor_kind: 'human' },
  human: (r, i) => formatEscalation(String(i.id), r),
});

export function addStateCommands(program: Command): void {
  program.commandsGroup('Documents:');
  const state = program
    .command('state')
    .description('versioned documents: compare-and-swap commits with history');
  addCommands(state, STATE_COMMANDS);
  addCommands(program, [ESCALATE_COMMAND]);
}

function formatEscalation(id: string, r: EscalateResult): string {
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
