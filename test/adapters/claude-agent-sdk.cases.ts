// The Claude Agent SDK's SessionStore contract as a table of cases, run against any store: ours on every
// backend (claude-agent-sdk.session-store.test.ts), and the SDK's own InMemorySessionStore when it is at
// hand. The SDK ships no conformance tests, so each case is a sentence of its docs (sdk.d.ts: SessionStore,
// SessionKey, SessionSummaryEntry, foldSessionSummary) or of what its reference store does, as a test; a
// case the reference cannot pass is skipped for it with the reason.
import { expect, it } from 'vitest';

/** The SDK's types, structurally (the SDK is not a dependency: it bundles a ~400 MB CLI binary). */
export interface Key {
  projectKey: string;
  sessionId: string;
  subpath?: string;
}
export interface Entry {
  type: string;
  uuid?: string;
  timestamp?: string;
  [k: string]: unknown;
}
export interface Summary {
  sessionId: string;
  mtime: number;
  data: Record<string, unknown>;
}
export type Fold = (
  prev: Summary | undefined,
  key: Key,
  entries: Entry[],
  options?: { mtime?: number },
) => Summary;

/** What the cases call: the SessionStore interface with every optional method. */
export interface StoreUnderTest {
  append(key: Key, entries: Entry[]): Promise<void>;
  load(key: Key): Promise<Entry[] | null>;
  listSessions(projectKey: string): Promise<Array<{ sessionId: string; mtime: number }>>;
  listSessionSummaries?(projectKey: string): Promise<Summary[]>;
  delete(key: Key): Promise<void>;
  listSubkeys(key: { projectKey: string; sessionId: string }): Promise<string[]>;
}

export interface StoreCaseOptions {
  /** A fresh, empty store for one case; `fold` is the foldSessionSummary it was given. */
  open(): Promise<{ store: StoreUnderTest; fold: Fold; close(): Promise<void> }>;
  /** Why the store does not make uuid an idempotency key (the docs say adapters SHOULD); unset: it does. */
  noUuidIdempotency?: string;
  /** Why ids that differ only in where a `/` falls may share a transcript; unset: they never do. */
  sharedSlashKeys?: string;
}

let n = 0;
/** A user or assistant line as the CLI writes it: a uuid, a timestamp, opaque fields. */
export const line = (text: string, uuid: string | null = `u-${++n}`): Entry => ({
  type: 'user',
  ...(uuid === null ? {} : { uuid }),
  timestamp: '2026-01-02T03:04:05.000Z',
  message: { role: 'user', content: [{ type: 'text', text }] },
  parentUuid: null,
  isSidechain: false,
});

