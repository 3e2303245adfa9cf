// AgentStateSessionStore: the Claude Agent SDK's SessionStore on an agentstate instance. Each transcript (a
// session's main one, or a subagent's subpath) is the event stream of its entries, appended atomically and
// ordered by position; a small versioned document per session, changed by compare-and-swap, says what is
// deleted, which subpaths exist, the session's mtime and the SDK's summary; a stream per project lists its
// sessions. The SDK's types are written here structurally: the package is never loaded.
import { checkInput, isPortableText, storedObject } from '../../core/input.js';
import {
  type Instance,
  InvalidInputError,
  isAgentStateError,
  type Json,
  type JsonObject,
} from '../../index.js';
import { escapedKey, hashedKey } from '../stream-keys.js';
import { registerSessionStoreKind, SESSION_STORE_KIND } from './kinds/kind.js';
import type { SessionControl, SubpathControl } from './kinds/model.js';

/**
 * Identifies a transcript, as the SDK's `SessionKey`: a session's main transcript (no subpath) or one of its
 * subagent transcripts (`subpath`, never the empty string).
 */
export interface SessionKey {
  /** The caller's scope (the SDK's default: the sanitized cwd). */
  projectKey: string;
  /** The session id. */
  sessionId: string;
  /** Undefined for the main transcript; e.g. `subagents/agent-1` for a subagent's. */
  subpath?: string;
}

/** One transcript line, as the SDK's `SessionStoreEntry`: a `type`, usually a `uuid`, the rest opaque JSON. */
export interface SessionStoreEntry {
  /** The entry's kind (user, assistant, summary, tag …). */
  type: string;
  /** The entry's id: the idempotency key of append. */
  uuid?: string;
  /** ISO-8601 time the SDK wrote it. */
  timestamp?: string;
  [k: string]: unknown;
}

/** The SDK's `SessionSummaryEntry`: kept by the store as foldSessionSummary returns it. */
export interface SessionSummaryEntry {
  /** The session id. */
  sessionId: string;
  /** When the store wrote it, integer epoch ms (the clock of listSessions' mtime). */
  mtime: number;
  /** Opaque to the store. */
  data: Record<string, unknown>;
}

/** The signature of the SDK's `foldSessionSummary`. */
export type FoldSessionSummary = (
  prev: SessionSummaryEntry | undefined,
  key: SessionKey,
  entries: SessionStoreEntry[],
  options?: { mtime?: number },
) => SessionSummaryEntry;

/** Options of AgentStateSessionStore. */
export interface AgentStateSessionStoreOptions {
  /**
   * The SDK's `foldSessionSummary` (`import { foldSessionSummary } from '@anthropic-ai/claude-agent-sdk'`).
   * With it, each append to a main transcript folds its entries into the session's summary, in the same
   * compare-and-swap as the mtime, and the store has `listSessionSummaries`; without it, the store has no
   * `listSessionSummaries` and the SDK lists sessions by loading them. @default undefined
   */
  foldSessionSummary?: FoldSessionSummary;
  /** Actor of the entry events and control commits. @default the instance's agent name */
  actor?: string;
}

/** The event type of one transcript entry (its data is the entry). */
export const SESSION_ENTRY_EVENT = 'claude_session_entry';
/** The event type that lists a session in its project's stream. */
export const SESSION_LISTED_EVENT = 'claude_session_listed';

/** Characters a key part keeps as they are: those of a stream name, but `_` (the escape) and `:` (the separator). */
const KEPT = /[A-Za-z0-9./@-]/;
/** A part that is its own key: a letter or digit, then letters, digits and `_./@-`. */
const PLAIN = /^[A-Za-z0-9][A-Za-z0-9_./@-]*$/;
/** Stream names and document ids are at most this long (LIMITS.name). */
const MAX_NAME = 200;
const ENTRY_PREFIX = 'claude:';
const PROJECT_PREFIX = 'claude-project:';
/** The longest id, project key or subpath: each is stored with the session. */
const MAX_ID = 10_000;
const PAGE = 1000;
/** Documents read at once when listing a project's sessions. */
const READ_AHEAD = 8;
/** Compare-and-swap attempts before a commit that keeps losing to other writers gives up. */
const RETRIES = 50;

/**
 * The key of a tuple of ids (project, session, subpath), at most `max` characters, deterministic and
 * injective: each part is its own key when plain, else escaped (stream-keys.ts, with `:` escaped too), and
 * the parts are joined by `:`; a key that would be longer is `.sha256:` and the hash of the tuple as JSON.
 */
