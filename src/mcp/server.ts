// The MCP server of one instance, built on the official SDK: every tool a thin view of one operation of the
// service table (its schemas, its run, its errors through the one error table), documents as resources with
// change notifications. Transports (stdio, Streamable HTTP) are in serve.ts.
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import {
  fromJsonSchema,
  type jsonSchemaValidator,
  McpServer,
  type McpServerFactory,
  ProtocolError,
  ProtocolErrorCode,
  ResourceNotFoundError,
  ResourceTemplate,
  type ServerContext,
} from '@modelcontextprotocol/server';
import { checkAccess, type Principal } from '../auth/access.js';
import type { DocumentRecord, EventRecord } from '../core/types.js';
import { digestBatchEvent } from '../core/work/batches.js';
import { InvalidInputError, isAgentStateError, toAgentStateError, toolError } from '../errors.js';
import type { Instance } from '../instance/instance.js';
import { kindNames } from '../kinds/registry.js';
import { callOperation } from '../service/edge.js';
import type { EventWatch } from '../service/operations/events.js';
import { getOperation } from '../service/table.js';
import { type CallOrigin, mcpWriter } from './attribution.js';
import { DEFAULT_MAX_RESULT_CHARS, fitResult, parseBudget } from './budget.js';
import {
  ASK_HUMAN,
  ASK_HUMAN_TOOL,
  askCodec,
  askHuman,
  canElicitForm,
  capabilitiesOf,
  refuseAgentPrincipal,
} from './elicitation.js';
import { textOf } from './text.js';
import { MAX_TOOLS, selectTools, type ToolDefinition, toolDefinition } from './tools.js';

const VERSION = (createRequire(import.meta.url)('../../package.json') as { version: string }).version;

/**
 * The SDK would check arguments against the advertised (lean) schema and answer in its own words; the
 * operation's validator checks them against the full schema instead and refuses with a typed INVALID_INPUT
 * the model can act on, so the SDK's check is a pass-through.
 */
const OPERATION_VALIDATES: jsonSchemaValidator = {
  getValidator: () => (input: unknown) => ({ valid: true, data: input, errorMessage: undefined }) as never,
};

/** What `createAgentStateMcp` serves: the instance, the tools, and who the sessions write as. */
export interface AgentStateMcpOptions {
  /** The open instance every session of this server works on. */
  instance: Instance;
  /**
   * Tools to serve: toolset names (`core`, `work`, `documents`, `events`, `all`) and tool names.
   * @default 'all' (the ten of DEFAULT_TOOLS)
   */
  tools?: string | readonly string[];
  /** The model the host runs, recorded as provenance.model_id of every write. @default none */
  model?: string;
  /**
   * Lease owner and actor of every session's writes. @default `<client name>-<6 hex>` per connection
   * (stdio); over Streamable HTTP the client name a 2026-07-28 request carries, `mcp` for a 2025-era
   * client (the stateless endpoint keeps nothing of its initialize)
   */
  worker?: string;
  /** How often the document watcher polls the log for changes of subscribed documents, ms. @default 250 */
  pollMs?: number;
  /**
   * Offer `ask_human` to sessions whose client can show a form (MCP elicitation): a person answers an item
   * waiting for a human in the host, recorded as theirs (`via: 'elicitation'`). @default true
   */
  elicitation?: boolean;
  /**
   * The most characters one tool result may take (text and structured content together): what does not fit
   * is left out whole and the result says how to get it. At least MIN_MAX_RESULT_CHARS.
   * @default DEFAULT_MAX_RESULT_CHARS (100,000, about 25,000 tokens)
   */
  maxResultChars?: number;
}

/** One MCP server definition for an instance: builds the SDK server of each connection (or HTTP request). */
export interface AgentStateMcp {
  /** The tools served, in tools/list order. */
  readonly tools: readonly string[];
  /** The factory `serveStdio` and `createMcpHandler` take. */
  readonly factory: McpServerFactory;
  /** Calls `fn(uri)` for every committed document change (any process), until the returned stop is called. */
  watchDocuments(fn: (uri: string) => void): () => void;
  /** Stops the watcher. The instance stays open (it is the caller's). */
  close(): Promise<void>;
}

