// The `.grid/STATE.md` file of a `grid-mission` document: YAML frontmatter between `---` fences, then
// Markdown. The store is the truth; the file is a view stamped with the version it shows.
//
// Stamp: the first line inside the frontmatter is a YAML comment
//   # agentstate: kind=grid-mission id=mission version=7 markdown=0123456789abcdef
// `markdown=` (16 hex digits of the SHA-256 of the Markdown) is written only when the Markdown was
// generated from the frontmatter. Parsing a file whose Markdown still has that hash drops it (it is a view,
// regenerated on the next export); Markdown that differs (edited by hand) or comes from a file agentstate
// never wrote is kept as the body's `markdown_body`, and written back verbatim until a write removes it.
//
// Render keeps the previous file's comments, key order and scalar styles where the data did not change
// (the `yaml` package's Document API, updated in place); without a previous file (or with one that does not
// parse) it writes the seed's layout: banner, grouped sections, double-quoted strings, flow lists of ids.
// The Markdown body of `.grid/STATE.md`, regenerated from the frontmatter as in the seed's example (§6):
// mission, status, mode and a progress bar; the current position; blockers (when any); recent activity
// (from the document's recent events); active agents; the session summary; "End of Line."

import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import type * as YamlModule from 'yaml';
import type { Document, Scalar, ToStringOptions, YAMLMap, YAMLSeq, Node as YamlNode } from 'yaml';
import type { FileStamp, KindFile, ViewContext } from '../../core/kind.js';
import type { Json, JsonObject } from '../../core/types.js';
import { InvalidInputError } from '../../errors.js';
import { binaryAt } from '../file-text.js';
import { isPlainObject, ptr } from '../rules.js';
import type { GridMission } from './model.js';
import { gridMissionSchema } from './schema.js';

/** Where the Grid keeps its state, relative to the project root (seed: "Location: .grid/STATE.md"). */
export const GRID_STATE_PATH = '.grid/STATE.md';
/** The document id `.grid/STATE.md` belongs to: one mission state per project. */
export const GRID_DOC_ID = 'mission';
/** Largest STATE.md accepted by `parse`, in bytes. */
export const MAX_STATE_FILE_BYTES = 1024 * 1024;
/** Deepest nesting accepted in the frontmatter. */
const MAX_DEPTH = 64;

const KIND = 'grid-mission';
const FENCE = /^---[ \t]*$/;
/** The stamp comment: at column 0 (an indented line may be inside a YAML block scalar). */
const STAMP = /^#[ \t]*agentstate:(.*)$/;
const BANNER = ` ${'═'.repeat(79)}\n GRID STATE - Machine Parseable Header\n ${'═'.repeat(79)}`;
/** Top-level keys preceded by a blank line in a fresh render (the seed's groups). */
const SECTION_STARTS = new Set([
  'status',
  'phases',
  'position',
  'progress',
  'agents',
  'persistent',
  'resume',
  'budget',
  'warnings',
  'blockers',
  'energy',
  'markdown_body',
]);
// The yaml package costs ~30 ms to load; only commands that read or write STATE.md pay for it.
let yamlModule: typeof YamlModule | undefined;
function Y(): typeof YamlModule {
  yamlModule ??= createRequire(import.meta.url)('yaml') as typeof YamlModule;
  return yamlModule;
}
const isMap = (n: unknown): n is YAMLMap => Y().isMap(n);
const isSeq = (n: unknown): n is YAMLSeq => Y().isSeq(n);
const isScalar = (n: unknown): n is Scalar => Y().isScalar(n);
const isNode = (n: unknown): n is YamlNode => Y().isNode(n);

const YAML_OUT: ToStringOptions = {
  defaultStringType: 'QUOTE_DOUBLE',
  defaultKeyType: 'PLAIN',
  lineWidth: 0,
  flowCollectionPadding: false,
};

function bad(message: string, line: number | null, extra: Record<string, unknown> = {}): never {
  throw new InvalidInputError(`${GRID_STATE_PATH}: ${message}${line === null ? '' : ` (line ${line})`}`, {
    path: GRID_STATE_PATH,
    line,
    ...extra,
  });
}

const preview = (s: string) => JSON.stringify(s.length > 40 ? `${s.slice(0, 40)}…` : s);

/** Short hash of the generated Markdown, carried in the stamp. */
export function markdownHash(markdown: string): string {
  return createHash('sha256').update(markdown).digest('hex').slice(0, 16);
}

