// The file view of kind `aios-workflow`: `.aios/<instance_id>-state.yaml`, YAML as the seed writes it.
// The version stamp is the first line, a YAML comment: `# agentstate: kind=aios-workflow id=<id> version=<n>`
// (a comment, so AIOS tools reading the file see exactly the seed's fields). Rendering over the previous
// text updates that YAML document in place, so its comments, key order and styles survive wherever the
// data did not change.

import { createRequire } from 'node:module';
import type * as YamlModule from 'yaml';
import type { Document, Node, Pair, YAMLMap } from 'yaml';
import type { FileStamp, KindFile, ViewContext } from '../../core/kind.js';
import type { Json, JsonObject } from '../../core/types.js';
import { InvalidInputError } from '../../errors.js';
import { fileTextProblem } from '../file-text.js';
import { deepEqual, isPlainObject } from '../rules.js';
import { AIOS_DEFAULTS } from './schema.js';

/** Largest file parsed, in bytes. */
export const MAX_AIOS_FILE_BYTES = 4 * 1024 * 1024;
/** Most YAML aliases expanded while parsing (guards against alias bombs). */
const MAX_ALIASES = 100;
/**
 * As Grid's STATE.md is read: the YAML 1.2 core schema with no other tags resolved, so a tag
 * (`!!python/object:os.system`, `!!binary`, `!local`) is a warning, and a warning refuses the file. Left
 * in, the value would be stored as a plain string while the tag stayed in the file, which a reader such
 * as Python's `yaml.safe_load` then refuses.
 */
const YAML_OPTIONS = { schema: 'core', resolveKnownTags: false, uniqueKeys: true } as const;

// The yaml package costs as much to load as the rest of a CLI command's start-up; as for Grid's STATE.md,
// only what reads or writes an .aios file pays for it.
let yamlModule: typeof YamlModule | undefined;
function Y(): typeof YamlModule {
  yamlModule ??= createRequire(import.meta.url)('yaml') as typeof YamlModule;
  return yamlModule;
}

const KIND = 'aios-workflow';
const STAMP_LINE = /^#\s*agentstate:(.*)$/;
const STAMP_FIELDS = /^\s*kind=(\S+)\s+id=(\S+)\s+version=(\d+)\s*$/;

/** Key order of a fresh file (and where new keys go in an old one): the seed's field order. */
const ORDER: Record<string, readonly string[]> = {
  top: [
    'workflow_id',
    'workflow_name',
    'instance_id',
    'target_context',
    'squad_name',
    'started_at',
    'updated_at',
    'status',
    'current_phase',
    'current_step_index',
    'steps',
    'artifacts',
    'decisions',
  ],
  steps: [
    'step_index',
    'phase',
    'agent',
    'action',
    'status',
    'optional',
    'started_at',
    'completed_at',
    'artifacts_created',
    'notes',
    'session_id',
  ],
  artifacts: ['name', 'created_by_step', 'path', 'status'],
  decisions: ['step_index', 'decision', 'rationale', 'timestamp'],
};

function invalid(message: string, details: Record<string, unknown> = {}): never {
  throw new InvalidInputError(`${KIND} file: ${message}`, details);
}

/** Refuses oversize, binary and non-text input before any parsing. */
function checkText(text: string): void {
  const problem = fileTextProblem(text, MAX_AIOS_FILE_BYTES, 'a YAML state file');
  if (problem) invalid(problem.message, problem.details);
}

/** The stamp in the comment lines that open the file, or null. */
export function readYamlStamp(text: string): FileStamp | null {
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = (lines[i] ?? '').trim();
    if (line === '' || line === '---' || line.startsWith('%')) continue;
    if (!line.startsWith('#')) break;
    const m = STAMP_LINE.exec(line);
    if (!m) continue;
    const f = STAMP_FIELDS.exec(m[1] ?? '');
    if (!f) {
      invalid(
        `line ${i + 1}: malformed agentstate stamp ${JSON.stringify(line)}; expected "# agentstate: kind=<kind> id=<id> version=<n>"`,
        { line: i + 1 },
      );
    }
    const version = Number(f[3]);
    if (!Number.isSafeInteger(version) || version < 1) {
      invalid(`line ${i + 1}: stamp version must be a positive integer`, { line: i + 1 });
    }
    return { kind: f[1]!, id: f[2]!, version };
  }
  return null;
}

/** Rejects values YAML allows but JSON does not (NaN, infinities, tagged binaries, …). */
function checkJson(v: unknown, pointer: string): void {
  if (v === null || typeof v === 'string' || typeof v === 'boolean') return;
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) invalid(`${pointer || '/'}: ${v} is not a JSON number`, { pointer });
    return;
  }
  if (Array.isArray(v)) {
    v.forEach((x, i) => {
      checkJson(x, `${pointer}/${i}`);
    });
    return;
  }
  if (isPlainObject(v) && Object.getPrototypeOf(v) === Object.prototype) {
    for (const [k, x] of Object.entries(v)) checkJson(x, `${pointer}/${k}`);
    return;
  }
  invalid(`${pointer || '/'}: this YAML value has no JSON equivalent`, { pointer });
}

