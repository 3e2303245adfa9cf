// Issue 10, holes 1, 5 and 7: JSON that would bypass a kind's rules or be silently changed is refused with
// INVALID_INPUT and writes nothing (library and CLI, both backends); a retry racing its original gets the
// original result.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { CommitInput, JsonObject } from '../../src/core/types.js';
import type { Instance } from '../../src/instance/instance.js';
import { backendsForThisFile } from '../helpers/backends.js';
import { runCli } from '../helpers/cli.js';
import { appendUntil, FULL_EXAMPLE_EVENTS } from '../helpers/events.js';
import { tempDir } from '../helpers/tmp.js';

const backends = await backendsForThisFile();
const dir = tempDir();

const example = (name: string): JsonObject =>
  JSON.parse(readFileSync(new URL(`../kinds/examples/${name}.json`, import.meta.url), 'utf8')) as JsonObject;

/** What a refused write must leave untouched. */
async function snapshot(inst: Instance, kind: string, id: string) {
  const doc = await inst.docs.find(kind, id);
  return {
    version: doc?.version ?? 0,
    body: doc?.body ?? null,
    head: (await inst.events.head())?.position ?? 0,
    items: (await inst.work.list({ limit: 1000 })).length,
  };
}

async function refused(
  inst: Instance,
  input: CommitInput,
  code = 'INVALID_INPUT',
): Promise<Record<string, unknown>> {
  const before = await snapshot(inst, input.kind, input.id);
  const err = await inst.docs.commit(input).then(
    () => null,
    (e: unknown) => e as { code?: string; details?: Record<string, unknown> },
  );
  expect(err?.code, 'the commit must be refused').toBe(code);
  expect(await snapshot(inst, input.kind, input.id)).toEqual(before);
  return err?.details ?? {};
}

/** A JSON text with an own "__proto__" key (a JS object literal would set the prototype instead). */
const withProto = (text: string): JsonObject => JSON.parse(text) as JsonObject;

