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
import { formatCommit, formatDocEvent, formatEscalation, formatHistory, formatPatch } from './format.js';
import { addCommands, command } from './generate.js';
import { readInputText } from './read-input.js';

/** Reads JSON from a file path, or stdin for `-` (at most 4 MiB of UTF-8). */
async function readJsonArg(pathOrDash: string, what: string): Promise<Json> {
  const text = await readInputText(pathOrDash, what);
  return parseJsonInput(text, `${what} (${pathOrDash === '-' ? 'stdin' : pathOrDash})`);
}

/** A projection of some fields of a document (get_document with paths). */
interface Projection {
  values: Record<string, Json>;
  missing: string[];
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
    flags: {
      after: { value: 'kind/id', help: 'the documents after this one (the last a page showed)' },
      limit: { short: 'n', help: 'at most n [default: 1000]' },
    },
    human: (docs) =>
      docs.length === 0
        ? 'no documents'
        : docs.map((d) => `${d.kind}/${d.id}  v${d.version}  ${d.updated_at}`).join('\n'),
  }),
];

export const ESCALATE_COMMAND = command<CommitResult & { decisions: WorkItem[] }>({
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
