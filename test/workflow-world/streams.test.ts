// The streams of a Workflow SDK World (issue 42) on both backends: ordered chunks at dense indexes under
// concurrent writers, writeMulti as one transaction, close (idempotent, final), live reads woken by the
// store's hints or by polling, startIndex from either end, getChunks paging, getInfo, streams of runs that do
// not exist, binary chunks with NUL bytes, non-ASCII names, and hostile input refused with nothing written.
// Every wait is for a condition (a reader's end, a listener count), never for wall time.
import { afterAll, describe, expect, it } from 'vitest';
import { AppendHints } from '../../src/backends/sqlite/connection.js';
import type { Instance } from '../../src/instance/instance.js';
import { createWorldStreams, type WorldStreams } from '../../src/workflow-world/streams.js';
import { backendsForThisFile } from '../helpers/backends.js';

const backends = await backendsForThisFile({ pooled: true });

const RUN = 'wrun_01JZ|ü+φ';
const NAME = 'strm_01JZ_user_ü|a+b';
const HOUR = 3_600_000;

const open: Instance[] = [];
afterAll(async () => {
  await Promise.all(open.map((i) => i.close()));
});

const text = (b: Uint8Array) => Buffer.from(b).toString('utf8');

/** Everything `stream` yields until it ends. */
async function drain(stream: ReadableStream<Uint8Array>): Promise<Uint8Array[]> {
  const out: Uint8Array[] = [];
  const reader = stream.getReader();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return out;
    out.push(value);
  }
}

/** Every chunk of a stream as getChunks pages it (limit 1000). */
async function allChunks(s: WorldStreams, run: string, name: string) {
  return (await s.getChunks(run, name, { limit: 1000 })).data;
}