function parse(text: string): { body: JsonObject; stamp: FileStamp | null } {
  checkText(text);
  const stamp = readYamlStamp(text);
  const doc = Y().parseDocument(text, YAML_OPTIONS);
  const err = doc.errors[0] ?? doc.warnings[0];
  if (err) {
    const pos = err.linePos?.[0];
    const what = (err.message.split('\n')[0] ?? '').replace(/ at line \d+, column \d+:?$/, '');
    invalid(pos ? `line ${pos.line}, column ${pos.col}: ${what}` : what, {
      ...(pos ? { line: pos.line, column: pos.col } : {}),
      yaml_error: err.code,
    });
  }
  if (doc.contents === null) invalid('the file holds no YAML document (it is empty or only comments)');
  if (!Y().isMap(doc.contents)) {
    const line = doc.contents.range ? text.slice(0, doc.contents.range[0]).split('\n').length : 1;
    invalid(`line ${line}: the document must be a YAML mapping of the state fields`, { line });
  }
  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: MAX_ALIASES });
  } catch (e) {
    invalid(`cannot be read as data: ${(e as Error).message}`);
  }
  checkJson(data, '');
  const body = data as JsonObject;
  for (const [k, v] of Object.entries(AIOS_DEFAULTS)) if (!Object.hasOwn(body, k)) body[k] = v;
  return { body, stamp };
}

// ---------------------------------------------------------------------------------------------------
// Rendering

/** Strings a YAML 1.1 reader (js-yaml, PyYAML) would take for a date or a boolean are double-quoted. */
const LOOKS_TYPED =
  /^(\d{4}-\d{2}-\d{2}([Tt ].*)?|y|Y|yes|Yes|YES|n|N|no|No|NO|on|On|ON|off|Off|OFF|true|True|TRUE|false|False|FALSE|~|null|Null|NULL)$/;

function style(node: unknown): void {
  Y().visit(node as Node, {
    Scalar(_k, n) {
      if (typeof n.value === 'string' && LOOKS_TYPED.test(n.value)) n.type = Y().Scalar.QUOTE_DOUBLE;
    },
    Seq(_k, n) {
      if (n.items.length > 0 && n.items.every((x) => Y().isScalar(x) && typeof x.value !== 'object'))
        n.flow = true;
    },
  });
}

/** Which key order applies inside a map reached by `path` (`top`, `steps`, `artifacts`, `decisions`). */
function orderFor(path: string[]): readonly string[] {
  if (path.length === 0) return ORDER.top ?? [];
  if (path.length === 2) return ORDER[path[0] ?? ''] ?? [];
  return [];
}

function ordered(value: Json, path: string[]): Json {
  if (Array.isArray(value)) return value.map((v) => ordered(v, [...path, '*']));
  if (!isPlainObject(value)) return value;
  const order = orderFor(path);
  const keys = Object.keys(value).sort((a, b) => rank(order, a) - rank(order, b));
  return Object.fromEntries(keys.map((k) => [k, ordered(value[k] as Json, [...path, k])]));
}

function rank(order: readonly string[], key: string): number {
  const i = order.indexOf(key);
  return i === -1 ? order.length : i;
}

function keyOf(pair: Pair): string | undefined {
  return Y().isScalar(pair.key) ? String(pair.key.value) : undefined;
}

function newNode(doc: Document, value: Json, path: string[]): Node {
  const node = doc.createNode(ordered(value, path)) as Node;
  style(node);
  return node;
}

