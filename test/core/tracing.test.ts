// core/tracing.ts without the OpenTelemetry API loaded: its span kind and status values are the API's own, and
// a process that registers nothing with OpenTelemetry (a CLI call, a host hook) runs operations without ever
// loading the API, while one that registers an SDK gets its spans (test/service/tracing.test.ts reads those).
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import { SPAN_KIND, SPAN_STATUS_ERROR, spanContextOf } from '../../src/core/tracing.js';
import { runTsxAsync } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';

describe('tracing without the API loaded', () => {
  it("names the API's own span kind and error status values", () => {
    expect(SPAN_KIND).toEqual({
      INTERNAL: SpanKind.INTERNAL,
      CLIENT: SpanKind.CLIENT,
      PRODUCER: SpanKind.PRODUCER,
      CONSUMER: SpanKind.CONSUMER,
    });
    expect(SPAN_STATUS_ERROR).toBe(SpanStatusCode.ERROR);
  });

  it('refuses the all-zero trace and span ids of a traceparent (W3C), as the API does', () => {
    const ok = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    expect(spanContextOf(ok)).toEqual({
      traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
      spanId: '00f067aa0ba902b7',
      traceFlags: 1,
      isRemote: true,
    });
    expect(spanContextOf(`00-${'0'.repeat(32)}-00f067aa0ba902b7-01`)).toBeUndefined();
    expect(spanContextOf(`00-4bf92f3577b34da6a3ce929d0e0e4736-${'0'.repeat(16)}-01`)).toBeUndefined();
    expect(spanContextOf(`00-${'0'.repeat(31)}1-${'0'.repeat(15)}1-00`)?.traceFlags).toBe(0);
  });

  // In a child process, so no other test file's SDK is registered: operations through the table (the path of
  // every edge) leave the API unloaded until an SDK is registered, and record spans once one is.
  const SCRIPT = `
    import { createRequire } from 'node:module';
    const [dir] = process.argv.slice(1);
    const { openInstance } = await import('./src/instance/instance.ts');
    const { runOperation } = await import('./src/service/invoke.ts');
    const loaded = () => Object.keys(createRequire(import.meta.url).cache).some((k) => k.includes('@opentelemetry/api'));
    const inst = await openInstance({ dir });
    await runOperation(inst, 'enqueue', { title: 'a', kind: 'k', traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' });
    await runOperation(inst, 'claim', { kind: 'k', worker: 'w' });
    await runOperation(inst, 'commit', { kind: 'json', id: 'd', body: { a: 1 }, expected_version: 0 });
    const before = loaded();
    const { trace } = await import('@opentelemetry/api');
    const { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } = await import('@opentelemetry/sdk-trace-base');
    const exporter = new InMemorySpanExporter();
    trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }));
    await runOperation(inst, 'enqueue', { title: 'b', kind: 'k' });
    await inst.close();
    console.log(JSON.stringify({ before, spans: exporter.getFinishedSpans().map((s) => s.name) }));
  `;

  it('a process that registers nothing never loads the API; one that registers an SDK gets its spans', async ({
    onTestFinished,
  }) => {
    const r = await runTsxAsync(SCRIPT, [tempDir()], (kill) => onTestFinished(kill));
    expect({ code: r.code, err: r.stderr }).toEqual({ code: 0, err: '' });
    expect(r.json).toEqual({ before: false, spans: ['publish k'] });
  });
});
