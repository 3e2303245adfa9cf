// The operation table (issue 11): every input and output schema compiles, the precompiled validators agree
// with the schemas they were built from, results match their output schemas, and the library, the
// service, the bundle workflows and the CLI give the same result for the same input.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { specOf } from '../../src/core/json-schema.js';
import { ERROR_TABLE, type ErrorCode, EXIT_CODES, toolError } from '../../src/errors.js';
import { openInstance } from '../../src/instance/instance.js';
import { runOperation } from '../../src/service/invoke.js';
import { getOperation, OPERATION_NAMES, OPERATIONS } from '../../src/service/table.js';
import { compileSchema, validateInput } from '../../src/service/validate.js';
import { WORKFLOW_NAMES, WORKFLOWS, workflowOperation } from '../../src/workflows/registry.js';
import { ROOT, runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';

const dir = tempDir();

describe('the operation table', () => {
  it('has unique snake_case names, one-line descriptions and compiling input and output schemas', () => {
    expect(new Set(OPERATION_NAMES).size).toBe(OPERATIONS.length);
    for (const op of OPERATIONS) {
      expect(op.name, op.name).toMatch(/^[a-z][a-z_]*$/);
      expect(op.description.includes('\n'), op.name).toBe(false);
      expect(op.description.length, op.name).toBeLessThanOrEqual(200);
      expect(op.input.type, op.name).toBe('object');
      expect(op.input.additionalProperties, op.name).toBe(false);
      // Built from the core checker's spec, so the one check at the table is the checker's.
      expect(specOf(op.input), op.name).toBeDefined();
      expect(() => compileSchema(op.input), `${op.name} input`).not.toThrow();
      expect(() => compileSchema(op.output), `${op.name} output`).not.toThrow();
    }
  });

  it('docs/operations.md is generated from the table and up to date', () => {
    const r = spawnSync(process.execPath, [join(ROOT, 'scripts', 'operations-doc.mjs'), '--check'], {
      encoding: 'utf8',
    });
    expect(r.status, r.stderr).toBe(0);
  });

  it('every bundle workflow is an operation of the table, found in the group it names', async () => {
    for (const w of WORKFLOW_NAMES) {
      expect(OPERATION_NAMES).toContain(WORKFLOWS[w].operation);
      expect(await workflowOperation(w)).toBe(getOperation(WORKFLOWS[w].operation));
    }
  });

  it("the one check (the core's checker) admits nothing an operation's published schema refuses", () => {
    // The schemas MCP, HTTP and OpenAPI publish are generated from the checker's specs; ajv compiles them.
    const samples: unknown[] = [
      undefined,
      {},
      { title: 'x' },
      { title: 5 },
      { id: 'wi_1', status: 'done' },
      { kind: 'json', id: 'd', expected_version: 0, body: {} },
      { bogus: true },
      { limit: 0 },
      { limit: 2.5 },
      { name: '\u0000' },
      { status: ['pending', 'done'] },
      { status: ['pending', 'nope'] },
      { status: 'in_flight', type: ['a', 'b'] },
      { type: Array.from({ length: 101 }, () => 't') },
      { not_before: '5m' },
      { since: '2026-02-30' },
      { since: '24h', before: 'soon' },
      null,
      [],
    ];
    for (const op of OPERATIONS) {
      const schema = compileSchema(op.input);
      for (const s of samples) {
        let admitted = true;
        try {
          validateInput(op, s);
        } catch {
          admitted = false;
        }
        if (admitted) expect(schema(s ?? {}), `${op.name} admitted ${JSON.stringify(s)}`).toBe(true);
      }
    }
  });

  it('refuses bad input with INVALID_INPUT naming the field, before anything runs', async () => {
    const enqueue = getOperation('enqueue');
    const refusal = (input: unknown) => {
      try {
        validateInput(enqueue, input);
      } catch (err) {
        return err;
      }
      throw new Error(`accepted ${JSON.stringify(input)}`);
    };
    expect(refusal({ title: 5 })).toMatchObject({
      code: 'INVALID_INPUT',
      details: { field: 'title' },
      message: expect.stringContaining('title must be a string'),
    });
    expect(refusal({ title: 'x', bogus: 1 })).toMatchObject({
      code: 'INVALID_INPUT',
      details: { field: 'bogus' },
    });
    expect(refusal({ title: 'x', payload: { keep: Number.NaN } })).toMatchObject({
      code: 'INVALID_INPUT',
      details: { field: 'payload', pointer: '/keep' },
    });
    expect(() => getOperation('nope')).toThrow(/unknown operation/);
  });
});

describe('the error table', () => {
  it('gives every code an exit code, an HTTP status and a tool-error shape', () => {
    for (const [code, e] of Object.entries(ERROR_TABLE)) {
      expect(EXIT_CODES[code as ErrorCode]).toBe(e.exit);
      expect(e.http).toBeGreaterThanOrEqual(400);
      expect(e.http).toBeLessThan(600);
      const t = toolError(Object.assign(new Error('m'), { code, details: { field: 'f' } }));
      // No structuredContent: a tool's outputSchema describes its result, and clients check it on errors too.
      expect(t).toEqual({ isError: true, content: [{ type: 'text', text: `${code}: m\n{"field":"f"}` }] });
    }
    // Only storage trouble is worth the same call again; a conflict needs a fresh read first.
    expect(
      Object.entries(ERROR_TABLE)
        .filter(([, e]) => e.retry)
        .map(([c]) => c),
    ).toEqual(['STORAGE_UNAVAILABLE', 'LOCK_TIMEOUT']);
    expect(toolError(new TypeError('boom')).content[0]!.text).toBe('INTERNAL: internal error: boom');
  });
});

/** Ids, times and hashes differ between two instances; everything else must not. */
function normalize(v: unknown): unknown {
  return JSON.parse(
    JSON.stringify(v)
      .replace(/wi_[0-9A-Z]{26}/g, 'wi_X')
      .replace(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z/g, 'T')
      .replace(/"[0-9a-f]{64}"/g, '"H"')
      .replace(/"duration_ms":\d+/g, '"duration_ms":0'),
  );
}

describe('one result whichever edge runs it', () => {
  // Each case: an operation, its input, the same through the CLI, and the workflow (if any).
  const cases: Array<{ op: string; input: Record<string, unknown>; cli: string[]; workflow?: string }> = [
    {
      op: 'enqueue',
      input: { title: 'fetch', priority: 5, kind: 'k', payload: { a: 1 } },
      cli: ['enqueue', 'fetch', '-p', '5', '-k', 'k', '--payload', '{"a":1}'],
      workflow: 'EnqueueWorkItem',
    },
    { op: 'list_items', input: {}, cli: ['list'] },
    { op: 'count_items', input: {}, cli: [] },
    {
      op: 'claim',
      input: { worker: 'w', lease_ms: 30_000 },
      cli: ['claim', '-w', 'w', '--lease', '30s'],
      workflow: 'ClaimWorkItem',
    },
    {
      op: 'append_event',
      input: { type: 'note', data: { x: 1 } },
      cli: ['append', 'note', '--data', '{"x":1}'],
      workflow: 'AppendEvent',
    },
    { op: 'read_events', input: { type: 'note' }, cli: ['events', '--type', 'note'] },
    {
      op: 'commit',
      input: { kind: 'json', id: 'plan', expected_version: 0, body: { todo: ['a'] }, actor_kind: 'human' },
      cli: ['state', 'commit', 'json', 'plan', '--expect', '0', '--body', '-'],
      workflow: 'CommitState',
    },
    {
      op: 'get_document',
      input: { kind: 'json', id: 'plan' },
      cli: ['state', 'get', 'json', 'plan'],
      workflow: 'GetState',
    },
    { op: 'history', input: { kind: 'json', id: 'plan' }, cli: ['state', 'history', 'json', 'plan'] },
    { op: 'list_documents', input: {}, cli: ['state', 'list'] },
    { op: 'replay', input: {}, cli: ['replay'], workflow: 'ReplayPending' },
    {
      op: 'commit',
      input: {
        kind: 'task-ir',
        id: 'login',
        expected_version: 0,
        body: {
          goal: 'Add login',
          acceptance_criteria: [],
          ambiguities: [{ id: 'a1', question: 'OAuth?', status: 'open' }],
        },
        actor_kind: 'human',
      },
      cli: ['state', 'commit', 'task-ir', 'login', '--expect', '0', '--body', '-'],
      workflow: 'CommitState',
    },
    {
      op: 'escalate',
      input: { id: 'login', actor_kind: 'human' },
      cli: ['escalate', 'login'],
      workflow: 'EscalateAmbiguities',
    },
  ];

  it('the service (runOperation), the workflows and the CLI agree, and results fit the output schemas', async () => {
    const a = join(dir, 'svc');
    const b = join(dir, 'cli');
    const c = join(dir, 'wf');
    const svc = await openInstance({ dir: a, worker: 'agent', clock: Date.now });
    expect(runCli(['--dir', b, '--name', 'agent', 'init']).code).toBe(0);
    const wf = await openInstance({ dir: c, name: 'agent' });
    try {
      for (const k of cases) {
        const op = getOperation(k.op);
        const viaService = await runOperation(svc, k.op, k.input);
        expect(compileSchema(op.output)(viaService), `${k.op} output schema`).toBe(true);
        if (k.cli.length > 0) {
          const r = runCli(
            ['--dir', b, '--name', 'agent', ...k.cli, '--json'],
            {},
            k.op === 'commit' ? JSON.stringify(k.input.body) : undefined,
          );
          expect(r.code, `${k.op}: ${r.stderr}`).toBe(0);
          expect(normalize(r.json), k.op).toEqual(normalize(viaService));
        }
        if (k.workflow) {
          const { runWorkflow } = await import('../../src/workflows/registry.js');
          const viaWorkflow = await runWorkflow(wf, k.workflow as never, k.input);
          expect(normalize(viaWorkflow), k.workflow).toEqual(normalize(viaService));
        }
      }
    } finally {
      await svc.close();
      await wf.close();
    }
  });
});