/** `agentstate://<kind>/<id>` (each part percent-encoded), with `@<version>` for one version. */
export function documentUri(kind: string, id: string, version?: number): string {
  return `agentstate://${encodeURIComponent(kind)}/${encodeURIComponent(id)}${version === undefined ? '' : `@${version}`}`;
}

/** The document a resource URI names, or null when it is no agentstate document URI. */
export function parseDocumentUri(uri: string): { kind: string; id: string; version?: number } | null {
  const m = /^agentstate:\/\/([^/@]+)\/([^/@]+)(?:@(\d{1,15}))?$/.exec(uri);
  if (!m) return null;
  try {
    const kind = decodeURIComponent(m[1]!);
    const id = decodeURIComponent(m[2]!);
    return m[3] === undefined ? { kind, id } : { kind, id, version: Number(m[3]) };
  } catch {
    return null;
  }
}

/** The `authInfo` an HTTP edge hands the MCP handler for a caller it authenticated (principal in `extra`). */
export function authInfoOf(principal: Principal): {
  token: string;
  clientId: string;
  scopes: string[];
  extra: { principal: Principal };
} {
  return { token: '', clientId: principal.name, scopes: [principal.role], extra: { principal } };
}

function principalOfAuth(auth: { extra?: Record<string, unknown> } | undefined): Principal | undefined {
  const p = auth?.extra?.principal as Principal | undefined;
  return p && typeof p.name === 'string' && typeof p.role === 'string' ? p : undefined;
}

/**
 * Caps what one call may ask for at what one result can show: a large document comes as its outline within
 * the budget (read on by paths), and claim_many claims no more items than it can show (none is held unseen).
 * Only a number is clamped: anything else is the schema's to refuse.
 */
function fitToBudget(tool: string, input: Record<string, unknown>, budget: number): void {
  if (tool === 'get_document') {
    const most = documentChars(budget);
    const given = input.max_chars;
    if (given === undefined || (typeof given === 'number' && given > most)) input.max_chars = most;
  } else if (tool === 'claim_many') {
    const most = claimsShown(budget);
    if (typeof input.limit === 'number' && input.limit > most) input.limit = most;
  }
}

/** The SDK copies the arguments object; an own "__proto__" key became its prototype on the way: refused. */
function refuseProto(tool: string, raw: unknown): void {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return;
  const proto = Object.getPrototypeOf(raw);
  if (proto !== Object.prototype && proto !== null) {
    throw new InvalidInputError(
      `${tool}: the arguments have the key "__proto__", which is refused (__proto__, constructor, prototype are never accepted as keys)`,
      { field: '__proto__', operation: tool },
    );
  }
}

/** The most characters of a document body get_document returns within a result budget (the rest outlined). */
function documentChars(budget: number): number {
  return Math.max(200, Math.floor(budget * 0.9) - 1000);
}

/**
 * The most items claim_many takes through MCP: each shown whole but its payload (a title is at most 1,000
 * characters; payloads over the budget are replaced by a note), so none is held unseen.
 */
function claimsShown(budget: number): number {
  return Math.max(1, Math.floor(budget / 2000));
}

/** A result as agents read it: a batch event as its item count and first ids, not every item's payload. */
function agentView(tool: string, result: unknown): unknown {
  return tool === 'read_events' && Array.isArray(result)
    ? (result as EventRecord[]).map(digestBatchEvent)
    : result;
}

/** A name fit to be part of a worker name (client names are free text). */
const slug = (s: string) => s.replace(/[^A-Za-z0-9._-]+/g, '-').slice(0, 40) || 'mcp';

/**
 * Builds the MCP server definition of an instance: `factory` for the SDK's `serveStdio` or
 * `createMcpHandler`, the selected tools, and the document watcher behind resource notifications.
 * @example serveStdio(createAgentStateMcp({ instance: await openInstance({ name: 'planner' }) }).factory)
 */
