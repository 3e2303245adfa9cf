// Files as views, on a small test kind with a JSON file: export/import round trips, conflicting edits,
// validation, recovery from each source, watch, and refusal of garbage files.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { JsonObject } from '../../src/core/types.js';
import { openInstance } from '../../src/instance/instance.js';
import { targetFor, targetOfPath } from '../../src/views/files.js';
import { recoverView } from '../../src/views/recover.js';
import { checkpointPath, exportView, importView } from '../../src/views/sync.js';
import { validateView } from '../../src/views/validate.js';
import { watchView } from '../../src/views/watch.js';
import { file, fresh, inst, project, target } from './todo-fixture.js';

const readJson = () => JSON.parse(readFileSync(file(), 'utf8')) as JsonObject;

describe('export and import', () => {
  it('export writes the file stamped with the version; a hand edit imports as the next version', async () => {
    await fresh();
    await inst.docs.commit({ kind: 'test-todo', id: 'plan', expected_version: 0, body: { items: ['a'] } });
    const e = await exportView(inst, target());
    expect(e).toMatchObject({ version: 1, written: true, path: file() });
    expect(readJson()).toEqual({ $agentstate: { kind: 'test-todo', id: 'plan', version: 1 }, items: ['a'] });
    expect((await exportView(inst, target())).written).toBe(false);
    expect(existsSync(checkpointPath(file()))).toBe(true);

    writeFileSync(file(), JSON.stringify({ ...readJson(), items: ['a', 'b'] }));
    const r = await importView(inst, targetOfPath('.todo/plan.json', project));
    expect(r).toMatchObject({ version: 2, changed: true });
    expect((await inst.docs.get({ kind: 'test-todo', id: 'plan' })).body).toEqual({ items: ['a', 'b'] });
    expect((readJson().$agentstate as { version: number }).version).toBe(2);
  });

  it('two agents editing the same export: one wins, the other gets a conflict with both diffs, nothing lost', async () => {
    await fresh();
    await inst.docs.commit({ kind: 'test-todo', id: 'plan', expected_version: 0, body: { items: ['a'] } });
    await exportView(inst, target());
    const exported = readFileSync(file(), 'utf8');
    // Agent A edits and imports.
    writeFileSync(file(), JSON.stringify({ ...JSON.parse(exported), items: ['a', 'from-A'] }));
    await importView(inst, target());
    // Agent B edited its copy of the same export.
    const bText = JSON.stringify({ ...JSON.parse(exported), items: ['a'], phase: 'from-B' });
    writeFileSync(file(), bText);
    let err: { code?: string; message?: string; details?: Record<string, unknown> } = {};
    try {
      await importView(inst, target());
    } catch (e) {
      err = e as typeof err;
    }
    expect(err.code).toBe('STATE_CONFLICT');
    expect(err.details).toMatchObject({ expected: 1, actual: 2 });
    expect(err.message).toMatch(/Changed in the store since version 1:\n {2}\+ \/items\/1 = "from-A"/);
    expect(err.message).toMatch(/Changed in your file:\n {2}\+ \/phase = "from-B"/);
    // A's change is kept; B's file is left as B wrote it.
    expect((await inst.docs.get({ kind: 'test-todo', id: 'plan' })).body).toEqual({ items: ['a', 'from-A'] });
    expect(readFileSync(file(), 'utf8')).toBe(bText);
  });

  it('an invalid edit is refused naming field and rule, and the store is unchanged', async () => {
    await fresh();
    await inst.docs.commit({ kind: 'test-todo', id: 'plan', expected_version: 0, body: { items: ['a'] } });
    await exportView(inst, target());
    writeFileSync(file(), JSON.stringify({ ...readJson(), items: ['a', ' '] }));
    await expect(importView(inst, target())).rejects.toMatchObject({
      code: 'VALIDATION_FAILED',
      details: { pointer: '/items', rule: 'no-blank-items' },
    });
    expect((await inst.docs.get({ kind: 'test-todo', id: 'plan' })).version).toBe(1);
  });

  it('garbage files are refused with a clear error and nothing is written', async () => {
    await fresh();
    mkdirSync(join(project, '.todo'), { recursive: true });
    const cases: Array<[string, Buffer | string, RegExp]> = [
      ['malformed', '{"items": [', /not JSON/],
      ['binary', Buffer.from([0x7b, 0x00, 0xff, 0x10]), /binary/],
      ['huge', `{"items":["${'x'.repeat(5 * 1024 * 1024)}"]}`, /larger than/],
    ];
    for (const [id, content, message] of cases) {
      writeFileSync(join(project, `.todo/${id}.json`), content);
      await expect(importView(inst, targetFor('test-todo', id, project))).rejects.toThrow(message);
      expect(await inst.docs.find('test-todo', id)).toBeNull();
    }
    expect((await inst.events.head())?.position ?? 0).toBe(0);
  });
});

describe('validate', () => {
  it('checks a file without touching the store', async () => {
    await fresh();
    mkdirSync(join(project, '.todo'), { recursive: true });
    writeFileSync(file(), JSON.stringify({ items: ['x'] }));
    expect(await validateView(targetOfPath(file(), project))).toMatchObject({
      ok: true,
      kind: 'test-todo',
      id: 'plan',
    });
    writeFileSync(file(), JSON.stringify({ items: ['x'], extra: 1 }));
    const bad = await validateView(targetOfPath(file(), project));
    expect(bad).toMatchObject({ ok: false, error: { code: 'VALIDATION_FAILED', pointer: '/extra' } });
    expect(await inst.docs.find('test-todo', 'plan')).toBeNull();
  });
});

