// Shared kind helpers: pointers, deep equality, changed paths, transitions, per-role field permissions
// (exercised with the Grid STATE.md permission matrix), append-only lists and schema rule annotations.
import { describe, expect, it } from 'vitest';
import type { JsonObject } from '../../src/core/types.js';
import {
  changedPaths,
  checkAppendOnly,
  checkFieldPermissions,
  checkTransition,
  deepEqual,
  forbiddenChanges,
  getAtPointer,
  isUnder,
  type PermissionMatrix,
  ptr,
  schemaRule,
  splitPointer,
  toPointer,
} from '../../src/kinds/rules.js';
import { expectRefused } from './expect-refusal.js';

describe('pointers and equality', () => {
  it('builds, splits and resolves escaped JSON pointers', () => {
    expect(ptr('a/b', 'c~d', 0)).toBe('/a~1b/c~0d/0');
    expect(splitPointer('/a~1b/c~0d/0')).toEqual(['a/b', 'c~d', '0']);
    expect(getAtPointer({ 'a/b': { 'c~d': ['x'] } }, '/a~1b/c~0d/0')).toBe('x');
    expect(getAtPointer({ a: [1] }, '/a/1')).toBeUndefined();
    expect(toPointer('agents.active')).toBe('/agents/active');
    expect(toPointer('/agents/active')).toBe('/agents/active');
    expect(isUnder('/agents/active/0', '/agents')).toBe(true);
    expect(isUnder('/agentsx', '/agents')).toBe(false);
  });

  it('deepEqual ignores key order, not array order', () => {
    expect(deepEqual({ a: 1, b: [1, { c: null }] }, { b: [1, { c: null }], a: 1 })).toBe(true);
    expect(deepEqual([1, 2], [2, 1])).toBe(false);
    expect(deepEqual({ a: 1 }, { a: 1, b: 2 })).toBe(false);
    expect(deepEqual(null, {})).toBe(false);
    expect(deepEqual(1, '1')).toBe(false);
  });

  it('changedPaths reports leaves of objects, whole arrays, and keys added or removed', () => {
    const prev: JsonObject = { status: 'x', agents: { active: [1], completed: [] }, gone: 1, n: null };
    const next: JsonObject = {
      status: 'x',
      agents: { active: [1, 2], completed: [] },
      added: { deep: true },
      n: {},
    };
    expect(changedPaths(prev, next).sort()).toEqual(['/added/deep', '/agents/active', '/gone', '/n']);
  });
});

describe('checkTransition', () => {
  const table = { open: ['done'], done: [] };
  it('allows table moves, staying put and allowed initial states', () => {
    expect(() => checkTransition(table, 'open', 'done', { pointer: '/s' })).not.toThrow();
    expect(() => checkTransition(table, 'done', 'done', { pointer: '/s' })).not.toThrow();
    expect(() => checkTransition(table, null, 'open', { pointer: '/s', initial: ['open'] })).not.toThrow();
  });
  it('refuses other moves with from, to, pointer and rule', async () => {
    const d = await expectRefused(
      () => checkTransition(table, 'done', 'open', { pointer: '/s', rule: 'my-rule' }),
      'INVALID_TRANSITION',
      '/s',
      'my-rule',
    );
    expect(d).toMatchObject({ from: 'done', to: 'open' });
    await expectRefused(
      () => checkTransition(table, null, 'done', { pointer: '/s', initial: ['open'] }),
      'INVALID_TRANSITION',
      '/s',
      'status-transition',
    );
    await expectRefused(
      () => checkTransition(table, 'open', 'nope', { pointer: '/s' }),
      'INVALID_TRANSITION',
      '/s',
      'status-transition',
    );
  });
});