export function createAgentStateMcp(options: AgentStateMcpOptions): AgentStateMcp {
  const inst = options.instance;
  const tools = selectTools(options.tools);
  const budget =
    options.maxResultChars === undefined
      ? DEFAULT_MAX_RESULT_CHARS
      : parseBudget(options.maxResultChars, 'maxResultChars');
  // Signs the question ask_human puts to a person, so the answer that comes back is checked against it.
  const codec = askCodec(randomBytes(32));
  // The definitions name the registered kinds (commit's kind enum): rebuilt when a kind is registered later.
  let built: { kinds: string; defs: ToolDefinition[] } | undefined;
  const definitions = (): ToolDefinition[] => {
    const kinds = kindNames().join(',');
    if (built?.kinds !== kinds) built = { kinds, defs: tools.map(toolDefinition) };
    return built.defs;
  };
  /** Resume's "since your last call": the position each worker's last resume returned. */
  const cursors = new Map<string, number>();
  const listeners = new Set<(uri: string) => void>();
  /** The running watcher; `ready` settles once it has fixed the position it watches from. */
  let watcher: { ac: AbortController; ready: Promise<void> } | null = null;

  /** Starts the watcher if it is not running; resolves once every later commit is sure to be seen. */
  function startWatcher(): Promise<void> {
    if (watcher) return watcher.ready;
    const ac = new AbortController();
    let fixed!: () => void;
    const ready = new Promise<void>((resolve) => {
      fixed = resolve;
    });
    const me = { ac, ready };
    watcher = me;
    void (async () => {
      try {
        // From the head: every commit after this point is seen.
        const watch = (await callOperation(
          inst,
          'watch_events',
          { type: 'state_committed' },
          {},
          { signal: ac.signal, pollMs: options.pollMs ?? 250 },
        )) as EventWatch;
        fixed();
        for await (const e of watch.events) {
          const d = e.data as { kind?: unknown; id?: unknown; noop?: unknown };
          if (typeof d.kind !== 'string' || typeof d.id !== 'string' || d.noop === true) continue;
          const uri = documentUri(d.kind, d.id);
          for (const fn of listeners) fn(uri);
        }
      } catch {
        // A closed store ends the watcher; notifications are a hint, resources/read is the truth.
      } finally {
        fixed();
        if (watcher === me) watcher = null;
      }
    })();
    return ready;
  }

  function watchDocuments(fn: (uri: string) => void): () => void {
    listeners.add(fn);
    void startWatcher();
    return () => {
      listeners.delete(fn);
      if (listeners.size === 0) {
        watcher?.ac.abort();
        watcher = null;
      }
    };
  }

  const factory: McpServerFactory = (reqCtx) => {
    const http = reqCtx?.requestInfo !== undefined;
    // A 2025-era client over HTTP reaches a stateless endpoint: each response rides its own POST and no stream
    // stays open to carry a later change, so subscriptions are not offered there rather than never delivered.
    // Stdio (both eras) and 2026-07-28 HTTP clients (subscriptions/listen) get them.
    const subscribable = !http || reqCtx?.era === 'modern';
    const server = new McpServer(
      { name: 'agentstate', version: VERSION },
      {
        capabilities: { tools: {}, resources: subscribable ? { subscribe: true } : {} },
        instructions:
          'agentstate: durable, versioned state shared safely by several agent sessions. Call resume first and after a pause; commit with the version you read (STATE_CONFLICT means read again).',
        // ask_human's question rides requestState between rounds: only a state this server signed is let in.
        requestState: { verify: (state, ctx) => codec.verify(state, ctx) },
      },
    );
    const connection = randomBytes(3).toString('hex');
    // Who the HTTP request authenticated as (the edge in front of the handler checked the token).
    const principal = principalOfAuth(reqCtx?.authInfo);
    const named = principal !== undefined && principal.role !== 'owner';

    const origin = (ctx: ServerContext): CallOrigin => {
      const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
      const fromEnvelope = envelope?.['io.modelcontextprotocol/clientInfo'] as
        | { name?: unknown; version?: unknown }
        | undefined;
      const info = server.server.getClientVersion() ?? fromEnvelope;
      const client =
        info && typeof info.name === 'string'
          ? { name: info.name, version: typeof info.version === 'string' ? info.version : '' }
          : undefined;
      const session = ctx.sessionId ?? `mcp-${connection}`;
      // Over HTTP a named principal works under its own name (a session, when the transport keeps one, as a
      // worker of its own) and holds no one else's leases; the owner's clients name their workers as they
      // like (one credential: the worker is what tells them apart), by default the client's name.
      const base = named ? principal!.name : slug(client?.name ?? 'mcp');
      const own = ctx.sessionId === undefined ? base : `${base}/${slug(ctx.sessionId).slice(0, 12)}`;
      const actor = http && named ? own : (options.worker ?? (http ? own : `${base}-${connection}`));
      const actorKind = named && principal!.role !== 'agent' ? 'human' : 'model';
      return {
        actor,
        actorKind,
        ownWorkersOnly: http && named,
        model: options.model,
        client,
        session,
        request: ctx.mcpReq.id,
        ...(principal ? { principal: principal.name } : {}),
      };
    };

    for (const def of definitions()) registerTool(server, def, origin, principal);
    const modern = reqCtx?.era === 'modern';
    const capabilities = (ctx: ServerContext) =>
      capabilitiesOf(ctx, modern, server.server.getClientCapabilities());
    const asks = options.elicitation !== false && !(named && principal!.role === 'agent');
    if (options.elicitation !== false) {
      server.registerTool(
        ASK_HUMAN,
        {
          description: ASK_HUMAN_TOOL.description,
          inputSchema: fromJsonSchema(ASK_HUMAN_TOOL.inputSchema as never, OPERATION_VALIDATES),
          outputSchema: fromJsonSchema(ASK_HUMAN_TOOL.outputSchema as never, OPERATION_VALIDATES),
          annotations: ASK_HUMAN_TOOL.annotations,
        },
        async (args: unknown, ctx: ServerContext) => {
          try {
            const o = origin(ctx);
            if (principal) checkAccess(principal, { name: ASK_HUMAN, writes: true });
            if (named && principal!.role === 'agent') refuseAgentPrincipal(principal!.name);
            refuseProto(ASK_HUMAN, args);
            // The person is the principal's (a human principal's client), else the user of this host.
            const human = named ? principal!.name : `human@${slug(o.client?.name ?? 'mcp')}`;
            return (await askHuman(
              { inst, codec, capabilities: capabilities(ctx), origin: o, human },
              args ?? {},
              ctx,
            )) as never;
          } catch (err) {
            return toolError(err, budget);
          }
        },
      );
    }
    // tools/list as the SDK builds it, with ask_human only for a client that can show a form (2025 era: as it
    // declared at initialize; 2026-07-28: as this request's envelope declares): the others never see it. The
    // list stays at most ten tools (DESIGN: agents pay for every token): in a full list ask_human takes the
    // place of history, the least used (still callable, and --tools can name it).
    const withAsk = () => {
      const defs = definitions();
      return [
        ...(defs.length >= MAX_TOOLS ? defs.filter((d) => d.name !== 'history') : defs),
        ASK_HUMAN_TOOL,
      ];
    };
    server.server.setRequestHandler('tools/list', (_req, ctx) => ({
      tools: (asks && canElicitForm(capabilities(ctx)) ? withAsk() : definitions()).map((d) => ({
        name: d.name,
        description: d.description,
        inputSchema: d.inputSchema as never,
        annotations: d.annotations,
        outputSchema: d.outputSchema as never,
      })),
    }));
    registerDocuments(server);

    // Per-document subscriptions (2025-era connections): notify only what was subscribed. On a 2026-era
    // connection the transport entry filters by the client's listen filter, so every change is offered.
    const subscribed = new Set<string>();
    let stop: (() => void) | null = null;
    const notify = (uri: string) => {
      if (reqCtx?.era === 'modern' || subscribed.has(uri)) {
        server.server.sendResourceUpdated({ uri }).catch(() => {});
      }
    };
    const ensureWatching = () => {
      stop ??= watchDocuments(notify);
    };
    if (subscribable) {
      // The reply waits until the watcher has fixed its start: a commit made after the client saw the reply
      // is always notified (under load the watcher may take a while to read the head).
      server.server.setRequestHandler('resources/subscribe', async (req) => {
        subscribed.add(req.params.uri);
        ensureWatching();
        await startWatcher();
        return {};
      });
      server.server.setRequestHandler('resources/unsubscribe', (req) => {
        subscribed.delete(req.params.uri);
        if (subscribed.size === 0 && reqCtx?.era !== 'modern') {
          stop?.();
          stop = null;
        }
        return {};
      });
    }
    // A stdio connection of the 2026 era keeps its instance for its lifetime: it watches from the start.
    if (reqCtx?.era === 'modern' && !http) ensureWatching();
    const previous = server.server.onclose;
    server.server.onclose = () => {
      stop?.();
      stop = null;
      previous?.();
    };
    return server;
  };

  function registerTool(
    server: McpServer,
    def: ToolDefinition,
    origin: (ctx: ServerContext) => CallOrigin,
    principal: Principal | undefined,
  ) {
    const op = getOperation(def.name);
    server.registerTool(
      def.name,
      {
        description: def.description,
        inputSchema: fromJsonSchema(def.inputSchema as never, OPERATION_VALIDATES),
        outputSchema: fromJsonSchema(def.outputSchema as never, OPERATION_VALIDATES),
        annotations: def.annotations,
      },
      async (args: unknown, ctx: ServerContext) => {
        try {
          const o = origin(ctx);
          const raw = args === undefined || args === null ? {} : args;
          refuseProto(def.name, raw);
          // A client's W3C trace context (params._meta.traceparent) is the parent of the operation's span.
          const tp = ctx.mcpReq._meta?.traceparent;
          // The input as it ran (attributed, fitted): a cut result names its next page from it.
          let input: Record<string, unknown> = {};
          const result = await callOperation(
            inst,
            def.name,
            raw,
            {
              principal,
              writer: mcpWriter(o),
              traceparent: typeof tp === 'string' ? tp : undefined,
              fit: (_op, i) => {
                fitToBudget(def.name, i, budget);
                input = i;
              },
            },
            { cursors },
          );
          const fitted = fitResult({
            tool: def.name,
            wrap: def.wrap,
            page: op.page,
            writes: op.writes,
            input,
            result: agentView(def.name, result),
            budget,
            text: (r, brief) => textOf(def.name, r, brief),
          });
          return {
            content: [{ type: 'text' as const, text: fitted.text }],
            structuredContent: fitted.structuredContent,
          };
        } catch (err) {
          return toolError(err, budget);
        }
      },
    );
  }

  function registerDocuments(server: McpServer) {
    server.registerResource(
      'document',
      new ResourceTemplate('agentstate://{kind}/{id}', {
        list: async () => {
          // Resources are views of the table's operations, like the tools.
          const docs = (await callOperation(inst, 'list_documents', { limit: 1000 })) as Array<
            Omit<DocumentRecord, 'body'>
          >;
          return {
            resources: docs.map((d) => ({
              uri: documentUri(d.kind, d.id),
              name: `${d.kind}/${d.id}`,
              mimeType: 'application/json',
              description: `version ${d.version}, updated ${d.updated_at}`,
            })),
          };
        },
      }),
      {
        description: 'A versioned document (JSON); append @<version> for one version. Subscribe for changes.',
        mimeType: 'application/json',
      },
      async (uri: URL) => {
        const ref = parseDocumentUri(uri.href);
        if (!ref) {
          throw new ProtocolError(
            ProtocolErrorCode.InvalidParams,
            `not an agentstate document URI: ${uri.href} (agentstate://<kind>/<id>[@<version>])`,
          );
        }
        try {
          const d = (await callOperation(inst, 'get_document', ref)) as DocumentRecord;
          return {
            contents: [
              {
                uri: uri.href,
                mimeType: 'application/json',
                text: JSON.stringify({ kind: d.kind, id: d.id, version: d.version, body: d.body }),
              },
            ],
          };
        } catch (err) {
          if (isAgentStateError(err, 'NOT_FOUND')) throw new ResourceNotFoundError(uri.href);
          const e = toAgentStateError(err);
          throw new ProtocolError(
            e.code === 'INVALID_INPUT' ? ProtocolErrorCode.InvalidParams : ProtocolErrorCode.InternalError,
            `${e.code}: ${e.message}`,
            e.toJSON(),
          );
        }
      },
    );
  }

  return {
    tools,
    factory,
    watchDocuments,
    async close() {
      listeners.clear();
      watcher?.ac.abort();
      watcher = null;
    },
  };
}