describe('recover', () => {
  it('from the store, else the checkpoint, else git — and says which; never a silent reset', async () => {
    await fresh();
    await inst.docs.commit({ kind: 'test-todo', id: 'plan', expected_version: 0, body: { items: ['s'] } });
    await exportView(inst, target());
    expect((await recoverView(inst, target())).source).toBe('none');
    writeFileSync(file(), '{ corrupted');
    expect(await recoverView(inst, target())).toMatchObject({ source: 'store', version: 1 });
    expect(readJson().items).toEqual(['s']);

    // A store that never had the document: the checkpoint next to the file.
    const other = await openInstance({ dir: `${project}-other` });
    try {
      writeFileSync(file(), 'garbage');
      expect(await recoverView(other, target())).toMatchObject({ source: 'checkpoint', version: 1 });
      expect(readJson().items).toEqual(['s']);

      // No checkpoint either: git history.
      execFileSync('git', ['init', '-q'], { cwd: project });
      execFileSync('git', ['add', '.todo/plan.json'], { cwd: project });
      execFileSync('git', ['-c', 'user.email=t@t', '-c', 'user.name=t', 'commit', '-qm', 'state'], {
        cwd: project,
      });
      writeFileSync(checkpointPath(file()), 'also garbage');
      writeFileSync(file(), 'garbage');
      const g = await recoverView(other, target());
      expect(g).toMatchObject({ source: 'git', version: 1 });
      expect(g.commit).toMatch(/^[0-9a-f]{40}$/);

      // Nothing valid anywhere: a typed error, and the file is left alone.
      const lonely = `${project}-lonely`;
      mkdirSync(join(lonely, '.todo'), { recursive: true });
      writeFileSync(join(lonely, '.todo/plan.json'), 'garbage');
      await expect(recoverView(other, targetFor('test-todo', 'plan', lonely))).rejects.toMatchObject({
        code: 'NOT_FOUND',
      });
      expect(readFileSync(join(lonely, '.todo/plan.json'), 'utf8')).toBe('garbage');
    } finally {
      await other.close();
    }
  });
});

describe('watch', () => {
  it('imports file edits and exports store commits until stopped', async () => {
    await fresh();
    await inst.docs.commit({ kind: 'test-todo', id: 'plan', expected_version: 0, body: { items: ['w'] } });
    const ac = new AbortController();
    const seen: string[] = [];
    const running = watchView(inst, target(), {
      signal: ac.signal,
      pollMs: 20,
      onEvent: (e) => seen.push(`${e.action}:${e.version}`),
    });
    // Waits for a condition; the 30 s bound only ends a wait that would never succeed.
    const until = async (pred: () => boolean | Promise<boolean>) => {
      for (let i = 0; i < 1500 && !(await pred()); i++) await new Promise((r) => setTimeout(r, 20));
    };
    await until(() => existsSync(file()));
    expect(readJson().items).toEqual(['w']);
    writeFileSync(file(), JSON.stringify({ ...readJson(), items: ['w', 'edited'] }));
    await until(async () => (await inst.docs.get({ kind: 'test-todo', id: 'plan' })).version === 2);
    await inst.docs.commit({
      kind: 'test-todo',
      id: 'plan',
      expected_version: 2,
      body: { items: ['from-store'] },
    });
    await until(() => JSON.stringify(readJson().items) === '["from-store"]');
    ac.abort();
    await running;
    expect(seen).toEqual(['exported:1', 'imported:2', 'exported:3']);
  });
});

describe('render_file (issue 25: the dashboard renders state files through the table)', () => {
  it('gives the text export writes, at any version, with nothing written; a kind without a file is refused', async () => {
    const { runOperation } = await import('../../src/service/invoke.js');
    await fresh();
    await inst.docs.commit({ kind: 'test-todo', id: 'plan', expected_version: 0, body: { items: ['a'] } });
    await inst.docs.commit({
      kind: 'test-todo',
      id: 'plan',
      expected_version: 1,
      body: { items: ['a', 'b'] },
    });
    const r = (await runOperation(inst, 'render_file', { kind: 'test-todo', id: 'plan' })) as {
      text: string;
      version: number;
      valid: boolean;
    };
    expect(r).toMatchObject({ kind: 'test-todo', id: 'plan', version: 2, valid: true });
    expect(existsSync(file())).toBe(false);
    await exportView(inst, target());
    expect(r.text).toBe(readFileSync(file(), 'utf8'));
    const v1 = (await runOperation(inst, 'render_file', { kind: 'test-todo', id: 'plan', version: 1 })) as {
      text: string;
    };
    expect(JSON.parse(v1.text)).toMatchObject({ $agentstate: { version: 1 }, items: ['a'] });
    await inst.docs.commit({ kind: 'json', id: 'j', expected_version: 0, body: {} });
    await expect(runOperation(inst, 'render_file', { kind: 'json', id: 'j' })).rejects.toMatchObject({
      code: 'INVALID_INPUT',
      details: { field: 'kind' },
    });
  });
});
