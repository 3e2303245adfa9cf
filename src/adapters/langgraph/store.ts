// AgentStateStore: LangGraph's BaseStore (long-term memory) over versioned documents. Every put is a
// version with its actor, provenance and history (`agentstate state history langgraph-store <id>`), a
// delete is a recorded version too, and namespaces are matched by equality of their labels, never by a
// pattern (LangGraph's own store leaked across namespaces through an unescaped LIKE).
import {
  BaseStore,
  type GetOperation,
  type Item,
  type ListNamespacesOperation,
  type MatchCondition,
  type Operation,
  type OperationResults,
  type PutOperation,
  type SearchItem,
  type SearchOperation,
  validateNamespace,
} from '@langchain/langgraph-checkpoint';
import {
  type ActorKind,
  type DocumentRecord,
  type Instance,
  InvalidInputError,
  isAgentStateError,
  type JsonObject,
  type Provenance,
} from '../../index.js';
import { canonical, joinId } from './encoding.js';
import { registerLangGraphKinds, STORE_KIND } from './kinds/kind.js';

/** Options of AgentStateStore (and of its `as`). */
export interface AgentStateStoreOptions {
  /** Actor recorded on every put. @default the instance's worker */
  actor?: string;
  /** Actor kind recorded on every put. @default 'system' */
  actorKind?: ActorKind;
  /** Provenance recorded on every put (required by the store when actorKind is 'model'). */
  provenance?: Provenance;
}

/** The document id of an item: its namespace labels and key joined (hashed when not plain). */
export function storeItemId(namespace: string[], key: string): string {
  return joinId([...namespace, key]);
}

const RETRIES = 10;

interface StoredItem {
  namespace: string[];
  key: string;
  value: Record<string, unknown> | null;
}

function checkKey(key: unknown): string {
  if (typeof key !== 'string' || key.length === 0 || key.length > 10_000) {
    throw new InvalidInputError('store: key must be a non-empty string of at most 10000 characters', {
      field: 'key',
    });
  }
  return key;
}

function checkNamespace(ns: unknown, allowEmpty = false): string[] {
  if (!Array.isArray(ns) || ns.some((l) => typeof l !== 'string') || (!allowEmpty && ns.length === 0)) {
    throw new InvalidInputError('store: namespace must be an array of strings', { field: 'namespace' });
  }
  if (ns.length > 0) validateNamespace(ns as string[]);
  return ns as string[];
}

const isOp = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;

/** A filter value against an item's field: equality, or `$eq $ne $gt $gte $lt $lte`. */
function matchesFilter(actual: unknown, wanted: unknown): boolean {
  if (isOp(wanted) && !Array.isArray(wanted) && Object.keys(wanted).every((k) => k.startsWith('$'))) {
    return Object.entries(wanted).every(([op, v]) => {
      const a = actual as number | string;
      const b = v as number | string;
      switch (op) {
        case '$eq':
          return canonical(actual) === canonical(v);
        case '$ne':
          return canonical(actual) !== canonical(v);
        case '$gt':
          return a > b;
        case '$gte':
          return a >= b;
        case '$lt':
          return a < b;
        case '$lte':
          return a <= b;
        default:
          throw new InvalidInputError(`store: unsupported filter operator ${op}`, { field: 'filter' });
      }
    });
  }
  return canonical(actual) === canonical(wanted);
}

function startsWith(ns: string[], prefix: string[]): boolean {
  return prefix.length <= ns.length && prefix.every((l, i) => ns[i] === l);
}

function matchesCondition(ns: string[], c: MatchCondition): boolean {
  if (c.path.length > ns.length) return false;
  const offset = c.matchType === 'suffix' ? ns.length - c.path.length : 0;
  return c.path.every((l, i) => l === '*' || ns[offset + i] === l);
}

/**
 * LangGraph's BaseStore on an agentstate instance.
 * @example const graph = builder.compile({ checkpointer: new AgentStateSaver(inst), store: new AgentStateStore(inst) });
 */
export class AgentStateStore extends BaseStore {
  /** The instance the items are stored in. */
  readonly instance: Instance;
  readonly #options: AgentStateStoreOptions;

  /** A store on `instance`; registers the adapter's kinds (once per process). */
  constructor(instance: Instance, options: AgentStateStoreOptions = {}) {
    super();
    registerLangGraphKinds();
    this.instance = instance;
    this.#options = options;
  }

  /** The same store writing as another actor (e.g. one agent of several), with its own provenance. */
  as(options: AgentStateStoreOptions): AgentStateStore {
    return new AgentStateStore(this.instance, { ...this.#options, ...options });
  }

  #item(doc: DocumentRecord): Item | null {
    const b = doc.body as unknown as StoredItem;
    if (b.value === null || b.value === undefined) return null;
    return {
      namespace: b.namespace,
      key: b.key,
      value: b.value,
      createdAt: new Date(doc.created_at),
      updatedAt: new Date(doc.updated_at),
    };
  }

  async #get(op: GetOperation): Promise<Item | null> {
    const ns = checkNamespace(op.namespace);
    const key = checkKey(op.key);
    const doc = await this.instance.docs.find(STORE_KIND, storeItemId(ns, key));
    return doc ? this.#item(doc) : null;
  }

