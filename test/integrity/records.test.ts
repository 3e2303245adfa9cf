// The integrity checker's edges as a pure function of records: heads refused in the words an operator reads
// (objects with bad fields, null, whitespace), the verdict's fields (counts, anchor, the given head found,
// missing or pinned behind a broken chain), how many problems are kept, values shown in messages, malformed
// event data, no-op history matched to its events field by field, a Workflow World's check loaded once, from
// its rows or its events in any order (or not at all: the package absent, rows not checked), and progress
// reported every 10,000 events. Real instances (SQLite, injected clock) make the records; the tests change
// them in memory and check them again.
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { DumpRecord } from '../../src/core/backend.js';
import { GENESIS_HASH } from '../../src/core/hash.js';
import { formatHeadAnchor, parseHeadAnchor } from '../../src/core/integrity/head.js';
import { checkRecords, type InstanceRecord, IntegrityChecker } from '../../src/core/integrity/verify.js';
import { contentHash } from '../../src/core/json.js';
import { type Instance, openInstance } from '../../src/instance/instance.js';
import { createWorldStorage } from '../../src/workflow-world/storage.js';
import { createWorldStreams } from '../../src/workflow-world/streams.js';
import { rechain } from '../helpers/forge.js';
import { tempDir } from '../helpers/tmp.js';

const root = tempDir();
let n = 0;
const T0 = Date.UTC(2026, 2, 1, 9, 0, 0);

async function open(): Promise<{ inst: Instance; clock: { now: number } }> {
  const clock = { now: T0 };
  const inst = await openInstance({ dir: join(root, `r${++n}`), clock: () => clock.now });
  return { inst, clock };
}

async function dumpOf(inst: Instance, counters = false): Promise<DumpRecord[]> {
  const out: DumpRecord[] = [];
  for await (const r of inst.backend.dump!({ counters })) out.push(r as DumpRecord);
  return out;
}

const eventsOf = (rs: InstanceRecord[]) => rs.flatMap((r) => (r.t === 'event' ? [r.row] : []));

/** An instance with one work item claimed and released, another resolved, and a document: its records. */
async function workRecords(counters = false) {
  const { inst, clock } = await open();
  const a = await inst.work.enqueue({ title: 'a|ü', payload: { n: 1 }, max_attempts: 5 });
  clock.now += 1000;
  await inst.work.claim({ worker: 'w|1', id: a.id });
  clock.now += 1000;
  await inst.work.release({ id: a.id, worker: 'w|1' });
  const b = await inst.work.enqueue({ title: 'b+€' });
  clock.now += 1000;
  await inst.work.claim({ worker: 'w|1', id: b.id });
  await inst.work.resolve({ id: b.id, worker: 'w|1', status: 'done', result: { files: ['é|+'] } });
  await inst.docs.commit({ kind: 'json', id: 'd|1', expected_version: 0, body: { x: 1 } });
  const rs = await dumpOf(inst, counters);
  await inst.close();
  return { rs, a: a.id, b: b.id };
}

function itemRow(rs: InstanceRecord[], id: string) {
  const r = rs.find((x) => x.t === 'work_item' && x.row.id === id);
  if (r?.t !== 'work_item') throw new Error(`no work item ${id}`);
  return r.row;
}

const HASH = 'ab'.repeat(32);
const refusal = (got: string) =>
  `head must be position:hash as verify, instance export or the dashboard print it (e.g. 24:03cd…, 64 hex digits), got ${got}`;

