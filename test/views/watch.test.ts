// `agentstate watch` never loses what a person wrote (issue 23, point 4): a file saved by truncating and
// then writing in chunks (a shell's `>`, many editors' plain save) is imported once it has settled, or left
// exactly as written when it cannot be; the store's versions are never exported over an edit that was not
// imported. The loop is stepped one poll at a time on an injected clock, so no test depends on wall time;
// one test runs the real loop (file-system wake-ups, real timers) and waits only for conditions.
import { closeSync, openSync, readFileSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { CommitInput, JsonObject } from '../../src/core/types.js';
import { targetFor, type ViewTarget } from '../../src/views/files.js';
import { exportView, importView } from '../../src/views/sync.js';
import { type WatchEvent, type WatchOptions, watchView } from '../../src/views/watch.js';
import { file, fresh, inst, project, target } from './todo-fixture.js';

const text = () => readFileSync(file(), 'utf8');
const stored = async () => inst.docs.get({ kind: 'test-todo', id: 'plan' });
const commit = (expected: number, items: string[]) =>
  inst.docs.commit({ kind: 'test-todo', id: 'plan', expected_version: expected, body: { items } });
/** The file as a person edits it: the export with other items, stamp kept. */
const edited = (items: string[], version = 1) =>
  `${JSON.stringify({ $agentstate: { kind: 'test-todo', id: 'plan', version }, items }, null, 2)}\n`;
const summary = (events: WatchEvent[]) =>
  events.map((e) => `${e.action}${e.version === undefined ? '' : `:${e.version}`}`);

/**
 * watchView driven one poll at a time: it polls once on start, then each `poll(ms)` advances the settle
 * clock by `ms` and lets exactly one more poll run.
 */
async function stepped(t: ViewTarget, extra: Partial<WatchOptions> = {}) {
  let now = 0;
  const events: WatchEvent[] = [];
  const ac = new AbortController();
  let release: (() => void) | null = null;
  let parked: () => void = () => {};
  const nextPark = () => new Promise<void>((r) => (parked = r));
  let atPause = nextPark();
  const running = watchView(inst, t, {
    signal: ac.signal,
    pollMs: 1000,
    settleMs: 1000,
    clock: () => now,
    pause: () =>
      new Promise<void>((r) => {
        release = r;
        parked();
      }),
    onEvent: (e) => events.push(e),
    ...extra,
  });
  // A watch that throws (or never pauses) fails the test instead of leaving it waiting.
  const stopped = running.then(() => {
    throw new Error('watch ended');
  });
  await Promise.race([atPause, stopped]);
  return {
    events,
    async poll(ms = 0) {
      now += ms;
      atPause = nextPark();
      const r = release!;
      release = null;
      r();
      await Promise.race([atPause, stopped]);
    },
    async stop() {
      ac.abort();
      (release as (() => void) | null)?.();
      await running;
    },
  };
}

describe('watch: a file saved in chunks', () => {
  it('pauses shorter than the settle time: imported once, never judged half-written', async () => {
    await fresh();
    await commit(0, ['a']);
    const w = await stepped(target());
    expect(summary(w.events)).toEqual(['exported:1']);
    const final = edited(['a', 'b', 'c']);
    const fd = openSync(file(), 'w'); // truncates, as `>` and a plain save do
    await w.poll(100);
    writeSync(fd, final.slice(0, 20));
    await w.poll(100);
    writeSync(fd, final.slice(20));
    closeSync(fd);
    await w.poll(100);
    await w.poll(999);
    expect(summary(w.events)).toEqual(['exported:1']);
    await w.poll(1);
    await w.stop();
    expect(summary(w.events)).toEqual(['exported:1', 'imported:2']);
    expect((await stored()).body).toEqual({ items: ['a', 'b', 'c'] });
    expect(JSON.parse(text())).toMatchObject({ $agentstate: { version: 2 }, items: ['a', 'b', 'c'] });
  });

  it('a pause longer than the settle time: the half file is reported and left as it is; the rest is imported', async () => {
    await fresh();
    await commit(0, ['a']);
    const w = await stepped(target());
    const final = edited(['a', 'edited by hand']);
    const half = final.slice(0, 30);
    const fd = openSync(file(), 'w');
    writeSync(fd, half);
    await w.poll(0);
    await w.poll(1000);
    expect(summary(w.events)).toEqual(['exported:1', 'invalid']);
    expect(w.events[1]!.message).toContain('is left as you wrote it');
    // Nothing written over it, however long the writer pauses: its next write lands in the same file.
    for (let i = 0; i < 3; i++) await w.poll(1000);
    expect(text()).toBe(half);
    expect(readFileSync(`${file()}.rejected`, 'utf8')).toBe(half);
    expect((await stored()).version).toBe(1);
    writeSync(fd, final.slice(30));
    closeSync(fd);
    await w.poll(0);
    await w.poll(1000);
    await w.stop();
    expect(summary(w.events)).toEqual(['exported:1', 'invalid', 'imported:2']);
    expect((await stored()).body).toEqual({ items: ['a', 'edited by hand'] });
    expect(JSON.parse(text()).items).toEqual(['a', 'edited by hand']);
  });
});

describe('watch: an edit it cannot import', () => {
  it('is kept verbatim while the store moves on; deleting the file brings the store’s version back', async () => {
    await fresh();
    await commit(0, ['a']);
    const w = await stepped(target());
    const bad = edited(['a', ' ']); // refused by the kind's rule: items must not be blank
    writeFileSync(file(), bad);
    await w.poll(0);
    await w.poll(1000);
    expect(summary(w.events)).toEqual(['exported:1', 'invalid']);
    expect(w.events[1]!.message).toContain('items must not be blank');
    // The store moves on: said once, not exported over the edit.
    await commit(1, ['a', 'from the store']);
    await w.poll(1000);
    await w.poll(1000);
    expect(summary(w.events)).toEqual(['exported:1', 'invalid', 'held:2']);
    expect(text()).toBe(bad);
    // Fixed, but made on version 1: a conflict, with both sides' changes; still kept as written.
    const stale = edited(['a', 'fixed']);
    writeFileSync(file(), stale);
    await w.poll(0);
    await w.poll(1000);
    expect(summary(w.events)).toEqual(['exported:1', 'invalid', 'held:2', 'conflict']);
    expect(w.events[3]!.message).toMatch(/Changed in the store since version 1:[\s\S]*Changed in your file:/);
    expect(text()).toBe(stale);
    expect(readFileSync(`${file()}.rejected`, 'utf8')).toBe(stale);
    // Deleted: the store's version comes back; the edit stays in .rejected to redo.
    rmSync(file());
    await w.poll(0);
    await w.poll(1000);
    await w.stop();
    expect(summary(w.events)).toEqual(['exported:1', 'invalid', 'held:2', 'conflict', 'exported:2']);
    expect(JSON.parse(text())).toMatchObject({ $agentstate: { version: 2 }, items: ['a', 'from the store'] });
    expect(readFileSync(`${file()}.rejected`, 'utf8')).toBe(stale);
  });

  it('an unreadable file (binary) is reported and left alone, then a good save is imported', async () => {
    await fresh();
    await commit(0, ['a']);
    const w = await stepped(target());
    const binary = Buffer.from([0x7b, 0x00, 0x7d]);
    writeFileSync(file(), binary);
    await w.poll(0);
    await w.poll(1000);
    await w.poll(1000);
    expect(summary(w.events)).toEqual(['exported:1', 'invalid']);
    expect(w.events[1]!.message).toContain('binary');
    expect(readFileSync(file())).toEqual(binary);
    writeFileSync(file(), edited(['a', 'b']));
    await w.poll(0);
    await w.poll(1000);
    await w.stop();
    expect(summary(w.events)).toEqual(['exported:1', 'invalid', 'imported:2']);
  });
});

describe('watch: what the file holds when it starts', () => {
  it('an edit made while watch was not running is imported, not overwritten', async () => {
    await fresh();
    await commit(0, ['a']);
    await exportView(inst, target());
    writeFileSync(file(), edited(['a', 'offline edit']));
    const w = await stepped(target());
    expect(summary(w.events)).toEqual([]);
    await w.poll(1000);
    await w.stop();
    expect(summary(w.events)).toEqual(['imported:2']);
    expect((await stored()).body).toEqual({ items: ['a', 'offline edit'] });
  });

  it('an old export left unedited is replaced by the store’s version', async () => {
    await fresh();
    await commit(0, ['a']);
    await exportView(inst, target());
    await commit(1, ['a', 'b']);
    const w = await stepped(target());
    await w.poll(1000);
    await w.stop();
    expect(summary(w.events)).toEqual(['exported:2']);
    expect(JSON.parse(text()).items).toEqual(['a', 'b']);
  });

  it('each kind’s own export is recognised as unedited: nothing is imported', async () => {
    await fresh();
    const examples = new URL('../kinds/examples/', import.meta.url);
    const json = (p: string) => JSON.parse(readFileSync(new URL(p, examples), 'utf8')) as JsonObject;
    const cases: Array<[string, string, JsonObject, Partial<CommitInput>]> = [
      ['grid-mission', 'mission', json('grid/seed.json'), { actor: 'mc', role: 'mc' }],
      ['workflow-sessions', 'deploy', json('sessions/deploy.json'), {}],
      [
        'aios-workflow',
        'greenfield-service-20260131-a1b2c3',
        targetFor('aios-workflow', 'x', project).kind.file.parse(
          readFileSync(new URL('aios/greenfield-service-20260131-a1b2c3-state.yaml', examples), 'utf8'),
        ).body,
        {},
      ],
    ];
    for (const [kind, id, body, extra] of cases) {
      await inst.docs.commit({ kind, id, expected_version: 0, body, actor_kind: 'tool', ...extra });
      await exportView(inst, targetFor(kind, id, project));
      const w = await stepped(targetFor(kind, id, project));
      await w.poll(1000);
      await w.poll(1000);
      await w.stop();
      expect(summary(w.events), kind).toEqual(['exported:1']);
      expect((await inst.docs.get({ kind, id })).version).toBe(1);
    }
  });
});

describe('import', () => {
  it('never re-exports over a save made after the text it imported was read', async () => {
    await fresh();
    await commit(0, ['a']);
    await exportView(inst, target());
    const first = edited(['a', 'first']);
    const second = edited(['a', 'first', 'second']);
    writeFileSync(file(), second);
    const r = await importView(inst, target(), { text: first });
    expect(r).toMatchObject({ version: 2, changed: true });
    expect(text()).toBe(second);
  });
});

describe('watch, the real loop', () => {
  it('a writer pauses mid-save while an agent commits: the person’s final text is kept verbatim, not lost', async () => {
    await fresh();
    await commit(0, ['a']);
    const events: WatchEvent[] = [];
    const ac = new AbortController();
    const running = watchView(inst, target(), {
      signal: ac.signal,
      pollMs: 20,
      settleMs: 40,
      onEvent: (e) => events.push(e),
    });
    // Conditions, not sleeps: each wait ends as soon as what it waits for is true.
    const until = async (what: string, pred: () => boolean) => {
      for (let i = 0; i < 1500 && !pred(); i++) await new Promise((r) => setTimeout(r, 20));
      if (!pred()) throw new Error(`timed out waiting for ${what}; events: ${summary(events).join(' ')}`);
    };
    const saw = (action: string, version?: number) =>
      events.some((e) => e.action === action && (version === undefined || e.version === version));
    try {
      await until('the first export', () => saw('exported', 1));
      const final = edited(['a', 'typed in two goes']);
      const fd = openSync(file(), 'w'); // truncate, then write in two goes
      writeSync(fd, final.slice(0, 25));
      await until('the half file to be judged', () => saw('invalid'));
      // Meanwhile an agent commits, and watch has dealt with that version before the writer goes on.
      await commit(1, ['a', 'from an agent']);
      await until('watch to see version 2', () => saw('held', 2) || saw('exported', 2));
      writeSync(fd, final.slice(25));
      closeSync(fd);
      // The edit was made on version 1: a conflict, and the file keeps every byte the person wrote.
      await until('the whole edit to be judged', () => saw('conflict'));
      expect(text()).toBe(final);
      expect(readFileSync(`${file()}.rejected`, 'utf8')).toBe(final);
      expect((await stored()).body).toEqual({ items: ['a', 'from an agent'] });
      expect(summary(events)).toEqual(['exported:1', 'invalid', 'held:2', 'conflict']);
    } finally {
      ac.abort();
      await running;
    }
  });
});
