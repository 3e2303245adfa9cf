// `ask_human`: a person answers a work item waiting for a human in the host, through MCP elicitation. An
// MCP-edge-only tool (not in the operation table: only an MCP host can put a form in front of its user); what it
// records is an operation of the table — the one the dashboard runs for the same answer (resolve for a
// decision, unpark or cancel for a parked item) — as the human's, with `via: 'elicitation'` in the provenance.
// The answer comes only from the elicitation response, never from the tool's arguments: the model asks, the
// person answers. Written once as a multi-round-trip handler (`inputRequired`): a 2026-07-28 client fulfils
// the form and retries the call; on a 2025-era connection the SDK's shim sends `elicitation/create` itself.
import {
  CLIENT_CAPABILITIES_META_KEY,
  type ClientCapabilities,
  createRequestStateCodec,
  inputRequired,
  inputResponse,
  type RequestStateCodec,
  type ServerContext,
} from '@modelcontextprotocol/server';
import type { Provenance, WorkItem } from '../core/types.js';
import { isRunQuestion, ownerOf } from '../core/work/owners.js';
import { InvalidInputError, InvalidTransitionError, PermissionDeniedError } from '../errors.js';
import type { Instance } from '../instance/instance.js';
import { callOperation } from '../service/edge.js';
import type { CallOrigin } from './attribution.js';
import type { ToolDefinition } from './tools.js';

export const ASK_HUMAN = 'ask_human';

/** The tool as tools/list shows it (to sessions whose client can show a form): lean, like the table's. */
export const ASK_HUMAN_TOOL: ToolDefinition = {
  name: ASK_HUMAN,
  description:
    'Ask the person at this host to answer an item waiting_human (a decision or parked approval) in a form only they fill; records their answer.',
  inputSchema: {
    type: 'object',
    properties: {
      id: { type: 'string' },
      note: { type: 'string', description: 'shown to the person with the question' },
    },
    required: ['id'],
  },
  outputSchema: {
    type: 'object',
    properties: {
      id: { type: 'string' },
      asked: { type: 'boolean' },
      action: { type: ['string', 'null'] },
      status: { type: 'string' },
    },
  },
  annotations: { readOnlyHint: false, destructiveHint: false },
  wrap: undefined,
  owned: [],
};

/** What ask_human answers: whether the person was asked, what they did, the item's status now. */
export interface AskResult {
  id: string;
  asked: boolean;
  action: 'accept' | 'decline' | 'cancel' | null;
  status: string;
  [key: string]: unknown;
}

/** The question as asked, carried (signed) in requestState so the answer is checked against it. */
interface Asked {
  id: string;
  /** `decision`: a document's question (answered with text or one of its options); `approval`: a parked item. */
  shape: 'decision' | 'approval';
  options: string[];
  /** The item's updated_at when asked: an item changed meanwhile is not answered with a stale form. */
  at: string;
}

const NOTE_MAX = 500;
const ANSWER_MAX = 10_000;
const COMMENT_MAX = 2_000;

/** Whether declared client capabilities include form elicitation (a bare `elicitation: {}` is form). */
export function canElicitForm(caps: ClientCapabilities | undefined): boolean {
  const e = caps?.elicitation as Record<string, unknown> | undefined;
  if (e === null || typeof e !== 'object') return false;
  return e.form !== undefined || e.url === undefined;
}

/** The client capabilities a request speaks for: its own envelope (2026-07-28), else the initialize's. */
export function capabilitiesOf(
  ctx: ServerContext,
  modern: boolean,
  initialized: ClientCapabilities | undefined,
): ClientCapabilities | undefined {
  if (!modern) return initialized;
  const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
  return envelope?.[CLIENT_CAPABILITIES_META_KEY] as ClientCapabilities | undefined;
}

/**
 * The requestState codec of one server definition: HMAC-signed with a key of this process (every round of a
 * flow reaches the process that asked: one stdio connection, or the HTTP server), valid 15 minutes, bound to
 * the method and the authenticated principal, so a state minted for one caller is refused from another.
 */
export function askCodec(key: Uint8Array): RequestStateCodec<Asked> {
  return createRequestStateCodec<Asked>({
    key,
    ttlSeconds: 900,
    bind: (ctx) => `${ctx.mcpReq.method}\u0000${ctx.http?.authInfo?.clientId ?? ''}`,
  });
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);