for (const b of backends) {
  describe(`hostile JSON on ${b.name}`, () => {
    it('a merge patch with __proto__ cannot delete an agent-run’s append-only facts and receipts', async () => {
      const inst = await b.open();
      try {
        await inst.docs.commit({
          kind: 'task-ir',
          id: 'task-example',
          expected_version: 0,
          body: example('task-ir.resolved'),
        });
        await appendUntil(inst, FULL_EXAMPLE_EVENTS);
        const body = example('agent-run.full');
        await inst.docs.commit({ kind: 'agent-run', id: 'run', expected_version: 0, body, actor: 'coder' });
        const stored = await inst.docs.get({ kind: 'agent-run', id: 'run' });
        const attack = withProto(
          JSON.stringify({ facts: null, receipts: null }).replace(
            /}$/,
            `,"__proto__":${JSON.stringify({ facts: stored.body.facts, receipts: stored.body.receipts })}}`,
          ),
        );
        expect(Object.keys(attack)).toContain('__proto__');
        const details = await refused(inst, {
          kind: 'agent-run',
          id: 'run',
          expected_version: 1,
          merge_patch: attack,
          actor: 'coder',
        });
        expect(details).toMatchObject({ field: 'merge_patch', pointer: '/__proto__' });
        const after = await inst.docs.get({ kind: 'agent-run', id: 'run' });
        expect(after.body.facts).toEqual(stored.body.facts);
        expect(after.body.receipts).toEqual(stored.body.receipts);
      } finally {
        await inst.close();
      }
    });

    it('a grid role cannot drop fields it may not write by hiding them behind __proto__', async () => {
      const inst = await b.open();
      try {
        const seed = JSON.parse(
          readFileSync(new URL('../kinds/examples/grid/seed.json', import.meta.url), 'utf8'),
        ) as JsonObject;
        await inst.docs.commit({
          kind: 'grid-mission',
          id: 'mission',
          expected_version: 0,
          body: seed,
          actor: 'mc',
          role: 'mc',
        });
        const patch = withProto(`{"status":null,"__proto__":{"status":${JSON.stringify(seed.status)}}}`);
        await refused(inst, {
          kind: 'grid-mission',
          id: 'mission',
          expected_version: 1,
          merge_patch: patch,
          actor: 'executor-1',
          role: 'executor',
        });
      } finally {
        await inst.close();
      }
    });

    it('constructor and prototype keys are refused too, in bodies, patches, notes, payloads and event data', async () => {
      const inst = await b.open();
      try {
        for (const key of ['__proto__', 'constructor', 'prototype']) {
          const nested = withProto(`{"a":{"${key}":{"x":1}}}`);
          const details = await refused(inst, { kind: 'json', id: 'doc', expected_version: 0, body: nested });
          expect(details.pointer).toBe(`/a/${key}`);
          await refused(inst, {
            kind: 'json',
            id: 'doc',
            expected_version: 0,
            json_patch: [{ op: 'add', path: `/${key}`, value: 1 }],
          });
          const item = await inst.work.enqueue({ title: 't' });
          await expect(inst.work.annotate({ id: item.id, notes: nested })).rejects.toMatchObject({
            code: 'INVALID_INPUT',
          });
          expect((await inst.work.get(item.id)).notes).toEqual({});
          await expect(inst.work.enqueue({ title: 'p', payload: nested })).rejects.toMatchObject({
            code: 'INVALID_INPUT',
            details: { field: 'payload' },
          });
          await expect(inst.events.append({ type: 'note', data: nested })).rejects.toMatchObject({
            code: 'INVALID_INPUT',
            details: { field: 'data' },
          });
        }
        // A key that merely contains the word is data like any other.
        const ok = await inst.docs.commit({
          kind: 'json',
          id: 'doc',
          expected_version: 0,
          body: { 'constructor/prototype': 1, my_prototype: 2 },
        });
        expect(ok.version).toBe(1);
      } finally {
        await inst.close();
      }
    });

    it('a JSON Patch path through __proto__ is INVALID_INPUT, not an internal error', async () => {
      const inst = await b.open();
      try {
        await inst.docs.commit({ kind: 'json', id: 'doc', expected_version: 0, body: { a: {} } });
        for (const path of ['/__proto__/polluted', '/a/constructor/prototype/x', '/a/__proto__']) {
          for (const op of [
            { op: 'add', path, value: 1 },
            { op: 'copy', from: path, path: '/b' },
            { op: 'move', from: '/a', path },
          ] as const) {
            const details = await refused(inst, {
              kind: 'json',
              id: 'doc',
              expected_version: 1,
              json_patch: [op],
            });
            expect(details.field).toBe('json_patch');
          }
        }
        expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      } finally {
        await inst.close();
      }
    });

    it('numbers JSON cannot carry (Infinity, NaN, -0, bigint) are refused, never stored as null or 0', async () => {
      const inst = await b.open();
      try {
        for (const bad of [Number.POSITIVE_INFINITY, Number.NaN, -0, 10n]) {
          await refused(inst, {
            kind: 'json',
            id: 'n',
            expected_version: 0,
            body: { keep: bad as unknown as number },
          });
        }
        const item = await inst.work.enqueue({ title: 't' });
        await inst.work.annotate({ id: item.id, notes: { keep: 1 } });
        await expect(
          inst.work.annotate({ id: item.id, notes: { keep: Number.POSITIVE_INFINITY } }),
        ).rejects.toMatchObject({ code: 'INVALID_INPUT', details: { field: 'notes', pointer: '/keep' } });
        expect((await inst.work.get(item.id)).notes).toEqual({ keep: 1 });
      } finally {
        await inst.close();
      }
    });

    it('impossible dates are refused instead of rolled over', async () => {
      const inst = await b.open();
      try {
        for (const t of [
          '2026-02-30',
          '2026-13-01',
          '2026-11-30T25:00:00Z',
          '2026-11-30T10:61:00Z',
          '2026-04-31T00:00:00Z',
        ]) {
          await expect(inst.work.enqueue({ title: 't', not_before: t })).rejects.toMatchObject({
            code: 'INVALID_INPUT',
            details: { field: 'not_before' },
          });
          await expect(inst.events.read({ since: t })).rejects.toMatchObject({ code: 'INVALID_INPUT' });
        }
        expect((await inst.work.list({})).length).toBe(0);
        const leap = await inst.work.enqueue({ title: 'leap', not_before: '2028-02-29T12:00:00Z' });
        expect(leap.not_before).toBe('2028-02-29T12:00:00.000Z');
      } finally {
        await inst.close();
      }
    });

    it('a retry racing its original (same write id, two handles) gets the original result', async () => {
      const key = `race-${Math.random().toString(36).slice(2)}`;
      const one = await b.open(key);
      const two = await b.open(key);
      try {
        for (let pair = 0; pair < 30; pair++) {
          const input: CommitInput = {
            kind: 'json',
            id: 'race',
            expected_version: pair,
            body: { pair },
            write_id: `w-${pair}`,
          };
          const results = await Promise.all([one.docs.commit(input), two.docs.commit(input)]);
          expect(results.map((r) => r.version)).toEqual([pair + 1, pair + 1]);
          expect(results.filter((r) => !r.replayed)).toHaveLength(1);
          expect(results.map((r) => r.body)).toEqual([{ pair }, { pair }]);
        }
        const history = await one.docs.history({ kind: 'json', id: 'race', limit: 100 });
        expect(history.entries).toHaveLength(30);
        expect((await one.events.verify()).ok).toBe(true);
      } finally {
        await one.close();
        await two.close();
      }
    });

    it('a write id reused for another change still conflicts, racing or not', async () => {
      const key = `reuse-${Math.random().toString(36).slice(2)}`;
      const one = await b.open(key);
      const two = await b.open(key);
      try {
        const results = await Promise.allSettled([
          one.docs.commit({ kind: 'json', id: 'r', expected_version: 0, body: { a: 1 }, write_id: 'w' }),
          two.docs.commit({ kind: 'json', id: 'r', expected_version: 0, body: { a: 2 }, write_id: 'w' }),
        ]);
        expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
        const lost = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
        expect(lost.reason).toMatchObject({ code: 'STATE_CONFLICT' });
      } finally {
        await one.close();
        await two.close();
      }
    });
  });
}