// ---------------------------------------------------------------------------------------------------
// Splitting the file

interface Split {
  /** Frontmatter lines, without the fences (file line of lines[i] is i + 2). */
  lines: string[];
  /** The Markdown after the closing fence and the one blank line that separates them. */
  markdown: string;
}

/** Splits the text at its `---` fences; throws INVALID_INPUT naming the line on anything malformed. */
function split(raw: string): Split {
  if (typeof raw !== 'string') bad(`file content must be text, got ${typeof raw}`, null);
  const size = Buffer.byteLength(raw);
  if (size > MAX_STATE_FILE_BYTES) {
    // The line holding the first byte past the limit.
    const head = Buffer.from(raw.slice(0, MAX_STATE_FILE_BYTES + 1))
      .subarray(0, MAX_STATE_FILE_BYTES + 1)
      .toString();
    const line = (head.match(/\n/g)?.length ?? 0) + 1;
    bad(
      `is ${size} bytes, larger than the ${MAX_STATE_FILE_BYTES} byte limit (exceeded at line ${line})`,
      line,
      {
        bytes: size,
        limit: MAX_STATE_FILE_BYTES,
      },
    );
  }
  const text = raw.replace(/^\uFEFF/, '').replace(/\r\n?/g, '\n');
  const binary = binaryAt(text);
  if (binary) {
    const { line, column } = binary;
    const code = binary.code.toString(16).toUpperCase().padStart(2, '0');
    bad(`binary content (U+${code}) at line ${line}, column ${column}: STATE.md must be UTF-8 text`, line, {
      column,
    });
  }
  const lines = text.split('\n');
  const first = lines[0] ?? '';
  if (!FENCE.test(first)) {
    bad(
      `must start with a '---' line opening the YAML frontmatter, found ${preview(first)}`,
      1,
      first.trim() === '' && lines.length > 1 ? { hint: 'remove the blank lines before the fence' } : {},
    );
  }
  const close = lines.findIndex((l, i) => i > 0 && FENCE.test(l));
  if (close < 0) bad("the frontmatter opened at line 1 is never closed: no '---' line follows", 1);
  const fm = lines.slice(1, close);
  if (fm.every((l) => l.trim() === '' || l.trimStart().startsWith('#'))) {
    bad('the frontmatter between the fences is empty', 2);
  }
  let markdown = lines.slice(close + 1).join('\n');
  if (markdown.startsWith('\n')) markdown = markdown.slice(1);
  return { lines: fm, markdown };
}

interface Stamp extends FileStamp {
  markdown: string | null;
}

/** Reads the `# agentstate:` comment, if any; INVALID_INPUT naming the line if it is malformed. */
function readStamp(lines: string[]): Stamp | null {
  let found: Stamp | null = null;
  for (const [i, l] of lines.entries()) {
    const m = STAMP.exec(l);
    if (!m) continue;
    const line = i + 2;
    if (found) bad('more than one agentstate stamp in the frontmatter', line);
    const fields = new Map<string, string>();
    for (const tok of (m[1] ?? '').trim().split(/\s+/).filter(Boolean)) {
      const eq = tok.indexOf('=');
      if (eq <= 0) bad(`malformed agentstate stamp: ${preview(tok)} is not key=value`, line);
      fields.set(tok.slice(0, eq), tok.slice(eq + 1));
    }
    const kind = fields.get('kind');
    const id = fields.get('id');
    const version = fields.get('version');
    if (!kind || !id || !version || !/^[1-9]\d{0,14}$/.test(version)) {
      bad('malformed agentstate stamp: needs kind=<kind> id=<id> version=<positive integer>', line);
    }
    if (kind !== KIND) bad(`the stamp names kind ${JSON.stringify(kind)}, not ${KIND}`, line);
    let decoded: string;
    try {
      decoded = decodeURIComponent(id);
    } catch {
      bad(`malformed agentstate stamp: bad id ${preview(id)}`, line);
    }
    const md = fields.get('markdown');
    if (md !== undefined && !/^[0-9a-f]{16}$/.test(md))
      bad('malformed agentstate stamp: bad markdown hash', line);
    found = { kind, id: decoded, version: Number(version), markdown: md ?? null };
  }
  return found;
}

