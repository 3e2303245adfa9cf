// The edges' promise (issue 44): HTTP (with the dashboard and the event stream), MCP, the host hooks and the
// metrics reach the store only through the service's one edge pipeline, `callOperation` (access →
// attribution → trace context → validate → run): no call into an instance's services, no import of a core
// service class or a backend, no second way to run an operation, and one attribution policy.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/cli.js';

const SRC = join(ROOT, 'src');
/** The edges the pipeline serves (the CLI and the library run as the machine's user, through invoke). */
const EDGES = ['http', 'mcp', 'hosts', 'metrics', 'net'];

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

/** The code of a file without its comments (a comment may name what the code must not do). */
const code = (file: string): string =>
  readFileSync(file, 'utf8')
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/(^|[^:'"`])\/\/.*$/gm, '$1');

const imports = (text: string): string[] =>
  [...text.matchAll(/(?:from|import\()\s*'([^']+)'/g)].map((m) => m[1]!);

/** A call into one of an instance's services (`inst.work.list(…)`, `inst.events.head()`, `inst.backend…`). */
const INSTANCE_CALL =
  /\b(?:inst|instance)\??\.(?:work|docs|events|limits|backend)\b|\.(?:work|docs|events|limits)\??\.(?:list|find|get|apply|commit|release|counts|stats|head|verify|read|append|tail|countTypes|writeCounts|lastVerify|claim|enqueue|resolve)\b/;

const edgeFiles = () =>
  EDGES.flatMap((d) => files(join(SRC, d))).map((f) => ({ rel: relative(SRC, f), text: code(f) }));

describe('the edges run the store only through the edge pipeline', () => {
  it('no edge calls into an instance’s services', () => {
    const calls = edgeFiles().flatMap(({ rel, text }) =>
      text
        .split('\n')
        .map((line, n) => ({ at: `${rel}:${n + 1}`, line }))
        .filter(({ line }) => INSTANCE_CALL.test(line))
        .map(({ at, line }) => `${at}: ${line.trim()}`),
    );
    expect(calls).toEqual([]);
  });

  it('no edge imports a backend, the store’s wiring or a core service class', () => {
    const banned =
      /(^|\/)(backends\/|instance\/store\.js$|core\/(work\/queue|documents\/(?!(types|backend)\.js$)[a-z-]+|integrity\/(?!types\.js$)[a-z-]+|events\/(?!(types|backend)\.js$)[a-z-]+)\.js$)/;
    for (const { rel, text } of edgeFiles()) {
      for (const spec of imports(text)) expect(spec, rel).not.toMatch(banned);
    }
  });

  it('no edge runs an operation another way than callOperation (runOperation, invoke, execute)', () => {
    const users: string[] = [];
    for (const { rel, text } of edgeFiles()) {
      for (const spec of imports(text)) expect(spec, rel).not.toMatch(/service\/(invoke|run)\.js$/);
      if (/\bcallOperation\(/.test(text)) users.push(rel);
    }
    // The pipeline is what they use: every edge that runs operations (a test that would pass with none).
    for (const edge of [
      'http/app.ts',
      'http/dashboard/common.ts',
      'http/sse.ts',
      'http/metrics.ts',
      'http/instances.ts',
      'mcp/server.ts',
      'mcp/elicitation.ts',
      'hosts/hooks/run.ts',
      'metrics/prometheus.ts',
    ]) {
      expect(users).toContain(edge);
    }
  });

  it('one attribution policy: only auth/attribution.ts turns a call into its writer’s input', () => {
    // An edge describes its writer (principalWriter, mcpWriter); `attribute` is called by the pipeline alone.
    const callers = files(SRC)
      .filter((f) => /\battribute\(/.test(code(f)))
      .map((f) => relative(SRC, f));
    expect(callers.sort()).toEqual(['auth/attribution.ts', 'service/edge.ts']);
    // Access is checked by the pipeline too; the one edge that checks it itself does so for ask_human, a tool
    // of MCP's own that is no operation of the table.
    const checks = edgeFiles()
      .filter(({ text }) => /\bcheckAccess\(/.test(text))
      .map(({ rel }) => rel);
    expect(checks).toEqual(['mcp/server.ts']);
  });
});