describe('hostile input through the CLI', () => {
  const inst = join(dir, 'cli');
  const cli = (args: string[], input?: string) => runCli(['--dir', inst, ...args], {}, input);
  runCli(['--dir', inst, 'init']);

  it('annotate {"keep":1e400} is refused (exit 2) and keeps the key', () => {
    const id = (cli(['enqueue', 't', '--json']).json as { id: string }).id;
    expect(cli(['annotate', id, '{"keep":1}']).code).toBe(0);
    const r = cli(['annotate', id, '{"keep":1e400}', '--json']);
    expect(r.code).toBe(2);
    expect(r.errorJson).toMatchObject({ error: { code: 'INVALID_INPUT', field: 'notes', pointer: '/keep' } });
    expect((cli(['get', id, '--json']).json as { notes: unknown }).notes).toEqual({ keep: 1 });
  });

  it('-0 and __proto__ in a body from stdin are refused, nothing committed', () => {
    for (const text of ['{"a":-0}', '{"a":-0.0}', '{"__proto__":{"x":1}}', '{"a":[1,{"constructor":2}]}']) {
      const r = cli(['state', 'commit', 'json', 'm', '--expect', '0', '--body', '-', '--json'], text);
      expect(r.code, text).toBe(2);
      expect(r.errorJson).toMatchObject({ error: { code: 'INVALID_INPUT' } });
    }
    expect(cli(['state', 'get', 'json', 'm']).code).toBe(1);
  });

  it('a JSON Patch through __proto__ exits 2 with a typed error, not 10', () => {
    expect(cli(['state', 'commit', 'json', 'p', '--expect', '0', '--body', '-'], '{"a":1}').code).toBe(0);
    const r = cli(
      ['state', 'commit', 'json', 'p', '--expect', '1', '--patch', '-', '--json'],
      '[{"op":"add","path":"/__proto__/x","value":1}]',
    );
    expect(r.code).toBe(2);
    expect(r.errorJson).toMatchObject({ error: { code: 'INVALID_INPUT', field: 'json_patch' } });
  });

  it('durations and times that used to end in exit 10 are INVALID_INPUT naming the option', () => {
    for (const args of [
      ['retro', '--since', '9999999999999999999999999d'],
      ['events', '--since', '99999999999999999999d'],
      ['events', '--since', '2026-02-30'],
      ['enqueue', 'x', '--not-before', '2026-02-30'],
      ['claim', '--lease', '30'],
      ['claim', '--lease', 'forever'],
    ]) {
      const r = cli([...args, '--json']);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.errorJson, args.join(' ')).toMatchObject({ error: { code: 'INVALID_INPUT' } });
    }
    expect(cli(['events', '--since', '1.5ms']).code).toBe(0);
  });

  it('instance import of a dump with a body nested 100k deep is INVALID_INPUT naming the line, and creates nothing', () => {
    const src = join(dir, 'dump-src');
    expect(runCli(['--dir', src, 'init']).code).toBe(0);
    expect(
      runCli(['--dir', src, 'state', 'commit', 'json', 'doc', '--expect', '0', '--body', '-'], {}, '{"x":1}')
        .code,
    ).toBe(0);
    const dump = join(dir, 'dump.jsonl');
    expect(runCli(['--dir', src, 'instance', 'export', dump]).code).toBe(0);
    const d = 100_000;
    const deep = `${'{"a":'.repeat(d)}1${'}'.repeat(d)}`;
    const text = readFileSync(dump, 'utf8')
      .split('\n')
      .map((l) =>
        l.includes('"t":"document"') || l.includes('"t":"history"') ? l.replace('{"x":1}', deep) : l,
      )
      .join('\n');
    writeFileSync(join(dir, 'deep.jsonl'), text);
    const target = join(dir, 'dump-target');
    const r = runCli(['--dir', target, 'instance', 'import', join(dir, 'deep.jsonl'), '--json']);
    expect(r.code).toBe(2);
    expect(r.errorJson).toMatchObject({ error: { code: 'INVALID_INPUT', line: 3 } });
    expect(existsSync(target)).toBe(false);
  });

  it('validate of a file nested 100k deep is refused quickly with exit 2', () => {
    const project = join(dir, 'deep');
    const d = 100_000;
    const path = join(project, '.copilot', 'state', 'w.json');
    runCli(['--dir', inst, 'init']);
    mkdirSync(join(project, '.copilot', 'state'), { recursive: true });
    writeFileSync(path, `${'{"a":'.repeat(d)}1${'}'.repeat(d)}`);
    const r = runCli(['--dir', inst, 'validate', path, '--project', project, '--json']);
    expect(r.code).toBe(2);
    expect(r.stdout + r.stderr).toMatch(/nested deeper than 256 levels/);
    const yamlPath = join(project, '.aios', 'deep-state.yaml');
    mkdirSync(join(project, '.aios'), { recursive: true });
    writeFileSync(yamlPath, `${'['.repeat(d)}${']'.repeat(d)}`);
    const y = runCli(['--dir', inst, 'validate', yamlPath, '--project', project, '--json']);
    expect(y.code).toBe(2);
  });
});
