// The MCP tools: which operations of the service table are tools, the input fields the MCP edge fills itself,
// and the tool definitions (schemas, annotations) generated from the table — lean, because a host sends the
// whole tools/list to the model on every request.

import { EDGE_OWNED } from '../auth/attribution.js';
import type { JsonSchema } from '../core/json-schema.js';
import { InvalidInputError } from '../errors.js';
import { kindNames } from '../kinds/registry.js';
import type { Operation } from '../service/operation.js';
import { getOperation } from '../service/table.js';

/** The tools served by default, in the order tools/list shows them: what agents do most. */
export const DEFAULT_TOOLS = [
  'resume',
  'claim',
  'heartbeat',
  'resolve',
  'enqueue',
  'get_document',
  'commit',
  'history',
  'append_event',
  'read_events',
] as const;

/** Named subsets for `--tools` (hosts that want even fewer tools); `resume` is in every one. */
export const TOOLSETS: Record<string, readonly string[]> = {
  all: DEFAULT_TOOLS,
  core: ['resume', 'claim', 'resolve', 'commit'],
  work: ['resume', 'claim', 'heartbeat', 'resolve', 'enqueue'],
  documents: ['resume', 'get_document', 'commit', 'history'],
  events: ['resume', 'append_event', 'read_events'],
  /** For agents that wake durable runs: signal an item's waitFor, read what its run recorded. */
  runs: ['resume', 'claim', 'heartbeat', 'resolve', 'signal', 'list_steps'],
};

/** At most this many tools, whatever `--tools` asks for (DESIGN.md: agents pay for every tool). */
export const MAX_TOOLS = 10;

// The fields the MCP edge decides (EDGE_OWNED, the one attribution policy's): an operation with one loses it
// from its tool schema.
export { EDGE_OWNED };

/** Result fields for telemetry, not for models: left out of output schemas (results still carry them). */
const NOT_FOR_MODELS = new Set(['traceparent']);

/** Operation results that are not an object are wrapped under this key (structuredContent is an object). */
const WRAP: Record<string, string> = {
  claim: 'item',
  get_document: 'document',
  read_events: 'events',
  list_steps: 'records',
  workflow_runs: 'runs',
};

/**
 * Tools whose result is the record another tool's output schema already describes in full (an item, as claim
 * and enqueue show it): their schema lists only the fields the call changes. Every field is still sent; a
 * tool list rides every request, and these saved a thousand characters of it.
 */
const CHANGED_FIELDS: Record<string, readonly string[]> = {
  heartbeat: ['id', 'status', 'attempts', 'lease_owner', 'lease_expires_at'],
  resolve: ['id', 'status', 'attempts', 'result', 'error', 'resolved_at'],
};

/** Tools whose `kind` names a document kind to write: their schema lists the registered kinds. */
const NAMES_KIND = new Set(['commit']);

/** Extra lines for models, where a table description would not tell them what the MCP edge adds. */
const NOTE: Record<string, string> = {
  commit: ' A model write: pass provenance.prompt_ref or input_hash.',
};

/**
 * The tools `--tools` names: a comma-separated list of toolset names (`core`, `work`, `documents`,
 * `events`, `all`) and tool names. Throws INVALID_INPUT for an unknown name, a local operation, or more
 * than MAX_TOOLS tools.
 * @default all
 * @example selectTools('core') // ['resume', 'claim', 'resolve', 'commit']
 */
export function selectTools(spec: string | readonly string[] | undefined): string[] {
  const names =
    spec === undefined ? ['all'] : typeof spec === 'string' ? spec.split(',').map((s) => s.trim()) : spec;
  const out = new Set<string>();
  for (const n of names) {
    if (n === '') continue;
    const set = TOOLSETS[n];
    if (set) {
      for (const t of set) out.add(t);
      continue;
    }
    let op: Operation<Record<string, unknown>, unknown>;
    try {
      op = getOperation(n);
    } catch {
      throw new InvalidInputError(
        `--tools: unknown tool or toolset ${JSON.stringify(n)}; toolsets: ${Object.keys(TOOLSETS).join(', ')}; tools: ${DEFAULT_TOOLS.join(', ')}`,
        { field: 'tools' },
      );
    }
    if (op.local || (op.instance ?? 'required') !== 'required') {
      throw new InvalidInputError(
        `--tools: ${n} reads or writes paths on this machine or works without the instance, so it is no MCP tool`,
        { field: 'tools' },
      );
    }
    out.add(n);
  }
  if (out.size === 0) throw new InvalidInputError('--tools names no tool', { field: 'tools' });
  if (out.size > MAX_TOOLS) {
    throw new InvalidInputError(`--tools names ${out.size} tools; at most ${MAX_TOOLS}`, { field: 'tools' });
  }
  return [...out];
}

const BOUNDS = new Set(['minimum', 'maximum', 'minLength', 'maxLength', 'minItems', 'maxItems']);