/** The tool's arguments: `id` and an optional `note`; anything else (an answer above all) is refused. */
function parseArgs(raw: unknown): { id: string; note?: string } {
  if (!isObject(raw)) {
    throw new InvalidInputError(`${ASK_HUMAN}: arguments must be an object`, { field: 'arguments' });
  }
  for (const k of Object.keys(raw)) {
    if (k === 'id' || k === 'note') continue;
    throw new InvalidInputError(
      `${ASK_HUMAN}: ${k} is not an argument: the answer, and who gave it, come from the person through the host's form, never from the call (arguments: id, note)`,
      { field: k, allowed: ['id', 'note'] },
    );
  }
  const { id, note } = raw;
  if (typeof id !== 'string' || id === '' || id.length > 200) {
    throw new InvalidInputError(`${ASK_HUMAN}: id must be a work item id (a non-empty string)`, {
      field: 'id',
    });
  }
  if (note !== undefined && (typeof note !== 'string' || note.length > NOTE_MAX)) {
    throw new InvalidInputError(`${ASK_HUMAN}: note must be a string of at most ${NOTE_MAX} characters`, {
      field: 'note',
    });
  }
  return note === undefined ? { id } : { id, note };
}

/** The item, which must be waiting for a human (INVALID_TRANSITION naming its status otherwise). */
async function waitingItem(inst: Instance, id: string): Promise<WorkItem> {
  const item = (await callOperation(inst, 'get_item', { id })) as WorkItem;
  if (item.status !== 'waiting_human') {
    throw new InvalidTransitionError(
      `${ASK_HUMAN}: work item ${id} is ${item.status}, not waiting_human: there is nothing to ask a person`,
      { id, from: item.status, rule: 'ask-waiting-human' },
    );
  }
  return item;
}

/**
 * The options a decision offers: those of its task-ir ambiguity, or those a durable run's question carries (as
 * the dashboard shows them).
 */
async function optionsOf(inst: Instance, item: WorkItem): Promise<string[]> {
  if (isRunQuestion(item)) {
    const options = (item.payload as { options?: unknown } | null)?.options;
    return Array.isArray(options) ? options.filter((o): o is string => typeof o === 'string') : [];
  }
  const owner = ownerOf(item);
  if (owner?.kind !== 'task-ir') return [];
  const p = item.payload as { ambiguity_id?: unknown };
  const doc = (await callOperation(inst, 'get_document', { kind: owner.kind, id: owner.id }).catch(
    () => null,
  )) as { body: { ambiguities?: Array<{ id: string; options?: unknown }> } } | null;
  const options = doc?.body.ambiguities?.find((a) => a.id === p.ambiguity_id)?.options;
  return Array.isArray(options) ? options.filter((o): o is string => typeof o === 'string') : [];
}

/** One field of a form: text, optionally one of an enum (elicitation allows flat primitives only). */
interface FormField {
  type: 'string';
  title: string;
  description?: string;
  enum?: string[];
  minLength?: number;
  maxLength?: number;
}

/** The form's schema. */
function schemaOf(asked: Asked): {
  type: 'object';
  properties: Record<string, FormField>;
  required: string[];
} {
  if (asked.shape === 'approval') {
    return {
      type: 'object',
      properties: {
        decision: {
          type: 'string',
          title: 'Decision',
          description: 'approve: back to the queue; reject: cancel it',
          enum: ['approve', 'reject'],
        },
        comment: { type: 'string', title: 'Comment (optional)', maxLength: COMMENT_MAX },
      },
      required: ['decision'],
    };
  }
  if (asked.options.length > 0) {
    return {
      type: 'object',
      properties: {
        answer: { type: 'string', title: 'Answer', enum: asked.options },
        other: { type: 'string', title: 'Or another answer', maxLength: ANSWER_MAX },
      },
      required: [],
    };
  }
  return {
    type: 'object',
    properties: { answer: { type: 'string', title: 'Your answer', minLength: 1, maxLength: ANSWER_MAX } },
    required: ['answer'],
  };
}