describe('heads', () => {
  it('a head given with whitespace around it is read; formatHeadAnchor prints none for the empty log', () => {
    expect(parseHeadAnchor(`  12:${HASH}\n`)).toEqual({ position: 12, hash: HASH });
    expect(parseHeadAnchor({ position: 7, hash: HASH })).toEqual({ position: 7, hash: HASH });
    expect(parseHeadAnchor({ position: 0, hash: GENESIS_HASH })).toEqual({ position: 0, hash: GENESIS_HASH });
    expect(formatHeadAnchor({ position: 0, hash: GENESIS_HASH })).toBeNull();
    expect(formatHeadAnchor({ position: 0, hash: HASH })).toBeNull();
    expect(formatHeadAnchor({ position: 1, hash: HASH })).toBe(`1:${HASH}`);
  });

  it('objects with bad fields, null and undefined are refused with INVALID_INPUT naming the field head', () => {
    const bad: unknown[] = [
      null,
      undefined,
      12,
      { position: -1, hash: HASH },
      { position: 1.5, hash: HASH },
      { position: 2 ** 53, hash: HASH },
      { position: '3', hash: HASH },
      { hash: HASH },
      { position: 1 },
      { position: 1, hash: 123 },
      // An array's text is its element's: only a string passes, not something that prints as one.
      { position: 1, hash: [HASH] },
      { position: 1, hash: HASH.toUpperCase() },
      { position: 1, hash: `x${HASH}` },
      { position: 1, hash: `${HASH}0` },
      { position: 1, hash: HASH.slice(2) },
      { position: 0, hash: HASH },
    ];
    for (const value of bad) {
      let caught: unknown;
      try {
        parseHeadAnchor(value as never);
      } catch (err) {
        caught = err;
      }
      expect(caught, JSON.stringify(value)).toMatchObject({
        code: 'INVALID_INPUT',
        message: refusal(`${JSON.stringify(value)}`),
        details: { field: 'head' },
      });
    }
  });

  it('a refused string is quoted in the message, cut to its first 100 characters', () => {
    const long = `12:${'z'.repeat(200)}`;
    expect(() => parseHeadAnchor(long)).toThrow(
      expect.objectContaining({
        code: 'INVALID_INPUT',
        message: refusal(JSON.stringify(long.slice(0, 100))),
      }),
    );
    expect(() => parseHeadAnchor(' 12 ')).toThrow(expect.objectContaining({ message: refusal('" 12 "') }));
  });
});

