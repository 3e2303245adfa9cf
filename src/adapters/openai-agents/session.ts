// AgentStateSession: the OpenAI Agents SDK's Session on an agentstate instance. Items are events of the
// session's stream (appended atomically, ordered by position, safe for many processes at once); what was
// popped or cleared is a small versioned document changed by compare-and-swap.
import { createHash, randomUUID } from 'node:crypto';
import type { AgentInputItem, Session } from '@openai/agents';
import {
  type CommitEffects,
  type Instance,
  InvalidInputError,
  isAgentStateError,
  type Json,
  type KindDefinition,
  registerKind,
} from '../../index.js';

/** The kind of a session's control document: which items were popped, where it was last cleared. */
export const SESSION_KIND = 'openai-agents-session';
/** The event type of one stored item. */
export const SESSION_ITEM_EVENT = 'session_item_added';

const sessionKind: KindDefinition = {
  name: SESSION_KIND,
  description:
    'What was popped from or cleared in an OpenAI Agents session (AgentStateSession); items are events.',
  emits: ['session_cleared', 'session_item_popped'],
  schema: {
    type: 'object',
    required: ['session_id', 'cleared_after', 'popped'],
    properties: {
      session_id: { type: 'string' },
      cleared_after: { type: 'integer', minimum: 0 },
      popped: { type: 'array', items: { type: 'integer' } },
    },
  },
  check(next, prev): CommitEffects {
    const popped = next.popped as number[];
    const before = new Set((prev?.popped as number[] | undefined) ?? []);
    if (next.cleared_after !== (prev?.cleared_after ?? 0)) {
      return {
        events: [
          {
            type: 'session_cleared',
            data: { session_id: next.session_id ?? null, after: next.cleared_after ?? 0 },
          },
        ],
      };
    }
    const gone = popped.filter((p) => !before.has(p));
    return {
      events: gone.map((p) => ({
        type: 'session_item_popped',
        data: { session_id: next.session_id ?? null, position: p },
      })),
    };
  },
};

let registered = false;
function registerSessionKind(): void {
  if (!registered) registerKind(sessionKind);
  registered = true;
}

const STREAM_SAFE = /^[A-Za-z0-9][A-Za-z0-9_.:/@-]{0,150}$/;
const digest = (s: string) => createHash('sha256').update(s).digest('hex').slice(0, 40);

interface Control {
  version: number;
  cleared_after: number;
  popped: number[];
}

export interface AgentStateSessionOptions {
  /** The session id. @default a random UUID */
  sessionId?: string;
  /** Actor of the item events and control commits. @default the instance's worker */
  actor?: string;
}

const PAGE = 500;
const RETRIES = 20;

/**
 * A durable Session for `run(agent, input, { session })`, shared safely by several processes.
 * @example
 * const session = new AgentStateSession(await openInstance({ name: 'support' }), { sessionId: 'user-42' });
 * await run(agent, 'hello', { session });
 */
export class AgentStateSession implements Session {
  readonly instance: Instance;
  readonly sessionId: string;
  /** The event stream holding the items. */
  readonly stream: string;
  readonly #docId: string;
  readonly #actor: string;

  constructor(instance: Instance, options: AgentStateSessionOptions = {}) {
    registerSessionKind();
    const id = options.sessionId ?? randomUUID();
    if (typeof id !== 'string' || id.length === 0 || id.length > 10_000) {
      throw new InvalidInputError('sessionId must be a non-empty string of at most 10000 characters', {
        field: 'sessionId',
      });
    }
    this.instance = instance;
    this.sessionId = id;
    this.#docId = STREAM_SAFE.test(id) ? id : `%${digest(id)}`;
    this.stream = `session:${this.#docId}`;
    this.#actor = options.actor ?? instance.name;
  }

  async getSessionId(): Promise<string> {
    return this.sessionId;
  }

