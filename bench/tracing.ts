// `npm run bench -- --only tracing`: what the operation table's spans cost — docs.commit and claim+resolve
// run bare, inside `traced` with no OpenTelemetry SDK registered (the API's no-op), and inside `traced` with
// the SDK and an exporter that drops every span; the three take turns call by call; medians of the rounds.
// Options: --calls N per round (default 2000), --rounds N (default 5).

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider, SimpleSpanProcessor, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { activeTraceparent } from '../src/core/tracing.js';
import { openInstance } from '../src/instance/instance.js';
import { traced } from '../src/service/trace.js';

const { values: args } = parseArgs({
  options: { calls: { type: 'string', default: '2000' }, rounds: { type: 'string', default: '5' } },
});
const CALLS = Number(args.calls);
const ROUNDS = Number(args.rounds);
const tmp = mkdtempSync(join(tmpdir(), 'agentstate-bench-tracing-'));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const dropAll: SpanExporter = { export: (_spans, done) => done({ code: 0 }), shutdown: async () => {} };
const sdk = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(dropAll)] });

async function main() {
  const inst = await openInstance({ dir: join(tmp, 'i'), durability: 'normal' });
  let v = 0;
  const commit = () =>
    inst.docs.commit({ kind: 'json', id: 'doc', expected_version: v, body: { v: v + 1 } }).then(() => {
      v++;
    });
  const claimResolve = async () => {
    await inst.work.enqueue({ title: 't', kind: 'k' });
    const c = (await inst.work.claim({ worker: 'w', kind: 'k' }))!;
    await inst.work.resolve({ id: c.id, worker: 'w', attempt: c.attempts, status: 'done' });
  };
  const modes = {
    bare: (_name: string, fn: () => Promise<void>) => fn(),
    'no SDK (API no-op)': (name: string, fn: () => Promise<void>) => traced(name, {}, fn),
    'SDK, spans dropped': (name: string, fn: () => Promise<void>) => traced(name, {}, fn),
  } as const;
  const times: Record<string, Record<string, number[]>> = {};
  for (let r = 0; r < ROUNDS; r++) {
    for (const [label, fn] of [
      ['docs.commit', commit],
      ['claim+resolve', claimResolve],
    ] as const) {
      // The modes take turns call by call, so a store that grows (history, log) weighs on all alike.
      const sum: Record<string, number> = {};
      for (let i = 0; i < CALLS; i++) {
        // And in a rotating order, so no mode always follows the same one.
        const order = Object.entries(modes);
        for (const [mode, wrap] of [...order.slice(i % 3), ...order.slice(0, i % 3)]) {
          if (mode === 'SDK, spans dropped') trace.setGlobalTracerProvider(sdk);
          else trace.disable();
          const t = performance.now();
          await wrap(label, fn);
          sum[mode] = (sum[mode] ?? 0) + performance.now() - t;
        }
      }
      const byMode = times[label] ?? {};
      times[label] = byMode;
      for (const [mode, total] of Object.entries(sum)) {
        const list = byMode[mode] ?? [];
        byMode[mode] = list;
        list.push(total / CALLS);
      }
    }
  }
  trace.disable();
  console.log(`\n### Tracing cost (${ROUNDS} rounds × ${CALLS} calls, SQLite normal durability)\n`);
  console.log('| call | mode | per call (median of rounds) | vs bare |\n|---|---|---|---|');
  for (const [label, byMode] of Object.entries(times)) {
    const bare = median(byMode.bare!);
    for (const [mode, xs] of Object.entries(byMode)) {
      console.log(
        `| ${label} | ${mode} | ${(median(xs) * 1000).toFixed(1)} µs | ${(median(xs) / bare).toFixed(3)}× |`,
      );
    }
  }
  // The wrapper alone, around an empty async function: what the end-to-end rows above hide in their noise.
  console.log(
    '\n| wrapper alone (200,000 calls) | per call | share of a bare docs.commit / claim+resolve |\n|---|---|---|',
  );
  const empty = async () => {};
  for (const [mode, wrap] of Object.entries(modes)) {
    if (mode === 'SDK, spans dropped') trace.setGlobalTracerProvider(sdk);
    else trace.disable();
    for (let i = 0; i < 20_000; i++) await wrap('commit', empty);
    const t = performance.now();
    for (let i = 0; i < 200_000; i++) await wrap('commit', empty);
    const us = ((performance.now() - t) / 200_000) * 1000;
    const share = (label: string) => `${((us / (median(times[label]!.bare!) * 1000)) * 100).toFixed(2)}%`;
    console.log(`| ${mode} | ${us.toFixed(2)} µs | ${share('docs.commit')} / ${share('claim+resolve')} |`);
  }
  // What every enqueue adds to carry trace context: reading the active span's traceparent.
  console.log(
    '\n| traceparent capture (200,000 calls) | per call | share of a bare claim+resolve (one enqueue) |\n|---|---|---|',
  );
  for (const mode of ['no SDK (API no-op)', 'SDK, inside a span'] as const) {
    if (mode === 'SDK, inside a span') {
      // As NodeSDK does: a context manager, so the span is active inside `traced`.
      context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
      trace.setGlobalTracerProvider(sdk);
    } else trace.disable();
    const us = await traced('enqueue', {}, async () => {
      let n = 0;
      for (let i = 0; i < 20_000; i++) n += activeTraceparent()?.length ?? 0;
      const t = performance.now();
      for (let i = 0; i < 200_000; i++) n += activeTraceparent()?.length ?? 0;
      if (mode === 'SDK, inside a span' && n === 0) throw new Error('no span was active');
      return ((performance.now() - t) / 200_000) * 1000;
    });
    const share = `${((us / (median(times['claim+resolve']!.bare!) * 1000)) * 100).toFixed(3)}%`;
    console.log(`| ${mode} | ${us.toFixed(3)} µs | ${share} |`);
  }
  trace.disable();
  context.disable();
  await inst.close();
  await sdk.shutdown();
}

try {
  await main();
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