describe('the verdict', () => {
  it('an empty log: nothing verified, no anchor, every count zero', async () => {
    const r = await checkRecords([]);
    expect(r).toEqual({
      ok: true,
      events: 0,
      head: null,
      anchor: null,
      problems: [],
      problem_count: 0,
      checked: { events: 0, work_items: 0, documents: 0, history: 0, counters: false, workflow_runs: 0 },
    });
  });

  it('an honest instance: its counts, its anchor, and the given head found and matching', async () => {
    const { rs } = await workRecords(true);
    const events = eventsOf(rs);
    const last = events.at(-1)!;
    const r = await checkRecords(rs, { head: { position: 3, hash: events[2]!.hash } });
    expect(r).toEqual({
      ok: true,
      events: events.length,
      head: last.hash,
      anchor: `${events.length}:${last.hash}`,
      problems: [],
      problem_count: 0,
      checked: {
        events: events.length,
        work_items: 2,
        documents: 1,
        history: rs.filter((x) => x.t === 'history').length,
        // SQLite's log is its own head: its dump has no head or stream counter rows.
        counters: false,
        workflow_runs: 0,
      },
      expected_head: { position: 3, hash: events[2]!.hash, matches: true },
    });
    expect(r.checked.history).toBeGreaterThan(0);
  });

  it('the genesis head (position 0) matches any log, and is never reported missing', async () => {
    const { rs } = await workRecords();
    const r = await checkRecords(rs, { head: { position: 0, hash: GENESIS_HASH } });
    expect(r.problems).toEqual([]);
    expect(r.expected_head).toEqual({ position: 0, hash: GENESIS_HASH, matches: true });
    expect((await checkRecords([], { head: parseHeadAnchor(`0:${GENESIS_HASH}`) })).ok).toBe(true);
  });

  it('a head past the end of the log: events were removed, the log ends where it ends (at #0 when empty)', async () => {
    expect((await checkRecords([], { head: { position: 5, hash: HASH } })).problems).toEqual([
      {
        problem: 'head_mismatch',
        table: 'events',
        key: '#5',
        field: 'position',
        expected: 5,
        actual: 0,
        message: 'event #5, the given head, is not in the log, which ends at #0: events were removed',
      },
    ]);
    const { rs } = await workRecords();
    const end = eventsOf(rs).length;
    const r = await checkRecords(rs, { head: { position: end + 2, hash: HASH } });
    expect(r.problems).toEqual([
      {
        problem: 'head_mismatch',
        table: 'events',
        key: `#${end + 2}`,
        field: 'position',
        expected: end + 2,
        actual: end,
        message: `event #${end + 2}, the given head, is not in the log, which ends at #${end}: events were removed`,
      },
    ]);
    expect(r.expected_head).toMatchObject({ matches: false });
  });

  it('a chain broken before the given head: the head is reported not pinned; broken after it, the head holds', async () => {
    const { rs } = await workRecords();
    const events = eventsOf(rs);
    const head = { position: 4, hash: events[3]!.hash };
    // Event #2's data changed without its hash: the chain breaks there, #4 itself is unchanged.
    const before = structuredClone(rs);
    const e2 = eventsOf(before)[1]!;
    e2.data = e2.data.replace('w|1', 'w|2');
    const r = await checkRecords(before, { head });
    expect(r.broken).toEqual({ position: 2, reason: 'hash does not match the event content' });
    expect(r.problems.filter((p) => p.problem === 'head_mismatch')).toEqual([
      {
        problem: 'head_mismatch',
        table: 'events',
        key: '#4',
        field: 'position',
        expected: 4,
        actual: 2,
        message:
          'the chain is broken at event #2, before the given head #4: the events up to it are not the ones it pinned',
      },
    ]);
    expect(r.expected_head).toEqual({ ...head, matches: false });

    const after = structuredClone(rs);
    const e6 = eventsOf(after)[5]!;
    e6.data = e6.data.replace('w|1', 'w|2');
    const s = await checkRecords(after, { head });
    expect(s.broken).toMatchObject({ position: 6 });
    expect(s.problems.map((p) => p.problem)).not.toContain('head_mismatch');
    expect(s.expected_head).toEqual({ ...head, matches: true });
    // Verified up to the break: the anchor names the last event of the intact chain.
    expect(s).toMatchObject({ events: 5, anchor: `5:${events[4]!.hash}` });
  });

  it('without rows, the rows are counted but not checked against the log', async () => {
    const { rs, a } = await workRecords();
    itemRow(rs, a).title = 'forged';
    expect((await checkRecords(rs)).ok).toBe(false);
    const r = await checkRecords(rs, { rows: false });
    expect(r).toMatchObject({ ok: true, problems: [], checked: { work_items: 2, workflow_runs: 0 } });
  });

  it('keeps maxProblems problems and counts them all', async () => {
    const { rs, a } = await workRecords();
    Object.assign(itemRow(rs, a), { title: 'x', kind: 'y', priority: 9 });
    expect((await checkRecords(rs)).problem_count).toBe(3);
    const two = await checkRecords(rs, { maxProblems: 2 });
    expect(two.problems.map((p) => p.field)).toEqual(['title', 'kind']);
    expect(two).toMatchObject({ ok: false, problem_count: 3 });
    const none = await checkRecords(rs, { maxProblems: 0 });
    expect(none).toMatchObject({ ok: false, problems: [], problem_count: 3 });
  });

  it('an event head row alone (as PostgreSQL keeps one) makes the counters checked', async () => {
    const { rs } = await workRecords();
    const last = eventsOf(rs).at(-1)!;
    const head: InstanceRecord = { t: 'event_head', row: { position: last.position, hash: last.hash } };
    const r = await checkRecords([...rs, head]);
    expect(r.checked.counters).toBe(true);
    // No stream counter rows came: each stream of the log is reported without one.
    expect(r.problems.length).toBeGreaterThan(0);
    expect(r.problems.every((p) => p.problem === 'counter_mismatch' && p.table === 'event_streams')).toBe(
      true,
    );
    const behind: InstanceRecord = {
      t: 'event_head',
      row: { position: last.position - 1, hash: last.prev_hash },
    };
    expect(
      (await checkRecords([...rs, behind])).problems.filter((p) => p.table === 'event_heads'),
    ).toMatchObject([{ problem: 'counter_mismatch', key: 'head' }]);
  });
});