  async #control(): Promise<Control> {
    const d = await this.instance.backend.docs.get(SESSION_KIND, this.#docId);
    if (!d) return { version: 0, cleared_after: 0, popped: [] };
    return {
      version: d.version,
      cleared_after: d.body.cleared_after as number,
      popped: d.body.popped as number[],
    };
  }

  /** Live items newest first, at most `limit`, with their positions. */
  async #newest(c: Control, limit: number): Promise<Array<{ position: number; item: AgentInputItem }>> {
    const popped = new Set(c.popped);
    const out: Array<{ position: number; item: AgentInputItem }> = [];
    let until: number | undefined;
    while (out.length < limit) {
      const page = await this.instance.events.read({
        stream: this.stream,
        type: SESSION_ITEM_EVENT,
        after: c.cleared_after,
        ...(until === undefined ? {} : { until }),
        reverse: true,
        limit: PAGE,
      });
      for (const e of page) {
        if (!popped.has(e.position))
          out.push({ position: e.position, item: (e.data as { item: AgentInputItem }).item });
        if (out.length >= limit) break;
      }
      if (page.length < PAGE) break;
      until = page[page.length - 1]!.position - 1;
    }
    return out;
  }

  async getItems(limit?: number): Promise<AgentInputItem[]> {
    if (limit !== undefined && (!Number.isFinite(limit) || limit <= 0)) return [];
    const c = await this.#control();
    if (limit !== undefined) return (await this.#newest(c, Math.floor(limit))).reverse().map((x) => x.item);
    const popped = new Set(c.popped);
    const items: AgentInputItem[] = [];
    let after = c.cleared_after;
    for (;;) {
      const page = await this.instance.events.read({
        stream: this.stream,
        type: SESSION_ITEM_EVENT,
        after,
        limit: PAGE,
      });
      for (const e of page)
        if (!popped.has(e.position)) items.push((e.data as { item: AgentInputItem }).item);
      if (page.length < PAGE) return items;
      after = page[page.length - 1]!.position;
    }
  }

  /** Appends the items in one transaction: all of them, in order, or none. */
  async addItems(items: AgentInputItem[]): Promise<void> {
    if (!Array.isArray(items))
      throw new InvalidInputError('addItems: items must be an array', { field: 'items' });
    if (items.length === 0) return;
    await this.instance.events.appendMany(
      items.map((item) => ({
        type: SESSION_ITEM_EVENT,
        stream: this.stream,
        data: { session_id: this.sessionId, item: item as unknown as Json },
        actor: this.#actor,
      })),
    );
  }

  async popItem(): Promise<AgentInputItem | undefined> {
    for (let attempt = 1; ; attempt++) {
      const c = await this.#control();
      const [last] = await this.#newest(c, 1);
      if (!last) return undefined;
      try {
        await this.#commit(
          c,
          { cleared_after: c.cleared_after, popped: [...c.popped, last.position] },
          'pop item',
        );
        return last.item;
      } catch (err) {
        // Another process popped or cleared meanwhile: look again, so no item is popped twice.
        if (!isAgentStateError(err, 'STATE_CONFLICT') || attempt >= RETRIES) throw err;
      }
    }
  }

  async clearSession(): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      const c = await this.#control();
      const [newest] = await this.instance.events.read({
        stream: this.stream,
        type: SESSION_ITEM_EVENT,
        reverse: true,
        limit: 1,
      });
      const after = Math.max(c.cleared_after, newest?.position ?? 0);
      if (after === c.cleared_after && c.popped.length === 0) return;
      try {
        await this.#commit(c, { cleared_after: after, popped: [] }, 'clear session');
        return;
      } catch (err) {
        if (!isAgentStateError(err, 'STATE_CONFLICT') || attempt >= RETRIES) throw err;
      }
    }
  }

  async #commit(
    c: Control,
    next: { cleared_after: number; popped: number[] },
    reason: string,
  ): Promise<void> {
    await this.instance.docs.commit({
      kind: SESSION_KIND,
      id: this.#docId,
      expected_version: c.version,
      body: { session_id: this.sessionId, ...next },
      actor: this.#actor,
      reason,
    });
  }
}