/** The message the person reads: the item's own question first; the model's note only as its note. */
function messageOf(item: WorkItem, asked: Asked, note: string | undefined): string {
  const p = isObject(item.payload) ? item.payload : {};
  const question = typeof p.question === 'string' && p.question.trim() !== '' ? p.question : item.title;
  const lines = [
    asked.shape === 'decision' ? `Decision needed: ${question}` : `Approval needed: ${question}`,
  ];
  if (question !== item.title) lines.push(`(${item.title})`);
  lines.push(`Work item ${item.id}.`);
  if (note !== undefined && note.trim() !== '') lines.push(`The agent adds: ${note.trim()}`);
  return lines.join('\n');
}

/**
 * The accepted content, checked against the schema the person was shown: an object with only its fields,
 * each a string within its enum and lengths, the required ones present. INVALID_INPUT naming the field
 * otherwise (nothing is written).
 */
function checkedContent(content: unknown, asked: Asked): Record<string, string> {
  const schema = schemaOf(asked);
  const refuse = (field: string, why: string) =>
    new InvalidInputError(`${ASK_HUMAN}: the form's answer ${why}; nothing was written`, {
      field,
      rule: 'elicitation-schema',
    });
  if (!isObject(content)) throw refuse('content', 'is not an object');
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(content)) {
    const s = schema.properties[k];
    if (!Object.hasOwn(schema.properties, k) || s === undefined) {
      throw refuse(
        k,
        `has a field the form does not ask for (${k}; fields: ${Object.keys(schema.properties).join(', ')})`,
      );
    }
    if (typeof v !== 'string') throw refuse(k, `gives ${k} as ${v === null ? 'null' : typeof v}, not text`);
    if (s.enum && !s.enum.includes(v)) {
      throw refuse(
        k,
        `gives ${k} ${JSON.stringify(v.slice(0, 100))}, which is none of ${JSON.stringify(s.enum)}`,
      );
    }
    if (typeof s.maxLength === 'number' && v.length > s.maxLength) {
      throw refuse(k, `gives ${k} longer than ${s.maxLength} characters`);
    }
    if (typeof s.minLength === 'number' && v.trim().length < s.minLength)
      throw refuse(k, `leaves ${k} empty`);
    out[k] = v;
  }
  for (const r of schema.required) if (out[r] === undefined) throw refuse(r, `has no ${r}`);
  return out;
}

/** What a session needs to ask: the instance, who the call is, who the person is recorded as. */
export interface AskContext {
  inst: Instance;
  codec: RequestStateCodec<Asked>;
  /** The client capabilities this request speaks for. */
  capabilities: ClientCapabilities | undefined;
  origin: CallOrigin;
  /** The actor the person's answer is recorded as. */
  human: string;
}

/** The provenance of a person's answer given through the host's form. */
export function elicitedProvenance(origin: CallOrigin): Provenance {
  const p: Provenance = {
    via: 'elicitation',
    run_id: origin.session,
    step_id: `mcp-request-${String(origin.request)}`,
    mcp_session: origin.session,
    mcp_request: String(origin.request),
    asked_by: origin.actor,
  };
  if (origin.client) p.mcp_client = `${origin.client.name}/${origin.client.version}`;
  if (origin.principal) p.principal = origin.principal;
  return p;
}

/**
 * One round of ask_human. Round one checks the item and the host, and returns the form as an input-required
 * result (or, without form elicitation, says the item waits for the dashboard or CLI: nothing is asked). The
 * next round carries the person's response: accept records it as the dashboard would, as the human's;
 * decline and cancel write nothing.
 */
