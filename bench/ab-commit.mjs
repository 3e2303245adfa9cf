// A/B of two builds: P1's "own JavaScript per commit" (pg's pool stubbed: no driver, socket or server), an
// earlier build against this one, alternating blocks in one process, for the library's docs.commit and the
// same commit through the operation table (runOperation, as every edge runs it).
//   git worktree add /tmp/base <rev> && (cd /tmp/base && ln -s "$PWD/node_modules" . && npm run build)
//   AGENTSTATE_AB_BASE=/tmp/base/dist node bench/ab-commit.mjs          # BODY=1: whole bodies, not patches
import { fileURLToPath } from 'node:url';
import pg from 'pg';

const here = fileURLToPath(new URL('../dist', import.meta.url));
if (!process.env.AGENTSTATE_AB_BASE)
  throw new Error('set AGENTSTATE_AB_BASE to the dist/ of the build to compare with');
const builds = { base: process.env.AGENTSTATE_AB_BASE, new: here };
const URL_ = process.env.AGENTSTATE_BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const schema = `pairbench_${process.pid}`;
const mods = {},
  insts = {},
  versions = {};
for (const [k, d] of Object.entries(builds)) {
  mods[k] = {
    inst: await import(`${d}/instance/instance.js`),
    invoke: await import(`${d}/service/invoke.js`),
  };
  insts[k] = await mods[k].inst.openInstance({ url: URL_, schema, host: 'h', name: k, worker: 'bench' });
  const body = {
    title: 'plan',
    items: Array.from({ length: 20 }, (_, i) => ({ id: i, text: `step ${i} ü|+`, done: false })),
  };
  for (const id of ['lib', 'tbl'])
    await insts[k].docs.commit({ kind: 'json', id, expected_version: 0, body, actor_kind: 'tool' });
  versions[k] = { lib: 1, tbl: 1 };
}
const proto = pg.Pool.prototype;
const real = { connect: proto.connect, query: proto.query };
let seq = 1,
  position = 1000;
const client = {
  query: () =>
    Promise.resolve({ command: 'SELECT', rowCount: 1, rows: [{ seq: ++seq, n: '1', last: ++position }] }),
  release: () => {},
};
proto.connect = () => Promise.resolve(client);
proto.query = () => Promise.resolve({ command: 'SELECT', rowCount: 0, rows: [] });
const change = (i) =>
  process.env.BODY
    ? {
        body: {
          title: `plan ${i}`,
          items: Array.from({ length: 20 }, (_, j) => ({ id: j, text: `step ${j} ü|+`, done: j < i % 20 })),
        },
      }
    : { merge_patch: { n: i, note: `update ${i}` } };
const input = (k, id, i) => ({
  kind: 'json',
  id,
  expected_version: versions[k][id],
  ...change(i),
  actor: 'bench',
  actor_kind: 'tool',
});
const cases = {
  'library docs.commit': async (k, i) => {
    versions[k].lib = (await insts[k].docs.commit(input(k, 'lib', i))).version;
  },
  'table commit (runOperation)': async (k, i) => {
    versions[k].tbl = (await mods[k].invoke.runOperation(insts[k], 'commit', input(k, 'tbl', i))).version;
  },
};
const median = (a) => {
  const s = [...a].sort((x, y) => x - y);
  return s[Math.floor(s.length / 2)];
};
const N = Number(process.env.N ?? 3000),
  BLOCKS = Number(process.env.BLOCKS ?? 9);
let i = 0;
try {
  for (const [name, fn] of Object.entries(cases)) {
    for (let w = 0; w < 1000; w++) {
      await fn('base', i++);
      await fn('new', i++);
    }
    const us = { base: [], new: [] },
      ratios = [];
    for (let b = 0; b < BLOCKS; b++) {
      const r = {};
      for (const k of b % 2 ? ['new', 'base'] : ['base', 'new']) {
        const c0 = process.cpuUsage();
        for (let n = 0; n < N; n++) await fn(k, i++);
        const d = process.cpuUsage(c0);
        r[k] = (d.user + d.system) / N;
        us[k].push(r[k]);
      }
      ratios.push(r.new / r.base);
    }
    console.log(
      `${name.padEnd(28)} base ${median(us.base).toFixed(1)} µs  new ${median(us.new).toFixed(1)} µs  paired new/base ${median(ratios).toFixed(3)}  (blocks ${ratios.map((x) => x.toFixed(2)).join(' ')})`,
    );
  }
} finally {
  proto.connect = real.connect;
  proto.query = real.query;
  for (const k of Object.keys(insts)) await insts[k].close();
  const c = new pg.Client(URL_);
  await c.connect();
  await c.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await c.end();
}