/** Keywords a model gains nothing from (the server still checks them with the full schema). */
function lean(schema: JsonSchema): JsonSchema {
  const out: JsonSchema = {};
  for (const [k, v] of Object.entries(schema) as Array<[keyof JsonSchema, unknown]>) {
    if (k === 'pattern' || k === 'format') continue;
    // Bounds of lengths, numbers and lists: a call past one is refused with a message naming it.
    if (BOUNDS.has(k) && typeof v === 'number') continue;
    // Unknown fields are refused all the same (INVALID_INPUT naming the field and the allowed ones).
    if (k === 'additionalProperties' && v === false) continue;
    if (k === 'properties' && v && typeof v === 'object') {
      out.properties = Object.fromEntries(
        Object.entries(v as Record<string, JsonSchema>).map(([p, s]) => [p, lean(s)]),
      );
    } else if ((k === 'items' || k === 'additionalProperties') && v && typeof v === 'object') {
      (out as Record<string, unknown>)[k] = lean(v as JsonSchema);
    } else if ((k === 'anyOf' || k === 'oneOf') && Array.isArray(v)) {
      out[k] = (v as JsonSchema[]).map(lean);
    } else {
      (out as Record<string, unknown>)[k] = v;
    }
  }
  return out;
}

/** The JSON type(s) a schema allows, as one keyword (anyOf branches merged). */
function typeOnly(x: JsonSchema): JsonSchema {
  const types = new Set<string>();
  const add = (s: JsonSchema): boolean => {
    if (s.anyOf) return s.anyOf.every(add);
    if (s.type === undefined) return false;
    for (const t of Array.isArray(s.type) ? s.type : [s.type]) types.add(t);
    return true;
  };
  if (!add(x)) return {};
  const list = [...types];
  return { type: list.length === 1 ? list[0]! : list };
}

/**
 * An output schema as a model needs it: the fields of the result and of the records in it with their
 * types, deeper levels as their type only, no lists of required fields (every result the server sends
 * fits the table's full schema; a test holds that).
 */
function leanOutput(schema: JsonSchema, depth = 0): JsonSchema {
  const x = lean(schema);
  if (depth >= 2) return typeOnly(x);
  if (x.anyOf) {
    const objects = x.anyOf.filter((b) => b.type === 'object' && b.properties);
    // A record or null (a claim): the record's fields, nullable.
    if (objects.length === 1 && x.anyOf.length === 2 && x.anyOf.some((b) => b.type === 'null')) {
      const o = leanOutput(objects[0]!, depth);
      return { ...o, type: ['object', 'null'] };
    }
    return typeOnly(x);
  }
  const out: JsonSchema = {};
  if (x.type !== undefined) out.type = x.type;
  if (x.properties) {
    out.properties = Object.fromEntries(
      Object.entries(x.properties)
        .filter(([k]) => !NOT_FOR_MODELS.has(k))
        .map(([k, v]) => [k, leanOutput(v, depth + 1)]),
    );
  }
  if (x.items) out.items = leanOutput(x.items, depth + 1);
  return out;
}

/**
 * A table description without its second clause (after `; `), which speaks of what other edges do (a
 * human answering through the CLI); a tool list is sent with every request, so every word costs.
 */
function firstClause(description: string): string {
  const at = description.indexOf('; ');
  return at < 0 ? description : `${description.slice(0, at)}.`;
}

/** One tool as tools/list shows it, generated from its operation. */
export interface ToolDefinition {
  name: string;
  description: string;
  inputSchema: JsonSchema & { type: 'object' };
  outputSchema: JsonSchema & { type: 'object' };
  annotations: { readOnlyHint: boolean; idempotentHint?: boolean; destructiveHint?: boolean };
  /** The key a non-object result is wrapped under in structuredContent, if any. */
  wrap: string | undefined;
  /** The fields the edge sets (refused when a call passes them). */
  owned: readonly string[];
}

/** The definition of tool `name` (an operation of the table). */
export function toolDefinition(name: string): ToolDefinition {
  const op = getOperation(name);
  const owned: readonly string[] = EDGE_OWNED.filter((f) => f in op.input.properties);
  const input = lean(op.input) as JsonSchema & { type: 'object' };
  if (owned.length > 0 && input.properties) {
    input.properties = Object.fromEntries(
      Object.entries(input.properties).filter(([k]) => !owned.includes(k)),
    );
  }
  // A model that does not know the kinds guesses one ("note") and its first commit is refused: name them.
  if (NAMES_KIND.has(name) && input.properties?.kind) {
    input.properties.kind = { ...input.properties.kind, enum: kindNames() };
  }
  const wrap = WRAP[name] ?? (op.output.type === 'object' ? undefined : 'result');
  let out = leanOutput(op.output);
  const changed = CHANGED_FIELDS[name];
  if (changed && out.properties) {
    out = { ...out, properties: Object.fromEntries(changed.map((k) => [k, out.properties![k]!])) };
  }
  const outputSchema = (
    wrap === undefined ? out : { type: 'object', properties: { [wrap]: out }, required: [wrap] }
  ) as JsonSchema & { type: 'object' };
  return {
    name,
    description: firstClause(op.description) + (NOTE[name] ?? ''),
    inputSchema: input,
    outputSchema,
    annotations: op.writes
      ? { readOnlyHint: false, destructiveHint: false, ...(op.idempotent ? { idempotentHint: true } : {}) }
      : { readOnlyHint: true },
    wrap,
    owned,
  };
}