function tupleKey(parts: string[], max: number): string {
  const keys: string[] = [];
  let length = parts.length - 1;
  for (const part of parts) {
    const key = PLAIN.test(part) ? part : escapedKey(part, KEPT, max);
    if (key !== null) length += key.length;
    if (key === null || length > max) return hashedKey(JSON.stringify(parts));
    keys.push(key);
  }
  return keys.join(':');
}

/** Refuses a key part no store can keep: not a string, empty, too long, NUL or an unpaired surrogate. */
function checkPart(op: string, field: string, v: unknown): string {
  const refuse = (why: string) => new InvalidInputError(`${op}: ${field} ${why}`, { field, operation: op });
  if (typeof v !== 'string') throw refuse(`must be a string, got ${v === null ? 'null' : typeof v}`);
  if (v.length === 0) throw refuse('must not be empty');
  if (v.length > MAX_ID) throw refuse(`is longer than ${MAX_ID} characters`);
  if (!isPortableText(v)) throw refuse('must not contain NUL or an unpaired UTF-16 surrogate');
  return v;
}

/** A checked session key: its parts and where it is stored. */
interface Place {
  projectKey: string;
  sessionId: string;
  subpath: string | undefined;
  /** The session's control document. */
  docId: string;
  /** The transcript's entry stream. */
  stream: string;
}

function checkKey(op: string, key: unknown, withSubpath = true): Place {
  if (typeof key !== 'object' || key === null)
    throw new InvalidInputError(`${op}: key must be an object`, { field: 'key', operation: op });
  const k = key as Record<string, unknown>;
  const projectKey = checkPart(op, 'projectKey', k.projectKey);
  const sessionId = checkPart(op, 'sessionId', k.sessionId);
  const subpath = withSubpath && k.subpath !== undefined ? checkPart(op, 'subpath', k.subpath) : undefined;
  const parts = subpath === undefined ? [projectKey, sessionId] : [projectKey, sessionId, subpath];
  return {
    projectKey,
    sessionId,
    subpath,
    docId: tupleKey([projectKey, sessionId], MAX_NAME),
    stream: `${ENTRY_PREFIX}${tupleKey(parts, MAX_NAME - ENTRY_PREFIX.length)}`,
  };
}

function projectStream(projectKey: string): string {
  return `${PROJECT_PREFIX}${tupleKey([projectKey], MAX_NAME - PROJECT_PREFIX.length)}`;
}

/** The entries as stored (the store's JSON rule, at most 1 MiB each), or INVALID_INPUT before anything is written. */
function checkEntries(entries: unknown): JsonObject[] {
  if (!Array.isArray(entries))
    throw new InvalidInputError('append: entries must be an array', {
      field: 'entries',
      operation: 'append',
    });
  return entries.map((e, i) => {
    const field = `entries[${i}]`;
    const stored = storedObject('append', field, e) as JsonObject;
    if (typeof stored.type !== 'string')
      throw new InvalidInputError(`append: ${field}.type must be a string`, { field, operation: 'append' });
    return stored;
  });
}

/** The control document as read: its body at its version (version 0: none yet). */
interface Control extends SessionControl {
  version: number;
}