describe('values in messages', () => {
  it('a long value is cut to 77 characters and ..., one of 80 is shown whole', async () => {
    const { rs, a } = await workRecords();
    const title78 = 'ü'.repeat(78); // 80 characters as JSON text, with its quotes
    itemRow(rs, a).title = title78;
    expect((await checkRecords(rs)).problems[0]!.message).toBe(
      `work_items ${a}: title is "${title78}", the log says "a|ü"`,
    );
    const title79 = `${title78}x`;
    itemRow(rs, a).title = title79;
    expect((await checkRecords(rs)).problems).toEqual([
      {
        problem: 'row_differs',
        table: 'work_items',
        key: a,
        field: 'title',
        expected: 'a|ü',
        actual: title79,
        message: `work_items ${a}: title is "${'ü'.repeat(76)}..., the log says "a|ü"`,
      },
    ]);
  });

  it('a field the log does not record is shown as absent', async () => {
    const { rs, a } = await workRecords();
    rechain(rs, (e) => {
      if (e.type !== 'work_item_enqueued' || e.work_item_id !== a) return;
      const { title: _t, ...rest } = JSON.parse(e.data);
      e.data = JSON.stringify(rest);
    });
    expect((await checkRecords(rs)).problems).toEqual([
      {
        problem: 'row_differs',
        table: 'work_items',
        key: a,
        field: 'title',
        expected: null,
        actual: 'a|ü',
        message: `work_items ${a}: title is "a|ü", the log says absent`,
      },
    ]);
  });

  it("a result that hashes otherwise than the log says: both hashes' first 16 digits in the message, whole in the problem", async () => {
    const { rs, b } = await workRecords();
    itemRow(rs, b).result = { files: [] };
    const expected = contentHash({ files: ['é|+'] });
    const actual = contentHash({ files: [] });
    expect((await checkRecords(rs)).problems).toEqual([
      {
        problem: 'row_differs',
        table: 'work_items',
        key: b,
        field: 'result',
        expected,
        actual,
        message: `work_items ${b}: result hashes to ${actual.slice(0, 16)}…, the log says ${expected.slice(0, 16)}…`,
      },
    ]);
  });
});

describe('event data', () => {
  it('data that is not an object (null, a number, a string, an array) is malformed', async () => {
    for (const data of ['null', '5', '"x"', '[1]']) {
      const { rs, b } = await workRecords();
      let at = 0;
      rechain(rs, (e) => {
        if (e.type === 'work_item_resolved' && e.work_item_id === b) {
          e.data = data;
          at = e.position;
        }
      });
      const r = await checkRecords(rs);
      expect(
        r.problems.filter((p) => p.problem === 'event_malformed'),
        data,
      ).toEqual([
        {
          problem: 'event_malformed',
          table: 'events',
          key: `#${at}`,
          message: `event #${at} (work_item_resolved) has no data object`,
        },
      ]);
    }
  });

  it('an enqueued event with a status that is no status starts the item pending', async () => {
    const { inst } = await open();
    const a = await inst.work.enqueue({ title: 'a|ü' });
    const rs = await dumpOf(inst);
    await inst.close();
    expect(itemRow(rs, a.id).status).toBe('pending');
    rechain(rs, (e) => {
      if (e.type === 'work_item_enqueued')
        e.data = JSON.stringify({ ...JSON.parse(e.data), status: 'bogus' });
    });
    expect((await checkRecords(rs)).problems).toEqual([]);
    // A status the log does give is the fold's.
    rechain(rs, (e) => {
      if (e.type === 'work_item_enqueued')
        e.data = JSON.stringify({ ...JSON.parse(e.data), status: 'waiting_human' });
    });
    expect((await checkRecords(rs)).problems).toMatchObject([
      { problem: 'row_differs', field: 'status', expected: 'waiting_human', actual: 'pending' },
    ]);
  });

  it('notes that are not an object (an array, null) make an annotation malformed', async () => {
    for (const notes of [['n'], null]) {
      const { inst } = await open();
      const a = await inst.work.enqueue({ title: 'a' });
      await inst.work.annotate({ id: a.id, notes: { k: 'v|ü' } });
      const rs = await dumpOf(inst);
      await inst.close();
      let at = 0;
      rechain(rs, (e) => {
        if (e.type !== 'work_item_annotated') return;
        e.data = JSON.stringify({ ...JSON.parse(e.data), notes });
        at = e.position;
      });
      expect((await checkRecords(rs)).problems[0], JSON.stringify(notes)).toEqual({
        problem: 'event_malformed',
        table: 'events',
        key: `#${at}`,
        message: `event #${at} (work_item_annotated) has no notes`,
      });
    }
  });
});