export async function askHuman(a: AskContext, raw: unknown, ctx: ServerContext): Promise<unknown> {
  const args = parseArgs(raw);
  const asked = ctx.mcpReq.requestState<Asked>();
  const responses = ctx.mcpReq.inputResponses;
  if (asked === undefined) {
    if (responses !== undefined && Object.keys(responses).length > 0) {
      throw new InvalidInputError(
        `${ASK_HUMAN}: the call carries an answer the server did not ask for (inputResponses without its requestState); nothing was written`,
        { field: 'inputResponses' },
      );
    }
    return ask(a, args, ctx);
  }
  if (!isObject(asked) || asked.id !== args.id) {
    throw new InvalidInputError(
      `${ASK_HUMAN}: the answer is to another question than this call's (id ${args.id})`,
      {
        field: 'id',
      },
    );
  }
  const view = inputResponse(responses, 'answer');
  // A retry that lost the response (2026-07-28 clients may drop an entry they could not read): ask again.
  if (view.kind === 'missing') return ask(a, args, ctx);
  if (view.kind !== 'elicit') {
    throw new InvalidInputError(`${ASK_HUMAN}: the response to the form is no elicitation result`, {
      field: 'inputResponses',
    });
  }
  if (view.action !== 'accept') {
    const item = (await callOperation(a.inst, 'get_item', { id: args.id })) as WorkItem;
    return result({ id: args.id, asked: true, action: view.action, status: item.status });
  }
  const content = checkedContent(view.content, asked);
  const item = await waitingItem(a.inst, args.id);
  if (item.updated_at !== asked.at) {
    throw new InvalidTransitionError(
      `${ASK_HUMAN}: work item ${args.id} changed while the person was asked; nothing was written: ask again`,
      { id: args.id, from: item.status, rule: 'ask-stale' },
    );
  }
  const by = { actor: a.human, actor_kind: 'human' };
  const run = { provenance: elicitedProvenance(a.origin) };
  let after: WorkItem;
  let answer: string;
  if (asked.shape === 'decision') {
    // What the dashboard's answer form does: resolve done with { answer }, by the person.
    answer = (content.other ?? '').trim() || (content.answer ?? '').trim();
    if (answer === '') {
      throw new InvalidInputError(`${ASK_HUMAN}: the form's answer is empty; nothing was written`, {
        field: 'answer',
        rule: 'elicitation-schema',
      });
    }
    after = (await callOperation(
      a.inst,
      'resolve',
      { id: args.id, status: 'done', result: { answer }, ...by },
      {},
      run,
    )) as WorkItem;
  } else {
    // The dashboard's Unpark (approve) and Cancel (reject, the comment as its reason).
    answer = content.decision!;
    const comment = content.comment?.trim();
    const reason = comment ? { reason: comment } : {};
    after = (await callOperation(
      a.inst,
      answer === 'approve' ? 'unpark' : 'cancel',
      { id: args.id, ...reason, ...by },
      {},
      run,
    )) as WorkItem;
  }
  return result({ id: args.id, asked: true, action: 'accept', status: after.status, answer, by: a.human });
}

async function ask(a: AskContext, args: { id: string; note?: string }, ctx: ServerContext) {
  const item = await waitingItem(a.inst, args.id);
  if (!canElicitForm(a.capabilities)) {
    return result({ id: item.id, asked: false, action: null, status: item.status });
  }
  // A document's decision, or a durable run's question: answered with a value, never approved into the queue.
  const decision = ownerOf(item) !== null || isRunQuestion(item);
  const asked: Asked = {
    id: item.id,
    shape: decision ? 'decision' : 'approval',
    options: decision ? await optionsOf(a.inst, item) : [],
    at: item.updated_at,
  };
  return inputRequired({
    inputRequests: {
      answer: inputRequired.elicit({
        mode: 'form',
        message: messageOf(item, asked, args.note),
        requestedSchema: schemaOf(asked) as never,
      }),
    },
    requestState: await a.codec.mint(asked, ctx),
  });
}

function textOf(r: AskResult & { answer?: string; by?: string }): string {
  if (!r.asked) {
    return `This host cannot show a form (no elicitation): nothing was asked. ${r.id} waits for a human (the dashboard, or the CLI as a human).`;
  }
  if (r.action === 'accept') {
    return `${r.id}: the person answered ${JSON.stringify(r.answer)} (recorded as ${r.by}, actor_kind human); now ${r.status}.`;
  }
  return `${r.id}: the person ${r.action === 'decline' ? 'declined' : 'dismissed the form'}; nothing was written, it still waits for a human.`;
}

function result(r: AskResult & { answer?: string; by?: string }) {
  const { answer: _a, by: _b, ...structured } = r;
  return { content: [{ type: 'text' as const, text: textOf(r) }], structuredContent: structured };
}

/** An agent principal's session over HTTP is no person: it may not record a human's answer. */
export function refuseAgentPrincipal(principal: string): never {
  throw new PermissionDeniedError(
    `${ASK_HUMAN}: ${principal} is an agent principal: its sessions write as a model, so a person answers through the dashboard or as a human principal`,
    { operation: ASK_HUMAN, principal, rule: 'human-decision' },
  );
}