/** Maps `f` over `xs`, at most `n` at a time, keeping the order. */
async function mapLimited<T, R>(xs: T[], n: number, f: (x: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(xs.length);
  let next = 0;
  const run = async () => {
    while (next < xs.length) {
      const i = next++;
      out[i] = await f(xs[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(n, xs.length) }, run));
  return out;
}

/**
 * A durable SessionStore for the Claude Agent SDK (`query({ prompt, options: { sessionStore } })`), on
 * embedded SQLite or PostgreSQL, shared safely by many processes. An entry's `uuid` is its idempotency key
 * (a retried or replayed append never shows an entry twice); delete hides a transcript without removing a
 * single event from the tamper-evident log.
 * @example
 * import { foldSessionSummary, query } from '@anthropic-ai/claude-agent-sdk';
 * const sessionStore = new AgentStateSessionStore(await openInstance({ name: 'agents' }), { foldSessionSummary });
 * for await (const m of query({ prompt: 'hello', options: { sessionStore } })) console.log(m.type);
 */
export class AgentStateSessionStore {
  /** The instance the sessions are stored in. */
  readonly instance: Instance;
  /**
   * The summaries of a project's sessions (as foldSessionSummary made them), one per session whose main
   * transcript exists, in no particular order; present only with the `foldSessionSummary` option.
   */
  readonly listSessionSummaries?: (projectKey: string) => Promise<SessionSummaryEntry[]>;
  readonly #fold: FoldSessionSummary | undefined;
  readonly #actor: string;

  /**
   * A store on `instance`; registers the session kind (once per process). An actor that is not a name is
   * refused with INVALID_INPUT.
   */
  constructor(instance: Instance, options: AgentStateSessionStoreOptions = {}) {
    registerSessionStoreKind();
    const actor = options.actor ?? instance.name;
    checkInput('AgentStateSessionStore', { actor }, { actor: { type: 'name' } });
    if (options.foldSessionSummary !== undefined && typeof options.foldSessionSummary !== 'function')
      throw new InvalidInputError('AgentStateSessionStore: foldSessionSummary must be a function', {
        field: 'foldSessionSummary',
      });
    this.instance = instance;
    this.#fold = options.foldSessionSummary;
    this.#actor = actor;
    if (this.#fold) this.listSessionSummaries = (projectKey) => this.#summaries(projectKey);
  }

  async #control(p: Place): Promise<Control | null> {
    const d = await this.instance.docs.find(SESSION_STORE_KIND, p.docId);
    return d && { ...(d.body as unknown as SessionControl), version: d.version };
  }

  /**
   * Reads the control document, changes it with `change` (null: nothing to write) and commits it against
   * the version read, again on a fresh read while other writers get there first.
   */
  async #update(
    p: Place,
    reason: string,
    change: (c: Control | null) => SessionControl | null | Promise<SessionControl | null>,
  ): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      const c = await this.#control(p);
      const next = await change(c);
      if (next === null) return;
      // Listed in its project before the document exists: a listed session may have no document (a crash
      // in between; listing skips it), but a session never has a document without being listed.
      if (c === null) {
        await this.instance.events.append({
          type: SESSION_LISTED_EVENT,
          stream: projectStream(p.projectKey),
          data: { project_key: p.projectKey, session_id: p.sessionId, doc: p.docId },
          actor: this.#actor,
        });
      }
      try {
        await this.instance.docs.commit({
          kind: SESSION_STORE_KIND,
          id: p.docId,
          expected_version: c?.version ?? 0,
          body: next as unknown as JsonObject,
          actor: this.#actor,
          reason,
        });
        return;
      } catch (err) {
        if (!isAgentStateError(err, 'STATE_CONFLICT') || attempt >= RETRIES) throw err;
        // Many writers on one session: spread the next tries out a little.
        if (attempt > 3) await new Promise((r) => setTimeout(r, Math.random() * attempt));
      }
    }
  }

  /**
   * Appends entries to a transcript, in order, in one transaction. An entry whose `uuid` the transcript
   * already holds is not shown again (a retried append, a replayed import); entries without one always are.
   * A main transcript's append sets the session's mtime and folds its summary; an entry that is not a JSON
   * object with a string `type`, or is larger than 1 MiB, is INVALID_INPUT and nothing is written.
   */
  async append(key: SessionKey, entries: SessionStoreEntry[]): Promise<void> {
    const p = checkKey('append', key);
    const stored = checkEntries(entries);
    await this.#update(p, p.subpath === undefined ? 'append' : 'append to subpath', (c) => {
      const base = c ?? this.#fresh(p);
      if (p.subpath !== undefined) {
        const sub = base.subpaths.find((s) => s.name === p.subpath);
        if (sub?.live) return null;
        const live: SubpathControl = { name: p.subpath, deleted_after: sub?.deleted_after ?? 0, live: true };
        return {
          ...body(base),
          subpaths: sub
            ? base.subpaths.map((s) => (s.name === p.subpath ? live : s))
            : [...base.subpaths, live],
        };
      }
      const mtime = Math.max(Math.floor(this.instance.clock()), base.mtime);
      const summary = this.#fold
        ? this.#fold(
            base.summary === null
              ? undefined
              : (structuredClone(base.summary) as unknown as SessionSummaryEntry),
            { projectKey: p.projectKey, sessionId: p.sessionId },
            structuredClone(stored) as SessionStoreEntry[],
            { mtime },
          )
        : null;
      return {
        ...body(base),
        main: true,
        mtime,
        summary: summary === null ? null : storedObject('append', 'summary', summary),
      };
    });
    if (stored.length === 0) return;
    await this.instance.events.appendMany(
      stored.map((data) => ({ type: SESSION_ENTRY_EVENT, stream: p.stream, data, actor: this.#actor })),
    );
  }

  #fresh(p: Place): SessionControl {
    return {
      project_key: p.projectKey,
      session_id: p.sessionId,
      main: false,
      mtime: 0,
      deleted_after: 0,
      subpaths: [],
      summary: null,
    };
  }

  /**
   * The transcript's entries in the order they were appended, each uuid once (its first copy); null when
   * it was never written or was deleted, [] when it was written with no entries.
   */
  async load(key: SessionKey): Promise<SessionStoreEntry[] | null> {
    const p = checkKey('load', key);
    const c = await this.#control(p);
    if (c === null) return null;
    let after = c.deleted_after;
    if (p.subpath === undefined) {
      if (!c.main) return null;
    } else {
      const sub = c.subpaths.find((s) => s.name === p.subpath);
      if (!sub?.live) return null;
      after = Math.max(after, sub.deleted_after);
    }
    const seen = new Set<string>();
    const entries: SessionStoreEntry[] = [];
    for (;;) {
      const page = await this.instance.events.read({ stream: p.stream, after, limit: PAGE });
      for (const e of page) {
        if (e.type !== SESSION_ENTRY_EVENT) continue;
        const entry = e.data as SessionStoreEntry;
        if (typeof entry.uuid === 'string') {
          if (seen.has(entry.uuid)) continue;
          seen.add(entry.uuid);
        }
        entries.push(entry);
      }
      if (page.length < PAGE) return entries;
      after = page[page.length - 1]!.position;
    }
  }

  /** The control documents of the project's listed sessions whose main transcript exists. */
  async #sessions(projectKey: string): Promise<Control[]> {
    const stream = projectStream(projectKey);
    const docIds = new Set<string>();
    let after = 0;
    for (;;) {
      // By stream alone (its own index): a type filter could walk that type's events of every project.
      const page = await this.instance.events.read({ stream, after, limit: PAGE });
      for (const e of page) {
        if (e.type !== SESSION_LISTED_EVENT) continue;
        const doc = (e.data as { doc?: Json } | null)?.doc;
        if (typeof doc === 'string') docIds.add(doc);
      }
      if (page.length < PAGE) break;
      after = page[page.length - 1]!.position;
    }
    const controls = await mapLimited([...docIds], READ_AHEAD, async (id) => {
      const d = await this.instance.docs.find(SESSION_STORE_KIND, id);
      return d && { ...(d.body as unknown as SessionControl), version: d.version };
    });
    // Only documents of this project: the stream is open to any appender.
    return controls.filter((c): c is Control => c?.main === true && c.project_key === projectKey);
  }

  /**
   * The project's sessions whose main transcript exists, with mtime, the storage time of its last append
   * (integer epoch ms), in no particular order. Reads one event per session and one document per session.
   */
  async listSessions(projectKey: string): Promise<Array<{ sessionId: string; mtime: number }>> {
    checkPart('listSessions', 'projectKey', projectKey);
    return (await this.#sessions(projectKey)).map((c) => ({ sessionId: c.session_id, mtime: c.mtime }));
  }

  async #summaries(projectKey: string): Promise<SessionSummaryEntry[]> {
    checkPart('listSessionSummaries', 'projectKey', projectKey);
    return (await this.#sessions(projectKey)).flatMap((c) =>
      c.summary === null ? [] : [c.summary as unknown as SessionSummaryEntry],
    );
  }

  /**
   * Deletes a transcript: the main key deletes the session, its subpaths and its summary; a subpath key
   * only that subpath. Afterwards load returns null and the lists omit it; an append starts it afresh.
   * The entry events stay in the log (it is append-only and tamper-evident): the control document records
   * the log position up to which they are deleted. Writes nothing for a transcript that does not exist.
   */
  async delete(key: SessionKey): Promise<void> {
    const p = checkKey('delete', key);
    await this.#update(p, p.subpath === undefined ? 'delete session' : 'delete subpath', async (c) => {
      if (c === null) return null;
      const sub = c.subpaths.find((s) => s.name === p.subpath);
      if (p.subpath === undefined ? !c.main && c.subpaths.every((s) => !s.live) : !sub?.live) return null;
      // Every entry stored so far is at or before the log's head; one appended after it is not deleted.
      const after = Math.max((await this.instance.events.head())?.position ?? 0, c.deleted_after);
      if (p.subpath === undefined)
        return { ...body(c), main: false, mtime: 0, deleted_after: after, subpaths: [], summary: null };
      return {
        ...body(c),
        subpaths: c.subpaths.map((s) =>
          s.name === p.subpath ? { name: s.name, deleted_after: after, live: false } : s,
        ),
      };
    });
  }

  /** The subpaths of the session that hold a transcript, in the order they were first written. */
  async listSubkeys(key: { projectKey: string; sessionId: string }): Promise<string[]> {
    const p = checkKey('listSubkeys', key, false);
    const c = await this.#control(p);
    return c === null ? [] : c.subpaths.filter((s) => s.live).map((s) => s.name);
  }
}

/** The body of a control document as read (without its version). */
function body(c: SessionControl | Control): SessionControl {
  return {
    project_key: c.project_key,
    session_id: c.session_id,
    main: c.main,
    mtime: c.mtime,
    deleted_after: c.deleted_after,
    subpaths: c.subpaths,
    summary: c.summary,
  };
}