/** Checks the frontmatter value is plain JSON (finite numbers, bounded depth); names the pointer if not. */
function checkJson(v: unknown, pointer: string, depth: number): void {
  if (depth > MAX_DEPTH) bad(`the frontmatter is nested deeper than ${MAX_DEPTH} levels at ${pointer}`, null);
  if (typeof v === 'number' && !Number.isFinite(v)) {
    bad(`${pointer} is ${String(v)}, which is not a JSON number`, null, { pointer });
  }
  if (Array.isArray(v)) {
    for (const [i, x] of v.entries()) checkJson(x, `${pointer}/${i}`, depth + 1);
  } else if (typeof v === 'object' && v !== null) {
    const proto = Object.getPrototypeOf(v);
    if (proto !== Object.prototype && proto !== null) {
      bad(`${pointer || 'the frontmatter'} is not a plain JSON value`, null, { pointer });
    }
    for (const [k, x] of Object.entries(v)) checkJson(x, `${pointer}${ptr(k)}`, depth + 1);
  } else if (!['string', 'number', 'boolean'].includes(typeof v) && v !== null) {
    bad(`${pointer || 'the frontmatter'} holds a ${typeof v}, which is not JSON`, null, { pointer });
  }
}

function parseFile(text: string): { body: JsonObject; stamp: FileStamp | null } {
  const { lines, markdown } = split(text);
  const stamp = readStamp(lines);
  const counter = new (Y().LineCounter)();
  const doc = Y().parseDocument(lines.join('\n'), {
    schema: 'core',
    resolveKnownTags: false,
    uniqueKeys: true,
    prettyErrors: false,
    lineCounter: counter,
  });
  const problem = doc.errors[0] ?? doc.warnings[0];
  if (problem) {
    const at = counter.linePos(problem.pos[0]);
    const line = at.line + 1;
    bad(`malformed YAML at line ${line}, column ${at.col}: ${problem.message}`, line, {
      column: at.col,
      yaml_code: problem.code,
    });
  }
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: 100 });
  } catch (err) {
    bad(`the YAML frontmatter cannot be read: ${(err as Error).message}`, null);
  }
  if (!isPlainObject(value as Json)) {
    const what =
      value === null || value === undefined ? 'nothing' : Array.isArray(value) ? 'a list' : 'a scalar';
    bad(`the frontmatter must be a YAML mapping of fields, found ${what}`, 2);
  }
  checkJson(value, '', 0);
  const body = value as JsonObject;
  if (Object.hasOwn(body, 'markdown_body')) {
    const line = lines.findIndex((l) => /^markdown_body\s*:/.test(l)) + 2;
    bad('markdown_body is not a frontmatter field: it is the Markdown below the closing fence', line || null);
  }
  const generated = stamp?.markdown != null && markdownHash(markdown) === stamp.markdown;
  if (markdown.trim() !== '' && !generated) body.markdown_body = markdown;
  return { body, stamp: stamp && { kind: stamp.kind, id: stamp.id, version: stamp.version } };
}

// ---------------------------------------------------------------------------------------------------
// Rendering

type SchemaNode = Record<string, unknown>;

function resolve(node: SchemaNode | undefined): SchemaNode | undefined {
  const r = node?.$ref;
  if (typeof r !== 'string') return node;
  const defs = gridMissionSchema.$defs as Record<string, SchemaNode>;
  return defs[r.replace('#/$defs/', '')];
}

/** The value with object keys in schema order (unknown keys after, in their own order). */
function ordered(v: Json, node: SchemaNode | undefined): Json {
  const s = resolve(node);
  if (Array.isArray(v)) return v.map((x) => ordered(x, s?.items as SchemaNode | undefined));
  if (!isPlainObject(v)) return v;
  const props = (s?.properties ?? {}) as Record<string, SchemaNode>;
  const out: JsonObject = {};
  for (const k of [...Object.keys(props), ...Object.keys(v)]) {
    const x = v[k];
    if (x !== undefined && !Object.hasOwn(out, k)) out[k] = ordered(x, props[k]);
  }
  return out;
}

/** Lists of scalars (phase ids …) print as flow lists, as in the seed. */
function styleNode(node: unknown): void {
  if (isSeq(node)) {
    if (node.items.length > 0 && node.items.every((i) => isScalar(i))) node.flow = true;
    for (const i of node.items) styleNode(i);
  } else if (isMap(node)) {
    for (const p of node.items) styleNode(p.value);
  }
}

function freshNode(doc: Document, value: Json): YamlNode {
  const n = doc.createNode(value) as YamlNode;
  styleNode(n);
  return n;
}