describe('checkFieldPermissions (Grid STATE.md matrix)', () => {
  const GRID: PermissionMatrix = {
    mc: '*',
    executor: [
      'position',
      'agents.active',
      'agents.completed',
      'warnings',
      'resume.last_agent',
      'resume.last_commit',
    ],
    planner: ['phases.definitions', 'position', 'persistent.decisions', 'warnings'],
    recognizer: ['warnings', 'blockers'],
    scout: [],
    memory: ['persistent.decisions', 'persistent.artifacts', 'persistent.tech_stack'],
  };
  const prev: JsonObject = {
    status: 'in_progress',
    position: { phase: 1 },
    agents: { active: [], completed: [] },
    persistent: { decisions: [], artifacts: [] },
    warnings: [],
    blockers: [],
    updated_at: '2025-01-01T00:00:00Z',
  };
  const edit = (f: (b: JsonObject) => void) => {
    const b = structuredClone(prev);
    f(b);
    b.updated_at = '2025-01-01T01:00:00Z';
    return b;
  };
  const opts = (role: string | null) => ({ role, matrix: GRID, ignore: ['updated_at'] });

  it('allows the fields a role may write, including inside an allowed path', () => {
    const pos = edit((b) => {
      b.position = { phase: 2 };
    });
    expect(() => checkFieldPermissions(prev, pos, opts('executor'))).not.toThrow();
    const decided = edit((b) => {
      (b.persistent as JsonObject).decisions = ['use sqlite'];
    });
    expect(() => checkFieldPermissions(prev, decided, opts('planner'))).not.toThrow();
    const status = edit((b) => {
      b.status = 'complete';
    });
    expect(() => checkFieldPermissions(prev, status, opts('mc'))).not.toThrow();
  });

  it('refuses other fields with PERMISSION_DENIED naming the field and role', async () => {
    const status = edit((b) => {
      b.status = 'complete';
    });
    const d = await expectRefused(
      () => checkFieldPermissions(prev, status, opts('executor')),
      'PERMISSION_DENIED',
      '/status',
      'field-permission',
    );
    expect(d).toMatchObject({ role: 'executor', fields: ['/status'] });
    const artifacts = edit((b) => {
      (b.persistent as JsonObject).artifacts = ['x'];
    });
    await expectRefused(
      () => checkFieldPermissions(prev, artifacts, opts('planner')),
      'PERMISSION_DENIED',
      '/persistent/artifacts',
      'field-permission',
    );
    const warn = edit((b) => {
      b.warnings = ['w'];
    });
    await expectRefused(
      () => checkFieldPermissions(prev, warn, opts('scout')),
      'PERMISSION_DENIED',
      '/warnings',
      'field-permission',
    );
    await expectRefused(
      () => checkFieldPermissions(prev, warn, opts('stranger')),
      'PERMISSION_DENIED',
      '/warnings',
      'field-permission',
    );
    await expectRefused(
      () => checkFieldPermissions(prev, warn, opts(null)),
      'PERMISSION_DENIED',
      '/warnings',
      'field-permission',
    );
  });

  it('lists every forbidden change; a new document counts every field', () => {
    const many = edit((b) => {
      b.status = 'failed';
      b.blockers = ['b'];
      b.warnings = ['w'];
    });
    expect(forbiddenChanges(prev, many, opts('executor')).sort()).toEqual(['/blockers', '/status']);
    expect(forbiddenChanges(null, prev, opts('recognizer')).sort()).toEqual([
      '/agents/active',
      '/agents/completed',
      '/persistent/artifacts',
      '/persistent/decisions',
      '/position/phase',
      '/status',
    ]);
  });
});

describe('checkAppendOnly', () => {
  const prev = [{ id: 'a', v: 1 }];
  it('allows appending and refuses removing or changing', async () => {
    expect(() => checkAppendOnly(prev, [...prev, { id: 'b', v: 2 }], '/xs', 'xs-append-only')).not.toThrow();
    await expectRefused(
      () => checkAppendOnly(prev, [], '/xs', 'xs-append-only'),
      'VALIDATION_FAILED',
      '/xs',
      'xs-append-only',
    );
    await expectRefused(
      () =>
        checkAppendOnly(
          prev,
          [
            { id: 'b', v: 0 },
            { id: 'a', v: 9 },
          ],
          '/xs',
          'xs-append-only',
        ),
      'VALIDATION_FAILED',
      '/xs/1',
      'xs-append-only',
    );
    expect(() => checkAppendOnly(prev, [{ id: 'a', v: 9 }], '/xs', 'r', { frozen: false })).not.toThrow();
  });
});

describe('schemaRule', () => {
  it('reads the x-rule annotation of the schema node behind an ajv schemaPath', () => {
    const schema = {
      properties: { a: { $ref: '#/$defs/no' }, b: { type: 'string' } },
      $defs: { no: { 'x-rule': 'no-a', not: {} } },
    };
    expect(schemaRule(schema, '#/$defs/no/not')).toBe('no-a');
    expect(schemaRule(schema, '#/properties/b/type')).toBeUndefined();
    expect(schemaRule(schema, '#/nowhere/type')).toBeUndefined();
  });
});