  /** Every live item (namespace matched by the caller); items are read one by one from the index of ids. */
  async #all(prefix: string[]): Promise<Item[]> {
    const out: Item[] = [];
    for (const d of await this.instance.docs.list({ kind: STORE_KIND, limit: 100_000 })) {
      // A plain id names its labels: skip other namespaces without reading the body.
      if (!d.id.startsWith('%') && prefix.length > 0 && !startsWith(d.id.split('#').slice(0, -1), prefix))
        continue;
      const doc = await this.instance.docs.find(STORE_KIND, d.id);
      const item = doc && this.#item(doc);
      if (item && startsWith(item.namespace, prefix)) out.push(item);
    }
    return out;
  }

  async #search(op: SearchOperation): Promise<SearchItem[]> {
    const prefix = checkNamespace(op.namespacePrefix, true);
    if (op.query !== undefined && op.query !== null && op.query !== '') {
      // No embeddings here: a query is refused rather than silently ignored.
      throw new InvalidInputError('store: semantic search (query) is not supported by AgentStateStore', {
        field: 'query',
      });
    }
    const filter = Object.entries(op.filter ?? {});
    const items = (await this.#all(prefix)).filter((it) =>
      filter.every(([k, v]) => matchesFilter((it.value as Record<string, unknown>)[k], v)),
    );
    items.sort((a, b) => b.updatedAt.getTime() - a.updatedAt.getTime());
    const offset = op.offset ?? 0;
    return items.slice(offset, offset + (op.limit ?? 10)).map((it) => ({ ...it, score: undefined }));
  }

  async #listNamespaces(op: ListNamespacesOperation): Promise<string[][]> {
    const seen = new Map<string, string[]>();
    for (const it of await this.#all([])) {
      if (!(op.matchConditions ?? []).every((c) => matchesCondition(it.namespace, c))) continue;
      const ns = op.maxDepth === undefined ? it.namespace : it.namespace.slice(0, op.maxDepth);
      seen.set(JSON.stringify(ns), ns);
    }
    const list = [...seen.values()].sort((a, b) => (a.join('\u0000') < b.join('\u0000') ? -1 : 1));
    return list.slice(op.offset ?? 0, (op.offset ?? 0) + (op.limit ?? list.length));
  }

  async #put(op: PutOperation): Promise<void> {
    const ns = checkNamespace(op.namespace);
    const key = checkKey(op.key);
    if (op.value !== null && (typeof op.value !== 'object' || Array.isArray(op.value))) {
      throw new InvalidInputError('store: value must be an object (or null to delete)', { field: 'value' });
    }
    const id = storeItemId(ns, key);
    const o = this.#options;
    for (let attempt = 1; ; attempt++) {
      const doc = await this.instance.docs.find(STORE_KIND, id);
      if (!doc && op.value === null) return;
      try {
        await this.instance.docs.commit({
          kind: STORE_KIND,
          id,
          expected_version: doc?.version ?? 0,
          body: { namespace: ns, key, value: (op.value ?? null) as JsonObject | null },
          actor: o.actor ?? this.instance.name,
          actor_kind: o.actorKind ?? 'system',
          ...(o.provenance === undefined ? {} : { provenance: o.provenance }),
          reason: op.value === null ? 'delete' : 'put',
        });
        return;
      } catch (err) {
        // A put is LangGraph's last-writer-wins, but every writer's version is kept in the history.
        if (!isAgentStateError(err, 'STATE_CONFLICT') || attempt >= RETRIES) throw err;
      }
    }
  }

  /**
   * Runs LangGraph's store operations (get, search, put, list namespaces) and returns their results in
   * order. The reads see the store as it was before the batch; its puts are written after them, the last put
   * of each item winning (a null value deletes the item, as a recorded version).
   */
  override async batch<Op extends Operation[]>(operations: Op): Promise<OperationResults<Op>> {
    const results: unknown[] = [];
    // Reads in a batch see the store as it was before the batch; its puts land after, the last per item winning.
    const puts = new Map<string, PutOperation>();
    for (const op of operations) {
      if ('namespacePrefix' in op) results.push(await this.#search(op));
      else if ('matchConditions' in op || ('limit' in op && !('namespace' in op))) {
        results.push(await this.#listNamespaces(op as ListNamespacesOperation));
      } else if ('value' in op) {
        const put = op as PutOperation;
        puts.set(JSON.stringify([put.namespace, put.key]), put);
        results.push(undefined);
      } else results.push(await this.#get(op as GetOperation));
    }
    for (const op of puts.values()) await this.#put(op);
    return results as OperationResults<Op>;
  }
}