/** Registers the contract's cases (call inside a describe). */
export function sessionStoreCases(o: StoreCaseOptions): void {
  const withStore = (fn: (s: StoreUnderTest, fold: Fold) => Promise<void>) => async () => {
    const { store, fold, close } = await o.open();
    try {
      await fn(store, fold);
    } finally {
      await close();
    }
  };
  const main: Key = { projectKey: 'proj', sessionId: '8f2c1d9e-0000-4000-8000-000000000001' };
  const sub: Key = { ...main, subpath: 'subagents/agent-a1' };

  it(
    'load is null for a key never written; the lists are empty',
    withStore(async (s) => {
      expect(await s.load(main)).toBeNull();
      expect(await s.load(sub)).toBeNull();
      expect(await s.listSessions('proj')).toEqual([]);
      expect(await s.listSubkeys(main)).toEqual([]);
      expect((await s.listSessionSummaries?.('proj')) ?? []).toEqual([]);
    }),
  );

  it(
    'load returns every entry appended, deep-equal and in append-call order, with or without uuid',
    withStore(async (s) => {
      const a = [
        line('one'),
        line('two'),
        { type: 'custom-title', customTitle: 'Plan', sessionId: main.sessionId },
      ];
      const b = [line('three', null), { type: 'tag', tag: 'x' }, line('four')];
      await s.append(main, a);
      await s.append(main, b);
      expect(await s.load(main)).toEqual([...a, ...b]);
      // Entries are opaque JSON: nested values, unicode, empty objects come back as appended.
      const odd = {
        type: 'assistant',
        uuid: 'odd',
        message: { content: [{ a: [1, 2.5, null, true, 'ü 🙂'] }], x: {} },
      };
      await s.append(main, [odd]);
      expect((await s.load(main))?.at(-1)).toEqual(odd);
    }),
  );

  it(
    'an append of no entries writes the key: load is [] (never written is null)',
    withStore(async (s) => {
      await s.append(main, []);
      expect(await s.load(main)).toEqual([]);
      expect((await s.listSessions('proj')).map((x) => x.sessionId)).toEqual([main.sessionId]);
    }),
  );

  const uuids = o.noUuidIdempotency ? it.skip : it;
  uuids(
    `uuid is the idempotency key: the same append twice, or a retry of a batch, stores each uuid once${o.noUuidIdempotency ? ` (skipped: ${o.noUuidIdempotency})` : ''}`,
    withStore(async (s) => {
      const a = line('a');
      const b = line('b');
      const c = line('c');
      const title = { type: 'ai-title', aiTitle: 'T' };
      await s.append(main, [a, b]);
      await s.append(main, [a, b]);
      // A retried batch after a crash that may or may not have stored it, now with one more entry.
      await s.append(main, [b, c, title]);
      await s.append(main, [c, title]);
      // Entries without a uuid are always appended; entries with one, once, where first appended.
      expect(await s.load(main)).toEqual([a, b, c, title, title]);
      // Per key: the same uuid in a subagent transcript is its own entry.
      await s.append(sub, [a]);
      expect(await s.load(sub)).toEqual([a]);
    }),
  );

  it(
    'subpaths are transcripts of their own, listed by listSubkeys and not as sessions',
    withStore(async (s) => {
      const other: Key = { ...main, subpath: 'subagents/agent-b2' };
      await s.append(sub, [line('sub')]);
      // A session with only a subagent transcript has no main transcript and is not listed.
      expect(await s.load(main)).toBeNull();
      expect(await s.listSessions('proj')).toEqual([]);
      await s.append(main, [line('main')]);
      await s.append(other, [line('other')]);
      await s.append(sub, [line('sub 2')]);
      expect(
        (await s.load(main))?.map(
          (e) => (e.message as { content: Array<{ text: string }> }).content[0]!.text,
        ),
      ).toEqual(['main']);
      expect((await s.load(sub))?.length).toBe(2);
      expect((await s.load(other))?.length).toBe(1);
      expect((await s.listSubkeys(main)).sort()).toEqual(['subagents/agent-a1', 'subagents/agent-b2']);
      expect(await s.listSubkeys({ projectKey: 'proj', sessionId: 'another' })).toEqual([]);
      expect(await s.listSubkeys({ projectKey: 'other-project', sessionId: main.sessionId })).toEqual([]);
      expect((await s.listSessions('proj')).map((x) => x.sessionId)).toEqual([main.sessionId]);
    }),
  );

  it(
    'listSessions: the project’s sessions, mtime an integer epoch ms that a later append does not lower',
    withStore(async (s) => {
      const before = Date.now();
      await s.append(main, [line('x')]);
      await s.append({ projectKey: 'proj', sessionId: 's2' }, [line('y')]);
      await s.append({ projectKey: 'elsewhere', sessionId: 's3' }, [line('z')]);
      const listed = await s.listSessions('proj');
      expect(listed.map((x) => x.sessionId).sort()).toEqual([main.sessionId, 's2'].sort());
      for (const { mtime } of listed) {
        expect(Number.isInteger(mtime)).toBe(true);
        expect(mtime).toBeGreaterThanOrEqual(Math.floor(before) - 1);
        expect(mtime).toBeLessThanOrEqual(Date.now() + 1);
      }
      const first = listed.find((x) => x.sessionId === main.sessionId)!.mtime;
      await new Promise((r) => setTimeout(r, 5));
      await s.append(main, [line('later')]);
      const again = (await s.listSessions('proj')).find((x) => x.sessionId === main.sessionId)!.mtime;
      expect(again).toBeGreaterThan(first);
      // A subagent's append is not the session's mtime.
      await new Promise((r) => setTimeout(r, 5));
      await s.append(sub, [line('sub')]);
      expect((await s.listSessions('proj')).find((x) => x.sessionId === main.sessionId)!.mtime).toBe(again);
      expect((await s.listSessions('elsewhere')).map((x) => x.sessionId)).toEqual(['s3']);
    }),
  );

  it(
    'listSessionSummaries: foldSessionSummary’s result per session, kept verbatim, its mtime that of listSessions',
    withStore(async (s, fold) => {
      expect(typeof s.listSessionSummaries).toBe('function');
      const batches: Entry[][] = [
        [{ ...line('Fix the login bug'), cwd: '/work/app', gitBranch: 'main' }],
        [{ type: 'custom-title', customTitle: 'Login', sessionId: main.sessionId }, line('and the tests')],
        [{ type: 'tag', tag: 'urgent', sessionId: main.sessionId }],
      ];
      for (const b of batches) await s.append(main, b);
      await s.append(sub, [line('a subagent does not change the summary')]);
      await s.append({ projectKey: 'proj', sessionId: 's2' }, [line('second')]);
      let expected: Summary | undefined;
      for (const b of batches) expected = fold(expected, main, b, { mtime: 1 });
      const summaries = await s.listSessionSummaries!('proj');
      const mine = summaries.find((x) => x.sessionId === main.sessionId)!;
      expect(mine.data).toEqual(expected!.data);
      expect(mine.data).not.toEqual({});
      const listed = await s.listSessions('proj');
      expect(mine.mtime).toBe(listed.find((x) => x.sessionId === main.sessionId)!.mtime);
      expect(summaries.map((x) => x.sessionId).sort()).toEqual([main.sessionId, 's2'].sort());
    }),
  );

  it(
    'delete of a session: load is null for it and its subpaths, the lists omit it, a new append starts afresh',
    withStore(async (s) => {
      const keep: Key = { projectKey: 'proj', sessionId: 'kept' };
      await s.append(main, [line('m')]);
      await s.append(sub, [line('s')]);
      await s.append(keep, [line('k')]);
      await s.delete(main);
      expect(await s.load(main)).toBeNull();
      expect(await s.load(sub)).toBeNull();
      expect(await s.listSubkeys(main)).toEqual([]);
      expect((await s.listSessions('proj')).map((x) => x.sessionId)).toEqual(['kept']);
      expect(
        ((await s.listSessionSummaries?.('proj')) ?? [{ sessionId: 'kept' }]).map((x) => x.sessionId),
      ).toEqual(['kept']);
      expect((await s.load(keep))?.length).toBe(1);
      // Deleting again, or a key never written, is no error.
      await s.delete(main);
      await s.delete({ projectKey: 'nowhere', sessionId: 'never' });
      const again = line('again');
      await s.append(main, [again]);
      expect(await s.load(main)).toEqual([again]);
      expect(await s.load(sub)).toBeNull();
      expect((await s.listSessions('proj')).map((x) => x.sessionId).sort()).toEqual(
        ['kept', main.sessionId].sort(),
      );
    }),
  );

  it(
    'delete of a subpath removes that subagent transcript only',
    withStore(async (s) => {
      const other: Key = { ...main, subpath: 'subagents/agent-b2' };
      await s.append(main, [line('m')]);
      await s.append(sub, [line('s')]);
      await s.append(other, [line('o')]);
      await s.delete(sub);
      expect(await s.load(sub)).toBeNull();
      expect((await s.load(other))?.length).toBe(1);
      expect((await s.load(main))?.length).toBe(1);
      expect(await s.listSubkeys(main)).toEqual(['subagents/agent-b2']);
      expect((await s.listSessions('proj')).map((x) => x.sessionId)).toEqual([main.sessionId]);
      const back = line('back');
      await s.append(sub, [back]);
      expect(await s.load(sub)).toEqual([back]);
    }),
  );

  it(
    'any id a caller produces is its own key: `|`, `+`, `:`, spaces, non-ASCII, very long',
    withStore(async (s) => {
      const ids = [
        'auth0|abc',
        'ana+agents@example.com',
        'a:b',
        'a_3Ab',
        '_a',
        'ünïcödé — 会话 🙂',
        'line\nbreak',
        'x'.repeat(150),
        'y'.repeat(5000),
        `${'y'.repeat(4999)}z`,
      ];
      const projects = ['-home-ana-app', 'C:\\Users\\ana\\app', 'p'.repeat(300)];
      for (const projectKey of projects)
        for (const sessionId of ids)
          await s.append({ projectKey, sessionId }, [line(`${projectKey}/${sessionId}`)]);
      for (const projectKey of projects) {
        expect((await s.listSessions(projectKey)).map((x) => x.sessionId).sort()).toEqual([...ids].sort());
        for (const sessionId of ids) {
          const got = await s.load({ projectKey, sessionId });
          expect(got?.length, `${projectKey} ${sessionId}`).toBe(1);
          expect(JSON.stringify(got)).toContain(JSON.stringify(`${projectKey}/${sessionId}`).slice(1, -1));
        }
      }
      await s.append({ projectKey: 'proj', sessionId: 's', subpath: 'subagents/agent-ü|1' }, [line('sub')]);
      expect(await s.listSubkeys({ projectKey: 'proj', sessionId: 's' })).toEqual(['subagents/agent-ü|1']);
    }),
  );

  const slashes = o.sharedSlashKeys ? it.skip : it;
  slashes(
    `ids that differ only in where a \`/\` falls are different keys${o.sharedSlashKeys ? ` (skipped: ${o.sharedSlashKeys})` : ''}`,
    withStore(async (s) => {
      await s.append({ projectKey: 'a/b', sessionId: 'c' }, [line('1')]);
      await s.append({ projectKey: 'a', sessionId: 'b/c' }, [line('2')]);
      await s.append({ projectKey: 'a', sessionId: 'b', subpath: 'c' }, [line('3')]);
      expect((await s.load({ projectKey: 'a/b', sessionId: 'c' }))?.length).toBe(1);
      expect((await s.load({ projectKey: 'a', sessionId: 'b/c' }))?.length).toBe(1);
      expect(await s.load({ projectKey: 'a', sessionId: 'b' })).toBeNull();
      expect((await s.listSessions('a')).map((x) => x.sessionId)).toEqual(['b/c']);
    }),
  );
}
