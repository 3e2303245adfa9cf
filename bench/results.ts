// `npm run bench -- --only results` (issue 41, point 2): what a handler's result costs a batch resolve. Per
// backend (SQLite, and PostgreSQL when it answers at AGENTSTATE_BENCH_PG_URL): claimMany(500) then
// resolveMany(500), each item's result empty (null), 1 KB or 10 KB of JSON; the three take turns batch by batch
// on the same instance, so a growing store weighs on all alike. Prints the median ms per resolve of 500, its
// ratio to the empty result, and the size of one stored work_items_resolved event.
// Options: --batches N per size and round (default 10), --rounds N (default 3).

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import type { Json } from '../src/core/types.js';
import { type Instance, openInstance } from '../src/instance/instance.js';

const { values: args } = parseArgs({
  options: { batches: { type: 'string', default: '10' }, rounds: { type: 'string', default: '3' } },
});
const BATCHES = Number(args.batches);
const ROUNDS = Number(args.rounds);
const BATCH = 500;
const PG_URL = process.env.AGENTSTATE_BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const tmp = mkdtempSync(join(tmpdir(), 'agentstate-bench-results-'));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** A result of about `bytes` characters of JSON, different for every item (non-ASCII, `|` and `+` in it). */
function resultOf(bytes: number, k: number): Json {
  if (bytes === 0) return null;
  return { item: k, text: `é|+${k} `.repeat(Math.ceil(bytes / (6 + String(k).length))).slice(0, bytes) };
}

const SIZES = [
  ['null', 0],
  ['1 KB', 1024],
  ['10 KB', 10_240],
] as const;

/** Median ms per resolveMany of 500, per result size; the size of one stored batch event per size. */
async function measure(inst: Instance): Promise<Record<string, { ms: number; eventChars: number }>> {
  const times: Record<string, number[]> = Object.fromEntries(SIZES.map(([name]) => [name, []]));
  const eventChars: Record<string, number> = {};
  for (let r = 0; r < ROUNDS; r++) {
    for (let b = 0; b < BATCHES; b++) {
      for (const [name, bytes] of [...SIZES.slice(b % 3), ...SIZES.slice(0, b % 3)]) {
        await inst.work.enqueueMany(
          Array.from({ length: BATCH }, (_, k) => ({ title: `r ${k}`, kind: name })),
        );
        const held = await inst.work.claimMany({ worker: 'w', kind: name, limit: BATCH, lease_ms: 600_000 });
        const inputs = held.map((h, k) => ({
          id: h.id,
          worker: 'w',
          attempt: h.attempts,
          status: 'done' as const,
          result: resultOf(bytes, k),
        }));
        const t = performance.now();
        await inst.work.resolveMany(inputs);
        times[name]!.push(performance.now() - t);
        if (eventChars[name] === undefined) {
          const [e] = await inst.events.read({ type: 'work_items_resolved', reverse: true, limit: 1 });
          eventChars[name] = JSON.stringify(e?.data ?? null).length;
        }
      }
    }
  }
  return Object.fromEntries(
    SIZES.map(([name]) => [name, { ms: median(times[name]!), eventChars: eventChars[name]! }]),
  );
}

async function pgReachable(): Promise<boolean> {
  const c = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 2000 });
  try {
    await c.connect();
    return true;
  } catch {
    return false;
  } finally {
    await c.end().catch(() => {});
  }
}

async function main() {
  const backends: Array<[string, () => Promise<Instance>, () => Promise<void>]> = [
    ['SQLite', () => openInstance({ dir: join(tmp, 'sqlite'), durability: 'full' }), async () => {}],
  ];
  if (await pgReachable()) {
    const schema = `bench_results_${process.pid}`;
    backends.push([
      'PostgreSQL',
      () => openInstance({ dir: join(tmp, 'pg'), url: PG_URL, schema }),
      async () => {
        const c = new pg.Client({ connectionString: PG_URL });
        await c.connect();
        await c.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
        await c.end();
      },
    ]);
  }
  console.log(
    `resolveMany(${BATCH}) by result size: median ms per call over ${ROUNDS} rounds × ${BATCHES} batches`,
  );
  console.log('backend      result   ms/500   × null   stored event (characters)');
  for (const [name, open, drop] of backends) {
    const inst = await open();
    try {
      const m = await measure(inst);
      for (const [size] of SIZES) {
        const row = m[size]!;
        console.log(
          `${name.padEnd(12)} ${size.padEnd(8)} ${row.ms.toFixed(1).padStart(6)}   ${(row.ms / m.null!.ms).toFixed(2).padStart(5)}×   ${row.eventChars.toLocaleString('en')}`,
        );
      }
    } finally {
      await inst.close();
      await drop();
    }
  }
}

try {
  await main();
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
