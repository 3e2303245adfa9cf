// Ids that become file names: the one rule (checkFileId), used by every kind with a file view and
// enforced by the store on commit and fork, so a path-like id is never stored (issue 10, hole 2).
import { afterAll, describe, expect, it } from 'vitest';
import { openInstance } from '../../src/instance/instance.js';
import { checkFileId, fileIdProblem, MAX_FILE_ID_BYTES } from '../../src/kinds/file-id.js';
import { getKind, kindNames, registerKind } from '../../src/kinds/registry.js';
import { tempDir } from '../helpers/tmp.js';

const HOSTILE = [
  '',
  '.',
  '..',
  '../../package',
  '../x',
  'a/b',
  '/etc/passwd',
  'a\\b',
  '..\\..\\package',
  'C:\\Windows\\x',
  '.hidden',
  'a..b',
  'x\u0000y',
  'tab\there',
  'new\nline',
  'del\u007f',
  'c1\u0085',
  'x'.repeat(MAX_FILE_ID_BYTES + 1),
  'é'.repeat(MAX_FILE_ID_BYTES / 2 + 1),
];
const FINE = [
  'deploy',
  'mission',
  'my mission=1',
  'greenfield-service-20260131-a1b2c3',
  'a.b',
  'é',
  'x'.repeat(128),
];

describe('checkFileId', () => {
  it.each(HOSTILE.map((id) => [JSON.stringify(id), id]))(
    'refuses %s with INVALID_INPUT naming id',
    (_, id) => {
      expect(fileIdProblem(id)).not.toBeNull();
      let err: { code?: string; details?: { field?: string } } = {};
      try {
        checkFileId(id, 'workflow-sessions');
      } catch (e) {
        err = e as typeof err;
      }
      expect(err.code).toBe('INVALID_INPUT');
      expect(err.details?.field).toBe('id');
    },
  );

  it.each(FINE)('accepts %s', (id) => {
    expect(fileIdProblem(id)).toBeNull();
    expect(() => checkFileId(id)).not.toThrow();
  });

  it('is the checkId of every built-in kind with a file view, and only of those', () => {
    for (const name of kindNames()) {
      const k = getKind(name);
      if (k.file) expect(() => k.checkId?.('../x'), name).toThrow(/path separator/);
      else expect(k.checkId, name).toBeUndefined();
    }
  });

  it('registerKind gives a kind with a file and no checkId the same rule', () => {
    registerKind({
      name: 'test-file-id',
      description: 'test kind with a file and no checkId',
      schema: { type: 'object' },
      file: {
        defaultPath: (id) => `.t/${id}.json`,
        idFromPath: () => null,
        parse: () => ({ body: {}, stamp: null }),
        render: () => '',
      },
    });
    expect(() => getKind('test-file-id').checkId?.('../../package')).toThrow(/not allowed/);
  });
});

describe('the store refuses a bad id of a file kind before writing anything', () => {
  const dir = tempDir('agentstate-file-id-');
  const opened = openInstance({ dir });
  afterAll(async () => (await opened).close());

  it('commit, apply and fork; the json kind (no file) still takes any name', async () => {
    const inst = await opened;
    const head = (await inst.events.read({ reverse: true, limit: 1 }))[0]?.position ?? 0;
    for (const id of ['../../package', '.hidden', 'a/b', 'a\\b']) {
      await expect(
        inst.docs.commit({ kind: 'workflow-sessions', id, expected_version: 0, body: {} }),
      ).rejects.toMatchObject({ code: 'INVALID_INPUT', details: { field: 'id' } });
      await expect(
        inst.docs.apply({ kind: 'aios-workflow', id, operation: 'init', args: {} }),
      ).rejects.toMatchObject({ code: 'INVALID_INPUT' });
      await expect(inst.docs.validate({ kind: 'grid-mission', id, body: {} })).rejects.toMatchObject({
        code: 'INVALID_INPUT',
        details: { field: 'id' },
      });
    }
    await inst.docs.commit({ kind: 'json', id: 'plain', expected_version: 0, body: { a: 1 } });
    await inst.docs.commit({ kind: 'json', id: '../not-a-file', expected_version: 0, body: { a: 1 } });
    const afterJson = (await inst.events.read({ reverse: true, limit: 1 }))[0]?.position ?? 0;
    expect(afterJson).toBe(head + 2);
    await expect(
      inst.docs.fork({ kind: 'json', id: 'plain', new_id: '../x', actor_kind: 'human' }),
    ).resolves.toMatchObject({ version: 1 });
    await inst.docs.apply({
      kind: 'workflow-sessions',
      id: 'deploy',
      operation: 'start-session',
      args: { label: 'x' },
      actor_kind: 'human',
    });
    await expect(
      inst.docs.fork({
        kind: 'workflow-sessions',
        id: 'deploy',
        new_id: '../../package',
        actor_kind: 'human',
      }),
    ).rejects.toMatchObject({ code: 'INVALID_INPUT', details: { field: 'id' } });
    expect((await inst.docs.list({ kind: 'workflow-sessions' })).map((d) => d.id)).toEqual(['deploy']);
    expect((await inst.docs.list({ kind: 'aios-workflow' })).length).toBe(0);
  });
});