/** Updates `node` to hold `value`, keeping it (with its comments and style) wherever the data is the same. */
function update(doc: Document, node: unknown, value: Json, path: string[]): Node {
  if (Y().isMap(node) && isPlainObject(value)) {
    const map = node as YAMLMap;
    for (const pair of [...map.items]) {
      const k = keyOf(pair);
      if (k === undefined || !Object.hasOwn(value, k)) map.items.splice(map.items.indexOf(pair), 1);
    }
    const order = orderFor(path);
    for (const [k, v] of Object.entries(value)) {
      const pair = map.items.find((p) => keyOf(p) === k);
      if (pair) {
        pair.value = update(doc, pair.value, v, [...path, k]);
        continue;
      }
      const created = doc.createPair(k, newNode(doc, v, [...path, k]));
      const at = map.items.findIndex((p) => rank(order, keyOf(p) ?? '') > rank(order, k));
      if (at === -1 || rank(order, k) === order.length) map.items.push(created);
      else map.items.splice(at, 0, created);
    }
    return map;
  }
  if (Y().isSeq(node) && Array.isArray(value)) {
    const items = node.items;
    value.forEach((v, i) => {
      if (i < items.length) {
        items[i] = update(doc, items[i], v, [...path, '*']);
        return;
      }
      const n = newNode(doc, v, [...path, '*']);
      const last = items[items.length - 1];
      if (last && typeof last === 'object' && 'spaceBefore' in last && last.spaceBefore) {
        (n as { spaceBefore?: boolean }).spaceBefore = true;
      }
      items.push(n);
    });
    items.splice(value.length);
    return node;
  }
  if (Y().isScalar(node) && (value === null || typeof value !== 'object')) {
    if (!deepEqual(node.value, value)) {
      node.value = value;
      if (typeof value === 'string' && LOOKS_TYPED.test(value)) node.type = Y().Scalar.QUOTE_DOUBLE;
    }
    return node;
  }
  // The type changed (scalar ↔ list ↔ map): a new node, keeping the comments around the old one.
  const n = newNode(doc, value, path);
  if (node && typeof node === 'object') {
    const old = node as { comment?: string | null; commentBefore?: string | null; spaceBefore?: boolean };
    const fresh = n as { comment?: string | null; commentBefore?: string | null; spaceBefore?: boolean };
    if (old.comment) fresh.comment = old.comment;
    if (old.commentBefore) fresh.commentBefore = old.commentBefore;
    if (old.spaceBefore) fresh.spaceBefore = old.spaceBefore;
  }
  return n;
}

/** The previous text as a YAML document worth updating: parses cleanly, a mapping, no aliases. */
function previousDocument(previous: string | undefined): Document | null {
  if (previous === undefined || Buffer.byteLength(previous) > MAX_AIOS_FILE_BYTES) return null;
  try {
    // A tagged previous file is rendered afresh, so no tag survives an export.
    const doc = Y().parseDocument(previous, YAML_OPTIONS);
    if (doc.errors.length > 0 || doc.warnings.length > 0 || !Y().isMap(doc.contents)) return null;
    let aliased = false;
    Y().visit(doc, {
      Alias() {
        aliased = true;
        return Y().visit.BREAK;
      },
    });
    return aliased ? null : doc;
  } catch {
    return null;
  }
}

const withoutStamp = (comment: string | null | undefined): string[] =>
  (comment ?? '').split('\n').filter((l) => l !== '' && !STAMP_LINE.test(`#${l}`));

function render(body: JsonObject, stamp: FileStamp, _ctx: ViewContext, previous?: string): string {
  const line = ` agentstate: kind=${stamp.kind} id=${stamp.id} version=${stamp.version}`;
  let doc = previousDocument(previous);
  if (doc) {
    update(doc, doc.contents, body, []);
    // The stamp may sit in the document comment or, with no blank line after it, on the first key.
    const map = doc.contents as YAMLMap;
    const first = map.items[0];
    const rest = withoutStamp(doc.commentBefore);
    if (first && Y().isPair(first) && Y().isScalar(first.key) && first.key.commentBefore) {
      const own = withoutStamp(first.key.commentBefore);
      first.key.commentBefore = own.length > 0 ? own.join('\n') : undefined;
    }
    if (map.commentBefore) {
      const own = withoutStamp(map.commentBefore);
      map.commentBefore = own.length > 0 ? own.join('\n') : null;
    }
    doc.commentBefore = [line, ...rest].join('\n');
  } else {
    doc = new (Y().Document)();
    doc.contents = newNode(doc, body, []) as never;
    const map = doc.contents as unknown as YAMLMap;
    for (const pair of map.items) {
      const k = keyOf(pair);
      if ((k === 'steps' || k === 'artifacts' || k === 'decisions') && Y().isScalar(pair.key)) {
        pair.key.spaceBefore = true;
      }
      if (k === 'steps' && Y().isSeq(pair.value)) {
        pair.value.items.forEach((item, i) => {
          if (i > 0) (item as { spaceBefore?: boolean }).spaceBefore = true;
        });
      }
    }
    doc.commentBefore = line;
  }
  return doc.toString({ lineWidth: 0, flowCollectionPadding: false });
}

function idFromPath(path: string): string | null {
  const m = /(?:^|[/\\])\.aios[/\\]([^/\\]+)-state\.yaml$/.exec(path);
  return m?.[1] ?? null;
}

export const aiosFile: KindFile = {
  defaultPath: (id) => `.aios/${id}-state.yaml`,
  idFromPath,
  // The file is named after the instance it holds (`.aios/{instance-id}-state.yaml`).
  bodyId: (body) => ({ pointer: '/instance_id', id: body.instance_id }),
  parse,
  render,
};