describe('no-op history', () => {
  it('each no-op history row matches a no-op event by version, parent, actor, actor kind, reason and time', async () => {
    const { inst, clock } = await open();
    await inst.docs.commit({ kind: 'json', id: 'd|1', expected_version: 0, body: { x: 1 } });
    clock.now += 1000;
    await inst.docs.commit({ kind: 'json', id: 'd|1', expected_version: 1, body: { x: 2 } });
    clock.now += 1000;
    await inst.docs.commit({ kind: 'json', id: 'd|1', expected_version: 2, noop: true, reason: 'checked|ü' });
    const rs = await dumpOf(inst);
    await inst.close();
    expect((await checkRecords(rs)).problems).toEqual([]);
    const noop = () => {
      const h = rs.find((r) => r.t === 'history' && r.row.noop);
      if (h?.t !== 'history') throw new Error('no no-op history row');
      return h.row;
    };
    const row = noop();
    const original = structuredClone(row);
    expect(row).toMatchObject({
      version: 2,
      parent_version: 2,
      reason: 'checked|ü',
      actor_kind: expect.any(String),
    });
    const changes: Array<[string, Partial<typeof row>]> = [
      ['version', { version: 1 }],
      ['parent_version', { parent_version: 1 }],
      ['actor', { actor: 'someone|else' }],
      ['actor_kind', { actor_kind: row.actor_kind === 'human' ? 'model' : 'human' }],
      ['reason', { reason: 'other' }],
      ['created_at', { created_at: row.created_at + 1 }],
    ];
    for (const [name, change] of changes) {
      Object.assign(noop(), original, change);
      const h = noop();
      const missing = (await checkRecords(rs)).problems.filter((p) => p.problem === 'event_missing');
      expect(missing, name).toEqual([
        {
          problem: 'event_missing',
          table: 'document_history',
          key: `json/d|1@${h.seq}`,
          message: `document_history json/d|1@${h.seq}: no state_committed no-op event records this no-op at v${h.version} (by ${h.actor}, ${new Date(h.created_at).toISOString()})`,
        },
      ]);
    }
  });
});

/** A World with a run, a step, a hook and a wait, driven through its storage; and a stream chunk. */
async function worldRecords(): Promise<DumpRecord[]> {
  const { inst, clock } = await open();
  const s = createWorldStorage(inst);
  // run_started carrying the run's creation data creates it, whatever its id.
  const run = 'wrun_lazy|ü';
  const ev = async (req: Record<string, unknown>) => {
    clock.now += 10;
    return s.events.create(run, req as never);
  };
  await ev({
    eventType: 'run_started',
    eventData: { deploymentId: 'dpl|1', workflowName: 'workflow//./src/w//ƒ|1', input: new Uint8Array([1]) },
  });
  await ev({
    eventType: 'step_created',
    correlationId: 'step_ü|1',
    eventData: { stepName: 'step//add', input: new Uint8Array([2]) },
  });
  await ev({ eventType: 'hook_created', correlationId: 'hook|1', eventData: { token: 'tok|€' } });
  await ev({
    eventType: 'wait_created',
    correlationId: 'wait_1',
    eventData: { resumeAt: new Date(clock.now + 60_000) },
  });
  await createWorldStreams(inst).write(run, 'strm|1', new Uint8Array([0xff]));
  const rs = await dumpOf(inst);
  await inst.close();
  return rs;
}