const keyOf = (k: unknown): string | undefined => (isScalar(k) ? String(k.value) : undefined);
const kindOf = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);

/** Updates `node` to hold `value`, keeping comments, order and styles of what did not change. */
function reconcile(doc: Document, node: unknown, value: Json): YamlNode {
  if (isMap(node) && isPlainObject(value)) {
    node.items = node.items.filter((p) => {
      const k = keyOf(p.key);
      return k !== undefined && Object.hasOwn(value, k) && value[k] !== undefined;
    });
    for (const [k, v] of Object.entries(value)) {
      if (v === undefined) continue;
      const pair = node.items.find((p) => keyOf(p.key) === k);
      if (pair) pair.value = reconcile(doc, pair.value, v);
      else node.items.push(doc.createPair(k, freshNode(doc, v)));
    }
    return node;
  }
  if (isSeq(node) && Array.isArray(value)) {
    const byId = value.every((x) => isPlainObject(x) && typeof x.id === 'string');
    const old = [...node.items];
    const used = new Set<number>();
    node.items = value.map((x, i) => {
      let j = i;
      if (byId) {
        j = old.findIndex((o, k) => !used.has(k) && isMap(o) && o.get('id') === (x as JsonObject).id);
      }
      if (j >= 0 && j < old.length && !used.has(j)) {
        used.add(j);
        return reconcile(doc, old[j], x);
      }
      return freshNode(doc, x);
    });
    return node;
  }
  if (
    isScalar(node) &&
    kindOf(node.value) === kindOf(value) &&
    !isPlainObject(value) &&
    !Array.isArray(value)
  ) {
    if (node.value !== value) node.value = value;
    return node;
  }
  const fresh = freshNode(doc, value);
  if (isNode(node)) {
    fresh.comment = node.comment;
    fresh.commentBefore = node.commentBefore;
    fresh.spaceBefore = node.spaceBefore;
  }
  return fresh;
}

/** The previous file's frontmatter as a yaml Document (stamp removed), or null if it does not parse. */
function previousDocument(previous: string | undefined): Document | null {
  if (previous === undefined) return null;
  try {
    const { lines } = split(previous);
    const doc = Y().parseDocument(lines.filter((l) => !STAMP.test(l)).join('\n'), {
      schema: 'core',
      resolveKnownTags: false,
      uniqueKeys: true,
    });
    if (doc.errors.length > 0 || doc.warnings.length > 0 || !isMap(doc.contents)) return null;
    return doc;
  } catch {
    return null;
  }
}

function freshDocument(data: JsonObject): Document {
  const doc = new (Y().Document)(ordered(data, gridMissionSchema));
  doc.commentBefore = BANNER;
  if (isMap(doc.contents)) {
    for (const p of doc.contents.items) {
      const k = keyOf(p.key);
      if (k !== undefined && SECTION_STARTS.has(k) && isNode(p.key)) p.key.spaceBefore = true;
      styleNode(p.value);
    }
  }
  return doc;
}

function renderFile(body: JsonObject, stamp: FileStamp, ctx: ViewContext, previous?: string): string {
  const { markdown_body: given, ...data } = body;
  const markdown = typeof given === 'string' ? given : renderMarkdown(body as unknown as GridMission, ctx);
  const prev = previousDocument(previous);
  let yaml: string;
  if (prev) {
    prev.contents = reconcile(prev, prev.contents, data);
    yaml = prev.toString(YAML_OUT);
  } else {
    yaml = freshDocument(data).toString(YAML_OUT);
  }
  const id = encodeURIComponent(stamp.id);
  const hash = typeof given === 'string' ? '' : ` markdown=${markdownHash(markdown)}`;
  const stampLine = `# agentstate: kind=${stamp.kind} id=${id} version=${stamp.version}${hash}`;
  return `---\n${stampLine}\n${yaml.endsWith('\n') ? yaml : `${yaml}\n`}---\n\n${markdown}`;
}

function normalizePath(path: string): string {
  return path.replaceAll('\\', '/').replace(/^(\.\/)+/, '');
}

export const gridMissionFile: KindFile = {
  defaultPath: () => GRID_STATE_PATH,
  idFromPath: (path) => (normalizePath(path) === GRID_STATE_PATH ? GRID_DOC_ID : null),
  parse: parseFile,
  render: renderFile,
};

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
