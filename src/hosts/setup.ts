// `agentstate setup <host>`: the project-scoped files each coding-agent host reads, so its agent has the
// store as an MCP server and knows how to use it. Only agentstate's own entries are written: a server
// entry in the host's MCP configuration, and a marked section of its instruction file. Running it again
// changes nothing; --remove takes out exactly those entries; every other byte stays.
import { readdirSync, rmdirSync, rmSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { type ParseError, parse as parseJsonc } from 'jsonc-parser';
import { parse as parseTomlText, TomlError } from 'smol-toml';
import { decodeUtf8 } from '../core/text-input.js';
import { InvalidInputError } from '../errors.js';
import { type ProjectTarget, projectTarget } from '../fs/confine.js';
import { readRegularFile, writeFileAtomic } from '../fs/files.js';
import { MAX_VIEW_BYTES } from '../fs/text.js';
import { editBlock, editJson, editJsonList } from './edit.js';

export const HOSTS = ['claude-code', 'codex', 'cursor', 'vscode'] as const;
export type Host = (typeof HOSTS)[number];

/** The store's folder in the project, the instance every agent session of the project shares. */
export const INSTANCE_DIR = '.agentstate';
/** The command a host runs for the server, before `mcp --dir …` [default: the package's bin through npx]. */
export const DEFAULT_COMMAND = ['npx', '--no-install', 'agentstate'];

const MD_BEGIN =
  '<!-- agentstate:begin (written by `agentstate setup`; `agentstate setup --remove` takes it out) -->';
const MD_END = '<!-- agentstate:end -->';
const TOML_BEGIN = '# >>> agentstate (written by `agentstate setup codex`; `--remove` takes it out)';
const TOML_END = '# <<< agentstate';

/** What the agent is told, in each host's instruction file. */
const INSTRUCTIONS = `## agentstate: the plan and the work live in the store

This project keeps its work items, plan and decisions in agentstate (MCP server \`agentstate\`, store in
\`${INSTANCE_DIR}/\`). They survive context compaction and restarts, and parallel sessions share them.

- At the start of a session, and after the context was compacted, call \`resume\`: it lists your held
  items, the ready ones, open decisions and what changed. Continue from it; do not restart the plan.
- Before working on a task, \`claim\` it (a leased claim: no other session gets it); \`heartbeat\` on long
  work; \`resolve\` it done or failed when finished. Add new tasks with \`enqueue\`. Before editing a file
  other sessions may edit, hold it: \`claim\` with \`key: "path:<file>"\`, and \`release\` it when done.
- Pass the worker id the session start gave you as \`worker\` (sub-agents get their own).
- A decision that needs a person: \`ask_human\` asks them here when the host can show a form; otherwise it
  waits for them on the dashboard. Never answer it yourself.
- Keep plans and notes in documents: read with \`get_document\`, write with \`commit\` against the version
  you read (a conflict means someone else wrote first: read again, merge, retry).
- Never edit files under \`${INSTANCE_DIR}/\` by hand.
`;

/** A hook entry setup writes: the host's event, its matcher, and the `agentstate hook` event it runs. */
interface HookEntry {
  event: string;
  matcher?: string;
  run: string;
}

interface HostFiles {
  /** The MCP configuration: a JSON key path, or Codex's TOML table. */
  mcp:
    | { file: string; format: 'json'; path: string[]; entry: (cmd: string[]) => unknown }
    | { file: string; format: 'toml'; entry: (cmd: string[]) => { text: string; value: unknown } };
  /** The instruction file: a marked section of a shared file, or a file of its own. */
  instructions: { file: string; mode: 'section' | 'own'; header?: string };
  /** The hooks file (same shape in both hosts: `hooks.<Event>` lists of `{matcher, hooks: [command]}`). */
  hooks?: {
    file: string;
    format: 'claude-code' | 'codex';
    /** The command before `hook …` when setup is given none. */
    command: string;
    /** The store, as the hook finds it (none: the nearest .agentstate above the session's cwd). */
    dir?: string;
    entries: HookEntry[];
  };
}

const args = (cmd: string[], dir: string) => [...cmd.slice(1), 'mcp', '--dir', dir];
const toml = (s: string) => JSON.stringify(s);

const FILES: Record<Host, HostFiles> = {
  'claude-code': {
    mcp: {
      file: '.mcp.json',
      format: 'json',
      path: ['mcpServers', 'agentstate'],
      entry: (cmd) => ({
        type: 'stdio',
        command: cmd[0],
        args: args(cmd, `\${CLAUDE_PROJECT_DIR:-.}/${INSTANCE_DIR}`),
      }),
    },
    instructions: { file: 'CLAUDE.md', mode: 'section' },
    hooks: {
      file: '.claude/settings.json',
      format: 'claude-code',
      // The package's own bin, not npx: a hook runs at every todo change and npx alone costs ~0.3 s.
      command: '"$CLAUDE_PROJECT_DIR"/node_modules/.bin/agentstate',
      dir: `"$CLAUDE_PROJECT_DIR"/${INSTANCE_DIR}`,
      entries: [
        { event: 'SessionStart', run: 'session-start' },
        { event: 'PreCompact', run: 'pre-compact' },
        { event: 'PostToolUse', matcher: 'TodoWrite|TaskCreate|TaskUpdate', run: 'post-tool-use' },
        { event: 'SubagentStart', run: 'subagent-start' },
        { event: 'SubagentStop', run: 'subagent-stop' },
        { event: 'Stop', run: 'stop' },
      ],
    },
  },
  codex: {
    mcp: {
      file: '.codex/config.toml',
      format: 'toml',
      entry: (cmd) => ({
        text: `[mcp_servers.agentstate]\ncommand = ${toml(cmd[0]!)}\nargs = [${args(cmd, INSTANCE_DIR).map(toml).join(', ')}]`,
        value: { command: cmd[0], args: args(cmd, INSTANCE_DIR) },
      }),
    },
    instructions: { file: 'AGENTS.md', mode: 'section' },
    hooks: {
      file: '.codex/hooks.json',
      format: 'codex',
      command: 'npx --no-install agentstate',
      // Codex has no PreCompact, and its PostToolUse sees only the shell: Stop reads update_plan's last plan
      // from the transcript at the end of every turn.
      entries: [
        { event: 'SessionStart', run: 'session-start' },
        { event: 'Stop', run: 'stop' },
      ],
    },
  },
  cursor: {
    mcp: {
      file: '.cursor/mcp.json',
      format: 'json',
      path: ['mcpServers', 'agentstate'],
      entry: (cmd) => ({ command: cmd[0], args: args(cmd, INSTANCE_DIR) }),
    },
    instructions: {
      file: '.cursor/rules/agentstate.mdc',
      mode: 'own',
      header:
        '---\ndescription: "agentstate: how to resume, claim and record work"\nalwaysApply: true\n---\n',
    },
  },
  vscode: {
    mcp: {
      file: '.vscode/mcp.json',
      format: 'json',
      path: ['servers', 'agentstate'],
      entry: (cmd) => ({
        type: 'stdio',
        command: cmd[0],
        args: args(cmd, `\${workspaceFolder}/${INSTANCE_DIR}`),
      }),
    },
    instructions: { file: '.github/copilot-instructions.md', mode: 'section' },
  },
};

/** One file `setup` writes, and what it does to it. */
export interface SetupChange {
  path: string;
  action: 'created' | 'updated' | 'unchanged' | 'removed' | 'deleted';
  before: string | null;
  after: string | null;
}

/** What `setup` does to a project for a host (nothing is written when `dryRun`). */
export interface SetupOptions {
  host: string;
  project: string;
  remove?: boolean;
  dryRun?: boolean;
  /** The server command and its leading arguments [default: DEFAULT_COMMAND]. */
  command?: string[];
}

/** The host, or INVALID_INPUT naming the ones known. */
export function checkHost(host: string): Host {
  if (!(HOSTS as readonly string[]).includes(host)) {
    throw new InvalidInputError(`unknown host ${JSON.stringify(host)}; known: ${HOSTS.join(', ')}`, {
      field: 'host',
    });
  }
  return host as Host;
}

/** Plans (and unless `dryRun`, writes) the host's files; returns each file's change. */
export function setupHost(o: SetupOptions): SetupChange[] {
  const host = checkHost(o.host);
  const cmd = o.command ?? DEFAULT_COMMAND;
  if (cmd.length === 0 || cmd.some((c) => typeof c !== 'string' || c === '' || c.includes('\n'))) {
    throw new InvalidInputError('setup: the command must be a non-empty list of words', { field: 'command' });
  }
  const f = FILES[host];
  const planned: Planned[] = [];
  /**
   * Plans the change of one file: `next` edits its text (without a byte-order mark, which is kept), `check`
   * reads the result back. Every file is planned, so every refusal is made, before any is written.
   */
  const plan = (file: string, next: (text: string) => string | null, check: (after: string) => void) => {
    const target = projectTarget(o.project, file);
    const raw = target.exists ? readTarget(target) : null;
    const bom = raw?.startsWith(BOM) ?? false;
    const before = bom ? raw!.slice(1) : raw;
    const edited = next(before ?? '');
    const after = edited === null ? before : edited;
    const empty =
      after === null || after.trim() === '' || (file.endsWith('.json') && /^\s*\{\s*\}\s*$/.test(after));
    let action: SetupChange['action'];
    if (edited === null) action = 'unchanged';
    // A file reached through a link is kept, even when nothing is left in it: deleting it would take the
    // link away and leave what it points to.
    else if (o.remove) action = empty && !target.isLink ? 'deleted' : 'removed';
    else action = before === null ? 'created' : 'updated';
    if (edited !== null && action !== 'deleted') check(edited);
    planned.push({
      path: file,
      action,
      before: raw,
      after: action === 'deleted' ? null : after === null ? null : bom ? BOM + after : after,
      target,
    });
  };
  const mcp = f.mcp;
  if (mcp.format === 'json') {
    const entry = o.remove ? undefined : mcp.entry(cmd);
    plan(
      mcp.file,
      (text) => editJson(text, mcp.path, entry, mcp.file),
      (after) => {
        if (!sameJson(valueAt(readBackJson(after, mcp.file), mcp.path), entry)) unreadable(mcp.file);
      },
    );
  } else {
    const entry = o.remove ? undefined : mcp.entry(cmd);
    let features = false;
    plan(
      mcp.file,
      (text) => {
        const theirs = text.replace(blockRegExp(), '');
        const mine = parseToml(theirs, mcp.file);
        if (!o.remove && valueAt(mine, ['mcp_servers', 'agentstate']) !== undefined) {
          throw new InvalidInputError(
            `${mcp.file} already has an mcp_servers.agentstate server of its own: remove or rename it, then run setup again`,
            { field: mcp.file },
          );
        }
        // Codex runs hooks only with this feature on; a features table of the user's own (in any spelling)
        // is left to them.
        features = valueAt(mine, ['features']) === undefined;
        const body = entry && `${entry.text}${features ? '\n\n[features]\ncodex_hooks = true' : ''}`;
        return editBlock(text, TOML_BEGIN, TOML_END, body ?? null);
      },
      (after) => {
        const all = parseToml(after, mcp.file, true);
        const ok =
          sameJson(valueAt(all, ['mcp_servers', 'agentstate']), entry?.value) &&
          (!entry || !features || valueAt(all, ['features', 'codex_hooks']) === true);
        if (!ok) unreadable(mcp.file);
      },
    );
  }
  const hooks = f.hooks;
  if (hooks) {
    const prefix = o.command ? o.command.map(shellWord).join(' ') : hooks.command;
    const groups = hooks.entries.map((h) => {
      const command = `${prefix} hook ${h.run} --format ${hooks.format}${hooks.dir ? ` --dir ${hooks.dir}` : ''}`;
      return {
        event: h.event,
        group: {
          ...(h.matcher ? { matcher: h.matcher } : {}),
          hooks: [{ type: 'command', command, timeout: 10 }],
        },
      };
    });
    plan(
      hooks.file,
      (text) => {
        let out: string | null = null;
        for (const { event, group } of groups) {
          const next = editJsonList(
            out ?? text,
            ['hooks', event],
            isOurHook,
            o.remove ? undefined : group,
            hooks.file,
          );
          if (next !== null) out = next;
        }
        return out;
      },
      (after) => {
        const all = readBackJson(after, hooks.file);
        for (const { event, group } of groups) {
          const list = valueAt(all, ['hooks', event]);
          const ours = Array.isArray(list) ? list.filter(isOurHook) : [];
          if (o.remove ? ours.length > 0 : ours.length !== 1 || !sameJson(ours[0], group)) {
            unreadable(hooks.file);
          }
        }
      },
    );
  }
  const ins = f.instructions;
  if (ins.mode === 'own') {
    const body = `${ins.header ?? ''}${INSTRUCTIONS}`;
    plan(
      ins.file,
      (text) => (o.remove ? (text === '' ? null : '') : text === body ? null : body),
      () => {},
    );
  } else {
    plan(
      ins.file,
      (text) => editBlock(text, MD_BEGIN, MD_END, o.remove ? null : INSTRUCTIONS),
      () => {},
    );
  }
  // The store's folder (created by the CLI after the files): refused here, before anything is written.
  if (!o.remove) projectTarget(o.project, INSTANCE_DIR, 'dir');
  if (!o.dryRun) for (const p of planned) write(p);
  return planned.map(({ path, action, before, after }) => ({ path, action, before, after }));
}

const BOM = '\uFEFF';

/** A planned change, with where its file really is. */
interface Planned extends SetupChange {
  target: ProjectTarget;
}

/** A file setup edits, as text: a regular file within the size limit, in UTF-8. */
function readTarget(t: ProjectTarget): string {
  return decodeUtf8(readRegularFile(t.real, MAX_VIEW_BYTES, { noFollow: true }), t.rel, t.rel);
}

/** Writes (atomically, keeping the file's permissions) or deletes one planned file. */
function write(p: Planned): void {
  const { real, root, exists, viaLink } = p.target;
  if (p.action === 'unchanged') return;
  if (p.action === 'deleted') {
    rmSync(real, { force: true });
    // The folders setup made for it go too, when nothing else is in them (not through a link: the link
    // would be left pointing nowhere).
    if (viaLink) return;
    for (let dir = dirname(real); dir.startsWith(root) && dir !== root; dir = dirname(dir)) {
      if (readdirSync(dir).length > 0) break;
      rmdirSync(dir);
    }
    return;
  }
  writeFileAtomic(real, p.after ?? '', exists ? { mode: statSync(real).mode } : {});
}

/** A JSON (with comments) file setup wrote, read back as its host reads it (a key given twice: the last). */
function readBackJson(text: string, file: string): unknown {
  const errors: ParseError[] = [];
  const value = parseJsonc(text, errors, { allowTrailingComma: true });
  if (errors.length > 0 || value === null || typeof value !== 'object' || Array.isArray(value)) {
    unreadable(file);
  }
  return value;
}

/** The TOML document `text`, or INVALID_INPUT: the user's own file (`ours` false), or the one setup made. */
function parseToml(text: string, file: string, ours = false): unknown {
  try {
    return parseTomlText(text);
  } catch (err) {
    if (ours) unreadable(file);
    const where = err instanceof TomlError ? ` (line ${err.line}, column ${err.column})` : '';
    throw new InvalidInputError(
      `${file} is not valid TOML${where}: ${(err as Error).message.split('\n')[0]}; fix it by hand, then run setup again (nothing was written)`,
      { field: file },
    );
  }
}

/** The refusal of an edit that does not read back as setup made it (a key the file gives twice, say). */
function unreadable(file: string): never {
  throw new InvalidInputError(
    `${file}: setup's edit would not read back as written (a key given twice, or a table setup cannot add to): fix the file by hand, then run setup again (nothing was written)`,
    { field: file },
  );
}

function valueAt(value: unknown, path: string[]): unknown {
  let v = value;
  for (const k of path) {
    if (v === null || typeof v !== 'object' || Array.isArray(v) || !Object.hasOwn(v, k)) return undefined;
    v = (v as Record<string, unknown>)[k];
  }
  return v;
}

const sameJson = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** A hook group setup wrote: one whose command runs `… hook <event> --format <host>`. */
function isOurHook(group: unknown): boolean {
  const hooks = (group as { hooks?: unknown } | null)?.hooks;
  return (
    Array.isArray(hooks) &&
    hooks.some(
      (h) =>
        typeof (h as { command?: unknown })?.command === 'string' &&
        / hook [a-z-]+ --format (claude-code|codex)\b/.test((h as { command: string }).command),
    )
  );
}

/** A word for a POSIX shell command line: as it is when it is plain, else in single quotes. */
function shellWord(w: string): string {
  return /^[\w@%+=:,./-]+$/.test(w) ? w : `'${w.replace(/'/g, `'\\''`)}'`;
}

function blockRegExp(): RegExp {
  const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`${esc(TOML_BEGIN)}[\\s\\S]*?${esc(TOML_END)}`);
}

/** A change as a unified-style diff (the lines that differ, with a few around them). */
export function diffOf(c: SetupChange): string {
  const a = (c.before ?? '').split('\n');
  const b = (c.after ?? '').split('\n');
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  const lines = [
    `--- ${c.before === null ? '/dev/null' : `a/${c.path}`}`,
    `+++ ${c.after === null ? '/dev/null' : `b/${c.path}`}`,
  ];
  lines.push(`@@ line ${start + 1} @@`);
  for (let k = Math.max(0, start - 2); k < start; k++) lines.push(` ${a[k]}`);
  for (let k = start; k < endA; k++) lines.push(`-${a[k]}`);
  for (let k = start; k < endB; k++) lines.push(`+${b[k]}`);
  for (let k = endA; k < Math.min(a.length, endA + 2); k++) lines.push(` ${a[k]}`);
  return lines.join('\n');
}
