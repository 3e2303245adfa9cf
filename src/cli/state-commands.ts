// `agentstate state …`: versioned documents from the command line (bodies from a file or stdin).
import { type Command, Option } from 'commander';
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
import { ACTOR_KINDS } from '../core/types.js';
import { given, int, json, list, runCommand } from './context.js';
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

export function addStateCommands(program: Command): void {
  program.commandsGroup('Documents:');
  const state = program
    .command('state')
    .description('versioned documents: compare-and-swap commits with history');

  state
    .command('get <kind> <id>')
    .description('print a document (latest, or --version N; --path for only some fields)')
    .option('-v, --version <n>', 'a past version', int('--version'))
    .option('-p, --path <path>', 'only this field (dot path or JSON pointer; repeatable)', list)
    .action((kind: string, id: string, o, cmd: Command) =>
      runCommand<DocumentRecord | Projection>(
        cmd,
        'get_document',
        { kind, id, ...given('version', o.version), ...given('paths', o.path) },
        (r) => {
          if (!('values' in r)) {
            return `# ${kind}/${id} v${r.version} (${r.updated_at})\n${JSON.stringify(r.body, null, 2)}`;
          }
          if (r.missing.length > 0) process.stderr.write(`missing: ${r.missing.join(', ')}\n`);
          return o.path.length === 1 && r.missing.length === 0
            ? JSON.stringify(r.values[o.path[0]], null, 2)
            : JSON.stringify(r, null, 2);
        },
      ),
    );

  state
    .command('commit <kind> <id>')
    .description(
      'commit a new version if the document is still at --expect (STATE_CONFLICT, exit 3, otherwise)',
    )
    .requiredOption('-e, --expect <version>', 'the version you read (0: must not exist yet)', int('--expect'))
    .option('-b, --body <file>', 'the whole new body (JSON file, - for stdin)')
    .option('-m, --merge <file>', 'an RFC 7396 merge patch (JSON file, - for stdin)')
    .option('--patch <file>', 'an RFC 6902 JSON Patch (JSON file, - for stdin)')
    .option('--noop', 'record an explicit no-op (needs --reason)')
    .option('-r, --reason <text>', 'why')
    .option('--actor <name>', 'who writes [default: the agent name]')
    .addOption(
      new Option('--actor-kind <kind>', 'what kind of writer').choices([...ACTOR_KINDS]).default('human'),
    )
    .option('--role <role>', 'the writer role, for kinds with field permissions')
    .option(
      '--provenance <json>',
      'provenance record (model_id, input_hash|prompt_ref, run_id, step_id)',
      json('--provenance'),
    )
    .option('--write-id <id>', 'idempotency key: a retry returns the original result')
    .option('--override <rules>', 'rules deliberately overridden (comma-separated; needs --reason)', list)
    .action(async (kind: string, id: string, o, cmd: Command) => {
      const input: Record<string, unknown> = {
        kind,
        id,
        expected_version: o.expect,
        actor_kind: o.actorKind,
      };
      if (o.body !== undefined) input.body = await readJsonArg(o.body, 'body');
      if (o.merge !== undefined) input.merge_patch = await readJsonArg(o.merge, 'merge_patch');
      if (o.patch !== undefined) input.json_patch = await readJsonArg(o.patch, 'json_patch');
      if (o.noop) input.noop = true;
      if (o.reason !== undefined) input.reason = o.reason;
      if (o.actor !== undefined) input.actor = o.actor;
      if (o.role !== undefined) input.role = o.role;
      if (o.provenance !== undefined) input.provenance = o.provenance;
      if (o.writeId !== undefined) input.write_id = o.writeId;
      if (o.override !== undefined) input.override = { rules: o.override, reason: o.reason ?? '' };
      await runCommand<CommitResult>(cmd, 'commit', input, (r) =>
        r.replayed
          ? `${kind}/${id} v${r.version} (retry of write ${r.write_id}: already committed)`
          : r.noop
            ? `${kind}/${id} v${r.version} unchanged (no-op recorded)`
            : r.changed
              ? `${kind}/${id} v${r.previous_version} → v${r.version}`
              : `${kind}/${id} v${r.version}: nothing changed, nothing written`,
      );
    });

  state
    .command('history <kind> <id>')
    .description('every commit of a document, no-ops included')
    .option('--after <seq>', 'page after this entry', int('--after'))
    .option('-n, --limit <n>', 'entries per page [default: 100]', int('--limit'))
    .option('--reverse', 'newest first')
    .action((kind: string, id: string, o, cmd: Command) =>
      runCommand<{ entries: HistoryEntry[]; next_after: number | null }>(
        cmd,
        'history',
        {
          kind,
          id,
          ...given('after', o.after),
          ...given('limit', o.limit),
          ...(o.reverse && { reverse: true }),
        },
        (h) => formatHistory(h.entries) + (h.next_after !== null ? `\n(more: --after ${h.next_after})` : ''),
      ),
    );

  state
    .command('diff <kind> <id> <from> [to]')
    .description('what changed between two versions, as an RFC 6902 JSON Patch (to defaults to the latest)')
    .action((kind: string, id: string, from: string, to: string | undefined, _o, cmd: Command) =>
      runCommand<{ from: number; to: number; patch: JsonPatchOp[] }>(
        cmd,
        'diff',
        { kind, id, from: int('from')(from), ...(to === undefined ? {} : { to: int('to')(to) }) },
        (d) => `${kind}/${id} v${d.from} → v${d.to}\n${formatPatch(d.patch)}`,
      ),
    );

  state
    .command('fork <kind> <id> <new-id>')
    .description('copy a version into a new document, recording where it came from')
    .option('-v, --version <n>', 'the version to fork [default: latest]', int('--version'))
    .option('-r, --reason <text>', 'why')
    .action((kind: string, id: string, newId: string, o, cmd: Command) =>
      runCommand<CommitResult>(
        cmd,
        'fork',
        {
          kind,
          id,
          new_id: newId,
          actor_kind: 'human',
          ...given('version', o.version),
          ...given('reason', o.reason),
        },
        () => `${kind}/${newId} v1 forked from ${kind}/${id}`,
      ),
    );

  state
    .command('log <kind> <id>')
    .description("the document's event stream: commits, no-ops and what they caused")
    .option('-n, --limit <n>', 'at most n events [default: 100]', int('--limit'))
    .action((kind: string, id: string, o, cmd: Command) =>
      runCommand<EventRecord[]>(
        cmd,
        'read_events',
        { stream: `doc:${kind}/${id}`, limit: o.limit ?? 100 },
        (events) =>
          events.length === 0
            ? 'no events'
            : events
                .map((e) => {
                  const d = (e.data ?? {}) as {
                    version?: number;
                    noop?: boolean;
                    agent_type?: unknown;
                    fields?: unknown;
                  };
                  const v = d.version === undefined ? '' : ` v${d.version}${d.noop ? ' (no-op)' : ''}`;
                  // Grid's grid_state_updated: the role written as and the fields changed.
                  const role = typeof d.agent_type === 'string' ? ` as ${d.agent_type}` : '';
                  const f = Array.isArray(d.fields) ? d.fields : null;
                  const fields =
                    f === null
                      ? ''
                      : `: ${f.slice(0, 6).join(', ') || '(none)'}${f.length > 6 ? ` +${f.length - 6} more` : ''}`;
                  return `#${e.position}  ${e.created_at}  ${e.type}${v}${e.actor ? `  by ${e.actor}` : ''}${role}${fields}`;
                })
                .join('\n'),
      ),
    );

  state
    .command('list')
    .description('documents of this instance')
    .option('-k, --kind <kind>', 'only this kind')
    .action((o, cmd: Command) =>
      runCommand<Array<Omit<DocumentRecord, 'body'>>>(cmd, 'list_documents', given('kind', o.kind), (docs) =>
        docs.length === 0
          ? 'no documents'
          : docs.map((d) => `${d.kind}/${d.id}  v${d.version}  ${d.updated_at}`).join('\n'),
      ),
    );

  program
    .command('escalate <task-ir> [ambiguities...]')
    .description(
      "put a task-ir's open ambiguities (all, or those named) to a human: escalated, each with a decision item, in one commit",
    )
    .option('-r, --reason <text>', 'why')
    .option('--actor <name>', 'who escalates [default: the agent name]')
    .addOption(
      new Option('--actor-kind <kind>', 'what kind of writer').choices([...ACTOR_KINDS]).default('human'),
    )
    .option(
      '--provenance <json>',
      'provenance record (model_id, input_hash|prompt_ref, run_id, step_id)',
      json('--provenance'),
    )
    .action((id: string, ambiguities: string[], o, cmd: Command) =>
      runCommand<EscalateResult>(
        cmd,
        'escalate',
        {
          id,
          actor_kind: o.actorKind,
          ...given('ambiguities', ambiguities.length > 0 ? ambiguities : undefined),
          ...given('actor', o.actor),
          ...given('provenance', o.provenance),
          ...given('reason', o.reason),
        },
        (r) => formatEscalation(id, r),
      ),
    );
}

type EscalateResult = CommitResult & { decisions: WorkItem[] };

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
