// AgentStateSession: the OpenAI Agents SDK's Session on an agentstate instance. Items are events of the
// session's stream (appended atomically, ordered by position, safe for many processes at once); what was
// popped or cleared is a small versioned document changed by compare-and-swap.
import { randomUUID } from 'node:crypto';
import type { AgentInputItem, Session } from '@openai/agents';
import { checkInput, isPortableText, LIMITS } from '../../core/input.js';
import { type Instance, InvalidInputError, isAgentStateError, type Json } from '../../index.js';
import { escapedKey, hashedKey } from '../stream-keys.js';
import { registerSessionKind, SESSION_KIND } from './kinds/kind.js';
import type { SessionControl } from './kinds/model.js';

/** The event type of one stored item. */
export const SESSION_ITEM_EVENT = 'session_item_added';

/** Ids that have always been their own key (so the sessions stored under them stay where they are). */
const PLAIN_KEY = /^[A-Za-z0-9][A-Za-z0-9_.:/@-]{0,150}$/;
/** Characters an escaped key keeps as they are (`_` is the escape itself). */
const KEPT = /[A-Za-z0-9.:/@-]/;
const STREAM_PREFIX = 'session:';
/** The longest key: `session:<key>` is a stream name, at most LIMITS.name (200) characters. */
const MAX_KEY = LIMITS.name - STREAM_PREFIX.length;
/** The longest session id: it is stored with every item. */
const MAX_ID = 10_000;

/**
 * The key of a session id in the store: the id of its control document and, after `session:`, its event
 * stream, both of which allow only some characters. Deterministic and injective, so two ids never share a
 * session; three forms that cannot meet:
 * - an id that is a plain name (a letter or digit, then letters, digits and `_.:/@-`, at most 151
 *   characters) is its own key, as it always was;
 * - any other id is `_` then the id with each UTF-8 byte outside `[A-Za-z0-9.:/@-]` written `_XX` (hex),
 *   reversible (`auth0|abc` → `_auth0_7Cabc`), when that fits in 192 characters;
 * - a longer one is `.sha256:` then the SHA-256 of the id in hex.
 */
function sessionKey(id: string): string {
  if (PLAIN_KEY.test(id)) return id;
  return escapedKey(id, KEPT, MAX_KEY) ?? hashedKey(id);
}

/** Refuses, at construction, a session id no store can keep; every other string is accepted. */
function checkSessionId(id: unknown): string {
  const refuse = (why: string) => new InvalidInputError(`sessionId ${why}`, { field: 'sessionId' });
  if (typeof id !== 'string') throw refuse(`must be a string, got ${id === null ? 'null' : typeof id}`);
  if (id.length === 0) throw refuse('must not be empty');
  if (id.length > MAX_ID) throw refuse(`is longer than ${MAX_ID} characters`);
  if (!isPortableText(id))
    throw refuse('must not contain NUL or an unpaired UTF-16 surrogate (neither backend can store them)');
  return id;
}

/** The control document as read: its body's counters, at its version. */
interface Control extends Omit<SessionControl, 'session_id'> {
  version: number;
}

/** Options of AgentStateSession. */
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
  /** The instance the session is stored in. */
  readonly instance: Instance;
  /** The session id (the one given, or a random UUID). */
  readonly sessionId: string;
  /** The event stream holding the items. */
  readonly stream: string;
  readonly #docId: string;
  readonly #actor: string;

  /**
   * A session on `instance`; registers the session kind (once per process). A session id no store can keep
   * (not a string, empty, longer than 10,000 characters, holding NUL or an unpaired surrogate) or an actor
   * that is not a name is refused with INVALID_INPUT.
   */
  constructor(instance: Instance, options: AgentStateSessionOptions = {}) {
    registerSessionKind();
    const id = checkSessionId(options.sessionId ?? randomUUID());
    const actor = options.actor ?? instance.name;
    checkInput('AgentStateSession', { actor }, { actor: { type: 'name' } });
    this.instance = instance;
    this.sessionId = id;
    this.#docId = sessionKey(id);
    this.stream = `${STREAM_PREFIX}${this.#docId}`;
    this.#actor = actor;
  }

  /** The session id. */
  async getSessionId(): Promise<string> {
    return this.sessionId;
  }

  async #control(): Promise<Control> {
    const d = await this.instance.docs.find(SESSION_KIND, this.#docId);
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

  /**
   * The newest `limit` items, oldest first; all of them without a limit. A limit means what it means to the
   * SDK's MemorySession: none for 0 or less, the newest ⌈limit⌉ for a fraction (1.5 → 2), all for Infinity.
   * A limit that is not a number (or NaN) is INVALID_INPUT.
   */
  async getItems(limit?: number): Promise<AgentInputItem[]> {
    if (limit !== undefined && (typeof limit !== 'number' || Number.isNaN(limit))) {
      throw new InvalidInputError(
        `getItems: limit must be a number of items, got ${typeof limit === 'number' ? 'NaN' : typeof limit}`,
        { field: 'limit' },
      );
    }
    if (limit !== undefined && limit <= 0) return [];
    const c = await this.#control();
    if (limit !== undefined && limit !== Number.POSITIVE_INFINITY)
      return (await this.#newest(c, Math.ceil(limit))).reverse().map((x) => x.item);
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

  /**
   * Removes the newest item and returns it; undefined when the session has none. Safe while other
   * processes pop or clear: an item is never popped twice (a conflicting commit is retried, up to 20 times).
   */
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

  /**
   * Clears the session: the items stored so far are no longer returned (their events stay in the log).
   * Writes nothing when there is nothing to clear.
   */
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

  async #commit(c: Control, next: Omit<SessionControl, 'session_id'>, reason: string): Promise<void> {
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