const isWorldRow = (r: InstanceRecord) =>
  r.t === 'workflow_run' || r.t === 'workflow_step' || r.t === 'workflow_hook' || r.t === 'workflow_wait';

describe("a Workflow World's check", () => {
  afterEach(() => {
    vi.doUnmock('../../src/core/integrity/workflow.js');
  });

  it('is loaded by its first record, an event or a row, in dump order or rows first', async () => {
    const rs = await worldRecords();
    expect(rs.filter(isWorldRow).map((r) => r.t)).toEqual([
      'workflow_run',
      'workflow_step',
      'workflow_hook',
      'workflow_wait',
    ]);
    expect(await checkRecords(rs)).toMatchObject({ ok: true, checked: { workflow_runs: 1 } });
    expect(await checkRecords(rs, { rows: true })).toMatchObject({ ok: true, checked: { workflow_runs: 1 } });
    // The other records come in any order: World rows before the events.
    const rowsFirst = [...rs.filter(isWorldRow), ...rs.filter((r) => !isWorldRow(r))];
    expect(await checkRecords(rowsFirst)).toMatchObject({ ok: true, checked: { workflow_runs: 1 } });
    // A World row changed is caught either way.
    const changed = structuredClone(rowsFirst);
    const wait = changed.find((r) => r.t === 'workflow_wait')!;
    if (wait.t !== 'workflow_wait') throw new Error('no wait');
    (wait.row as { status: string }).status = 'completed';
    expect((await checkRecords(changed)).problems).toMatchObject([
      { problem: 'row_differs', table: 'workflow_waits', field: 'status' },
    ]);
    // A World row removed: reported missing, in the World check's words.
    const removed = rowsFirst.filter((r) => r.t !== 'workflow_hook');
    expect((await checkRecords(removed)).problems).toMatchObject([
      {
        problem: 'row_missing',
        table: 'workflow_hooks',
        key: 'hook|1',
        message: expect.stringContaining('hook|1'),
      },
    ]);
    // Without rows, neither loaded nor checked.
    expect(await checkRecords(changed, { rows: false })).toMatchObject({
      ok: true,
      checked: { workflow_runs: 0 },
    });
  });

  it('loaded a second time, keeps what it folded so far', async () => {
    const rs = await worldRecords();
    const checker = new IntegrityChecker();
    expect(await checker.loadWorkflowCheck()).toBe(true);
    const half = Math.floor(rs.length / 2);
    for (const r of rs.slice(0, half)) checker.add(r);
    expect(checker.events).toBe(rs.slice(0, half).filter((r) => r.t === 'event').length);
    expect(await checker.loadWorkflowCheck()).toBe(true);
    for (const r of rs.slice(half)) checker.add(r);
    expect(checker.finish()).toMatchObject({ ok: true, problems: [], checked: { workflow_runs: 1 } });
  });

  it('without rows, is not loaded; World rows and events are then neither checked nor reported unchecked', async () => {
    const rs = await worldRecords();
    const checker = new IntegrityChecker({ rows: false });
    expect(await checker.loadWorkflowCheck()).toBe(false);
    for (const r of rs) checker.add(r);
    expect(checker.finish()).toMatchObject({ ok: true, checked: { workflow_runs: 0 } });
  });

  it('not loaded: World rows alone (no World event) are reported unchecked', async () => {
    const rs = await worldRecords();
    const unloaded = new IntegrityChecker();
    for (const r of rs) if (r.t !== 'event') unloaded.add(r);
    expect(unloaded.finish()).toMatchObject({ ok: true, checked: { workflow_runs: null } });
    // A stream's chunks alone are nothing to check.
    expect(await checkRecords(rs.filter((r) => r.t === 'workflow_chunk'))).toMatchObject({
      ok: true,
      checked: { workflow_runs: 0 },
    });
  });

  /** The World check's module fails to load with `err` (as when @workflow/world is not installed). */
  const failLoadWith = (err: unknown) =>
    vi.doMock('../../src/core/integrity/workflow.js', () => ({
      // The loader awaits what the factory returns: a then() that throws makes the import reject with `err` as is.
      // biome-ignore lint/suspicious/noThenProperty: the thenable is the point
      then() {
        throw err;
      },
    }));
  const notFound = (code: string, message: string) => Object.assign(new Error(message), { code });

  it('without @workflow/world: not loaded, and the World tables are reported unchecked', async () => {
    for (const code of ['ERR_MODULE_NOT_FOUND', 'MODULE_NOT_FOUND']) {
      failLoadWith(notFound(code, "Cannot find package '@workflow/world' imported from /x/rules.js"));
      expect(await new IntegrityChecker().loadWorkflowCheck(), code).toBe(false);
      const r = await checkRecords(await worldRecords());
      expect(r, code).toMatchObject({ ok: true, problems: [], checked: { workflow_runs: null } });
    }
  });

  it('is never loaded for an instance without World runs: a stream chunk or a work item does not load it', async () => {
    const { inst } = await open();
    await inst.work.enqueue({ title: 'a|ü' });
    await inst.docs.commit({ kind: 'json', id: 'd|1', expected_version: 0, body: { x: 1 } });
    // A stream written with no run: its chunks are World records, but no run, step, hook, wait or event.
    await createWorldStreams(inst).write('wrun_none', 'strm|ü', new Uint8Array([1, 2]));
    const rs = await dumpOf(inst);
    await inst.close();
    expect(rs.some((r) => r.t === 'workflow_chunk')).toBe(true);
    // Were it loaded, this failure would reject the check.
    failLoadWith(new Error('the World check must not be loaded here'));
    expect(await checkRecords(rs)).toMatchObject({ ok: true, problems: [], checked: { workflow_runs: 0 } });
    const chunksFirst = [
      ...rs.filter((r) => r.t === 'workflow_chunk'),
      ...rs.filter((r) => r.t !== 'workflow_chunk'),
    ];
    expect(await checkRecords(chunksFirst)).toMatchObject({ ok: true, checked: { workflow_runs: 0 } });
  });

  it('any other failure to load it is thrown as is', async () => {
    const others: unknown[] = [
      notFound('ERR_MODULE_NOT_FOUND', "Cannot find package 'other-package' imported from /x/rules.js"),
      notFound('MODULE_NOT_FOUND', "Cannot find module './gone.js'"),
      notFound('EACCES', "EACCES: permission denied, open '/x/node_modules/@workflow/world/index.js'"),
      new SyntaxError('Unexpected token in @workflow/world'),
      null,
    ];
    for (const err of others) {
      failLoadWith(err);
      const checker = new IntegrityChecker();
      await expect(checker.loadWorkflowCheck()).rejects.toBe(err);
    }
  });
});

describe('progress', () => {
  it('is reported after every 10,000th event, never for other records', async () => {
    const { rs } = await workRecords();
    const first = eventsOf(rs)[0]!;
    const many: InstanceRecord[] = [];
    for (let i = 1; i <= 20_001; i++) {
      many.push({ t: 'event', row: { ...first, position: i, stream_seq: i } });
      if (i === 10_000) many.push(...rs.filter((r) => r.t !== 'event'));
    }
    rechain(many, () => {});
    many.push(...rs.filter((r) => r.t !== 'event'));
    const seen: number[] = [];
    const r = await checkRecords(many, { rows: false, onProgress: (events) => seen.push(events) });
    expect(seen).toEqual([10_000, 20_000]);
    expect(r).toMatchObject({ ok: true, events: 20_001 });
    // Without onProgress, the same records check the same.
    expect(await checkRecords(many, { rows: false })).toMatchObject({ ok: true, events: 20_001 });
  });
});