describe.each(backends)('$name: World streams', (b) => {
  let k = 0;
  /** A fresh instance (its key, to open more handles on it) and its streams. */
  async function fresh(pollMs?: number): Promise<{ key: string; inst: Instance; s: WorldStreams }> {
    const key = `ws${++k}`;
    const inst = await b.open(key);
    open.push(inst);
    return { key, inst, s: createWorldStreams(inst, pollMs === undefined ? {} : { pollMs }) };
  }

  /** `count` more handles on the instance of `key` (each its own connection), as World streams. */
  async function handles(key: string, count: number): Promise<WorldStreams[]> {
    return Promise.all(
      Array.from({ length: count }, async () => {
        const h = await b.open(key);
        open.push(h);
        return createWorldStreams(h);
      }),
    );
  }

  it('keeps chunks in write order at dense indexes from 0; strings are UTF-8', async () => {
    const { s } = await fresh();
    await s.write(RUN, NAME, 'héllo ');
    await s.write(RUN, NAME, new Uint8Array([0x77, 0x6f, 0x72, 0x6c, 0x64]));
    await s.write(RUN, NAME, '🌍');
    const data = await allChunks(s, RUN, NAME);
    expect(data.map((c) => c.index)).toEqual([0, 1, 2]);
    expect(data.map((c) => text(c.data))).toEqual(['héllo ', 'world', '🌍']);
    expect(Buffer.from(data[2]!.data)).toEqual(Buffer.from([0xf0, 0x9f, 0x8c, 0x8d]));
    expect(await s.getInfo(RUN, NAME)).toEqual({ tailIndex: 2, done: false });
  });

  it('keeps NUL bytes, empty chunks and every byte value; non-ASCII names round-trip', async () => {
    const { s } = await fresh();
    const every = Uint8Array.from({ length: 256 }, (_, i) => i);
    const nul = new Uint8Array([0, 1, 0, 255, 0]);
    await s.writeMulti(RUN, NAME, [nul, new Uint8Array(0), every, '\u0000x\u0000']);
    const data = await allChunks(s, RUN, NAME);
    expect(data.map((c) => Buffer.from(c.data))).toEqual([
      Buffer.from(nul),
      Buffer.alloc(0),
      Buffer.from(every),
      Buffer.from([0, 0x78, 0]),
    ]);
    expect(data.every((c) => c.data instanceof Uint8Array)).toBe(true);
    expect(await s.list(RUN)).toEqual([NAME]);
  });

  it('writeMulti writes its chunks in one transaction: 8 concurrent batches each land contiguous', async () => {
    const { key } = await fresh();
    // Eight handles on one instance: eight connections (on SQLite, eight to the file).
    const writers = await handles(key, 8);
    await Promise.all(
      writers.map((h, w) =>
        h.writeMulti(
          RUN,
          NAME,
          Array.from({ length: 5 }, (_, i) => `w${w}:${i}`),
        ),
      ),
    );
    const got = (await allChunks(writers[0]!, RUN, NAME)).map((c) => text(c.data));
    expect(got).toHaveLength(40);
    for (let at = 0; at < 40; at += 5) {
      const w = got[at]!.split(':')[0];
      expect(got.slice(at, at + 5)).toEqual([0, 1, 2, 3, 4].map((i) => `${w}:${i}`));
    }
  });

  it('8 concurrent writers get dense indexes: no gap, no duplicate, each writer in its own order', async () => {
    const { key, s } = await fresh();
    const writers = await handles(key, 8);
    await Promise.all(
      writers.map(async (w, n) => {
        for (let i = 0; i < 10; i++) await w.write(RUN, NAME, `${n}|${i}`);
      }),
    );
    const data = await allChunks(s, RUN, NAME);
    expect(data.map((c) => c.index)).toEqual(Array.from({ length: 80 }, (_, i) => i));
    const payloads = data.map((c) => text(c.data));
    expect(new Set(payloads).size).toBe(80);
    for (let n = 0; n < 8; n++) {
      expect(payloads.filter((p) => p.startsWith(`${n}|`))).toEqual(
        Array.from({ length: 10 }, (_, i) => `${n}|${i}`),
      );
    }
    expect(await s.getInfo(RUN, NAME)).toEqual({ tailIndex: 79, done: false });
  });

  it('a closed stream refuses writes (INVALID_TRANSITION, nothing written); closing again changes nothing', async () => {
    const { s } = await fresh();
    await s.write(RUN, NAME, 'a');
    await s.close(RUN, NAME);
    await expect(s.write(RUN, NAME, 'b')).rejects.toMatchObject({ code: 'INVALID_TRANSITION' });
    await expect(s.writeMulti(RUN, NAME, ['c', 'd'])).rejects.toMatchObject({ code: 'INVALID_TRANSITION' });
    await s.close(RUN, NAME);
    await s.close(RUN, NAME);
    expect(await s.getInfo(RUN, NAME)).toEqual({ tailIndex: 0, done: true });
    const page = await s.getChunks(RUN, NAME);
    expect(page).toMatchObject({ hasMore: false, cursor: null, done: true });
    expect(page.data.map((c) => text(c.data))).toEqual(['a']);
  });

  it('getInfo: -1 and open for a stream never written; a stream closed empty is -1 and done, and listed', async () => {
    const { s } = await fresh();
    expect(await s.getInfo(RUN, 'strm_none')).toEqual({ tailIndex: -1, done: false });
    expect(await s.getChunks(RUN, 'strm_none')).toEqual({
      data: [],
      cursor: null,
      hasMore: false,
      done: false,
    });
    await s.close(RUN, 'strm_empty');
    expect(await s.getInfo(RUN, 'strm_empty')).toEqual({ tailIndex: -1, done: true });
    expect(await drain(await s.get(RUN, 'strm_empty'))).toEqual([]);
    expect(await s.list(RUN)).toEqual(['strm_empty']);
  });

  it("list names a run's streams (by the run that created each), in name order", async () => {
    const { s } = await fresh();
    await s.write(RUN, 'strm_b', 'x');
    await s.write(RUN, 'strm_a', 'x');
    await s.write(RUN, 'strm_a', 'y');
    await s.close(RUN, 'strm_c');
    await s.write('wrun_other', 'strm_d', 'x');
    // A later write under another run id does not file the stream twice.
    await s.write('wrun_other', 'strm_a', 'z');
    expect(await s.list(RUN)).toEqual(['strm_a', 'strm_b', 'strm_c']);
    expect(await s.list('wrun_other')).toEqual(['strm_d']);
    expect(await s.list('wrun_nobody')).toEqual([]);
  });

  it('streams of a run that does not exist work (the health check), and create no run', async () => {
    const { inst, s } = await fresh();
    const run = 'wrun_hc_01JZ+|ü';
    const name = '__health_check__01JZ';
    const reading = drain(await s.get(run, name));
    await s.write(run, name, 'ping');
    await s.close(run, name);
    expect((await reading).map(text)).toEqual(['ping']);
    expect(await s.list(run)).toEqual([name]);
    expect(await inst.work.list()).toEqual([]);
    expect(await inst.docs.list()).toEqual([]);
  });

  // Through a transaction pooler there is no session to LISTEN in, so no hints: those readers poll (the
  // polling test below); the two tests that wait an hour between polls are for the backends that hint.
  const hinted = b.name !== 'pooled';

  it.runIf(hinted)(
    'get: a reader started before the writes sees every chunk in order and ends at the close (woken by hints)',
    async () => {
      // An hour between polls: only the store's hints can wake the reader in time for the test.
      const { s } = await fresh(HOUR);
      const reading = drain(await s.get(RUN, NAME));
      for (let i = 0; i < 20; i++) {
        if (i % 5 === 4) await s.writeMulti(RUN, NAME, [`${i}a`, `${i}b`]);
        else await s.write(RUN, NAME, `${i}`);
      }
      await s.close(RUN, NAME);
      const expected = Array.from({ length: 20 }, (_, i) =>
        i % 5 === 4 ? [`${i}a`, `${i}b`] : [`${i}`],
      ).flat();
      expect((await reading).map(text)).toEqual(expected);
    },
  );

  it('get: without hints the reader polls, and still sees every chunk written by another handle', async () => {
    const { key, inst, s } = await fresh();
    const [writer] = (await handles(key, 1)) as [WorldStreams];
    const silent = createWorldStreams(
      { backend: { ...inst.backend, capabilities: { notify: false } }, clock: inst.clock },
      { pollMs: 5 },
    );
    const reading = drain(await silent.get(RUN, NAME));
    for (let i = 0; i < 10; i++) await writer.write(RUN, NAME, `${i}`);
    await writer.close(RUN, NAME);
    expect((await reading).map(text)).toEqual(Array.from({ length: 10 }, (_, i) => `${i}`));
    expect(await drain(await s.get(RUN, NAME, 9))).toEqual([new Uint8Array([0x39])]);
  });

  it('get skips empty chunks (they carry no bytes) but counts them in startIndex', async () => {
    const { s } = await fresh();
    await s.writeMulti(RUN, NAME, ['a', '', 'b', new Uint8Array(0), 'c']);
    await s.close(RUN, NAME);
    expect((await drain(await s.get(RUN, NAME))).map(text)).toEqual(['a', 'b', 'c']);
    expect((await drain(await s.get(RUN, NAME, 2))).map(text)).toEqual(['b', 'c']);
  });

  it('get from startIndex, and from the end with a negative one (clamped to 0)', async () => {
    const { s } = await fresh();
    await s.writeMulti(
      RUN,
      NAME,
      Array.from({ length: 10 }, (_, i) => `${i}`),
    );
    await s.close(RUN, NAME);
    const from = async (i?: number) => (await drain(await s.get(RUN, NAME, i))).map(text);
    expect(await from()).toEqual(['0', '1', '2', '3', '4', '5', '6', '7', '8', '9']);
    expect(await from(3)).toEqual(['3', '4', '5', '6', '7', '8', '9']);
    expect(await from(-3)).toEqual(['7', '8', '9']);
    expect(await from(-1)).toEqual(['9']);
    expect(await from(-100)).toEqual(['0', '1', '2', '3', '4', '5', '6', '7', '8', '9']);
    expect(await from(10)).toEqual([]);
    expect(await from(25)).toEqual([]);
    await expect(s.get(RUN, NAME, 1.5)).rejects.toMatchObject({ code: 'INVALID_INPUT' });
  });

  it.runIf(hinted)(
    'a negative startIndex counts from the end as it is when get is called, then follows live',
    async () => {
      const { s } = await fresh(HOUR);
      await s.writeMulti(RUN, NAME, ['0', '1', '2', '3']);
      const reading = drain(await s.get(RUN, NAME, -2));
      await s.write(RUN, NAME, '4');
      await s.close(RUN, NAME);
      expect((await reading).map(text)).toEqual(['2', '3', '4']);
    },
  );

  it('cancelling a live reader ends its pending read and stops its waiting', async () => {
    const { inst, s } = await fresh(HOUR);
    await s.write(RUN, NAME, 'first');
    const reader = (await s.get(RUN, NAME)).getReader();
    expect(text((await reader.read()).value!)).toBe('first');
    const pending = reader.read();
    if (b.name === 'sqlite') {
      const hints = AppendHints.of(inst.paths.db)!;
      // The reader waits with the store's listener on.
      while (hints.listeners === 0) await new Promise((r) => setTimeout(r, 5));
      await reader.cancel();
      expect(await pending).toEqual({ done: true, value: undefined });
      while (hints.listeners > 0) await new Promise((r) => setTimeout(r, 5));
    } else {
      await reader.cancel();
      expect(await pending).toEqual({ done: true, value: undefined });
    }
    // The stream is still open for writers; a new reader sees what the cancelled one did not.
    await s.write(RUN, NAME, 'second');
    await s.close(RUN, NAME);
    expect((await drain(await s.get(RUN, NAME, 1))).map(text)).toEqual(['second']);
  });

  it('getChunks pages with a cursor: hasMore while written chunks remain, done once closed', async () => {
    const { s } = await fresh();
    await s.writeMulti(
      RUN,
      NAME,
      Array.from({ length: 25 }, (_, i) => `${i}`),
    );
    const pages = [];
    let cursor: string | undefined;
    for (;;) {
      const page = await s.getChunks(RUN, NAME, { limit: 10, ...(cursor ? { cursor } : {}) });
      pages.push(page);
      if (!page.hasMore) break;
      cursor = page.cursor!;
    }
    expect(pages.map((p) => p.data.map((c) => c.index))).toEqual([
      Array.from({ length: 10 }, (_, i) => i),
      Array.from({ length: 10 }, (_, i) => i + 10),
      [20, 21, 22, 23, 24],
    ]);
    expect(pages.map((p) => [p.hasMore, p.done, p.cursor === null])).toEqual([
      [true, false, false],
      [true, false, false],
      [false, false, true],
    ]);
    expect(pages.flatMap((p) => p.data.map((c) => text(c.data)))).toEqual(
      Array.from({ length: 25 }, (_, i) => `${i}`),
    );
    // The default page is 100 chunks; closed, every page says done.
    await s.close(RUN, NAME);
    const first = await s.getChunks(RUN, NAME, { limit: 20 });
    expect([first.data.length, first.hasMore, first.done]).toEqual([20, true, true]);
    const rest = await s.getChunks(RUN, NAME, { cursor: first.cursor! });
    expect([rest.data.length, rest.hasMore, rest.done, rest.cursor]).toEqual([5, false, true, null]);
    expect((await s.getChunks(RUN, NAME)).data).toHaveLength(25);
  });

  it('getChunks refuses a limit outside 1..1000 and a cursor it did not make', async () => {
    const { s } = await fresh();
    await s.write(RUN, NAME, 'x');
    for (const options of [
      { limit: 0 },
      { limit: 1001 },
      { limit: 2.5 },
      { cursor: 'nope' },
      { cursor: '' },
    ]) {
      await expect(s.getChunks(RUN, NAME, options), JSON.stringify(options)).rejects.toMatchObject({
        code: 'INVALID_INPUT',
      });
    }
    const forged = Buffer.from(JSON.stringify({ i: -1 })).toString('base64url');
    await expect(s.getChunks(RUN, NAME, { cursor: forged })).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    expect((await s.getChunks(RUN, NAME, { limit: 1000 })).data).toHaveLength(1);
  });

  it('createWorldStreams refuses a pollMs no timer can wait, and a backend without workflow streams', async () => {
    const { inst } = await fresh();
    for (const pollMs of [0, -1, Number.NaN, 2 ** 31]) {
      expect(() => createWorldStreams(inst, { pollMs }), String(pollMs)).toThrow(
        expect.objectContaining({ code: 'INVALID_INPUT' }),
      );
    }
    const { workflowStreams: _, ...without } = inst.backend;
    expect(() => createWorldStreams({ backend: without, clock: inst.clock })).toThrow(
      expect.objectContaining({ code: 'INVALID_INPUT' }),
    );
  });

  it('hostile names and oversize chunks are INVALID_INPUT and write nothing', async () => {
    const { s } = await fresh();
    const names = [
      '../x',
      '..',
      '.hidden',
      'a/b',
      'a\\b',
      '__proto__',
      'constructor',
      'a\u0000b',
      '',
      'x'.repeat(201),
      'a\nb',
      '\ud800',
    ];
    for (const name of names) {
      await expect(s.write(RUN, name, 'x'), JSON.stringify(name)).rejects.toMatchObject({
        code: 'INVALID_INPUT',
      });
      await expect(s.close(RUN, name), JSON.stringify(name)).rejects.toMatchObject({ code: 'INVALID_INPUT' });
      await expect(s.write(name, NAME, 'x'), JSON.stringify(name)).rejects.toMatchObject({
        code: 'INVALID_INPUT',
      });
      await expect(s.get(RUN, name)).rejects.toMatchObject({ code: 'INVALID_INPUT' });
      await expect(s.getInfo(RUN, name)).rejects.toMatchObject({ code: 'INVALID_INPUT' });
      await expect(s.list(name)).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    }
    const big = new Uint8Array(10 * 1024 * 1024);
    await expect(s.write(RUN, NAME, big)).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    await expect(s.write(RUN, NAME, 'é'.repeat(600_000))).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    // One oversize chunk refuses the whole batch.
    await expect(s.writeMulti(RUN, NAME, ['ok', big])).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    await expect(s.write(RUN, NAME, 42 as unknown as string)).rejects.toMatchObject({
      code: 'INVALID_INPUT',
    });
    await expect(s.writeMulti(RUN, NAME, 'ab' as unknown as string[])).rejects.toMatchObject({
      code: 'INVALID_INPUT',
    });
    expect(await s.getInfo(RUN, NAME)).toEqual({ tailIndex: -1, done: false });
    expect(await s.list(RUN)).toEqual([]);
    // A chunk of exactly the limit is fine.
    await s.write(RUN, NAME, new Uint8Array(1024 * 1024));
    expect(await s.getInfo(RUN, NAME)).toEqual({ tailIndex: 0, done: false });
  });
});
