// Kinds declare their operations of the service table, and the table serves whatever they declare (issue 44):
// the built-in kinds' list is their own declarations, and a kind registered later adds its operations to the
// table — found by name, run through the edge pipeline, in its group, on the HTTP routes of a server made
// after it — or is refused whole (INVALID_INPUT, the kind not registered) when one cannot be served.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inputSchema } from '../../src/core/json-schema.js';
import type { ServiceOperation } from '../../src/core/kind.js';
import { isAgentStateError } from '../../src/errors.js';
import { operationRoutes } from '../../src/http/routes.js';
import { type Instance, openInstance } from '../../src/instance/instance.js';
import { getKind, kindNames, registerKind } from '../../src/kinds/registry.js';
import { KIND_SERVICE_OPERATIONS } from '../../src/kinds/service-operations.js';
import { callOperation } from '../../src/service/edge.js';
import { getOperation, OPERATION_NAMES, OPERATIONS } from '../../src/service/table.js';
import { refusal } from '../helpers/refusals.js';
import { tempDir } from '../helpers/tmp.js';

const dir = tempDir();
let inst: Instance;
beforeAll(async () => {
  inst = await openInstance({ dir, name: 'kinds-ops', create: true });
});
afterAll(() => inst.close());

type Op = ServiceOperation<never, never>;

/** An operation of a kind of the test's: counts the documents of its kind. */
const countNotes = (name: string, group: Op['group'] = 'documents'): Op =>
  ({
    name,
    group,
    description: 'How many notes there are.',
    input: inputSchema({ prefix: { type: 'name' } }),
    output: { type: 'integer' },
    writes: false,
    run: async (i: Instance, input: { prefix?: string }) =>
      (await i.docs.list({ kind: 'note-k' })).filter((d) => d.id.startsWith(input.prefix ?? '')).length,
  }) as unknown as Op;

const noteKind = (ops: Op[]) => ({
  name: 'note-k',
  description: 'a note',
  schema: { type: 'object', properties: { text: { type: 'string' } } },
  serviceOperations: ops,
});

describe('the operations kinds declare', () => {
  it('the built-in list is the built-in kinds’ own declarations, each once', () => {
    const declared = kindNames().flatMap((k) => getKind(k).serviceOperations ?? []);
    expect(new Set(declared)).toEqual(new Set(KIND_SERVICE_OPERATIONS));
    expect(declared.length).toBe(KIND_SERVICE_OPERATIONS.length);
    for (const op of declared) expect(getOperation(op.name)).toBe(op);
  });

  it('a kind registered later adds its operations: by name, in its group, run, routed', async () => {
    registerKind(noteKind([countNotes('count_notes')]));
    const op = getOperation('count_notes');
    expect(OPERATION_NAMES).toContain('count_notes');
    // In its group's slot: right after `apply`, with the other kinds' documents operations.
    const names = OPERATIONS.map((o) => o.name);
    expect(names.indexOf('count_notes')).toBeGreaterThan(names.indexOf('apply'));
    expect(names.indexOf('count_notes')).toBeLessThan(names.indexOf('validate_document'));
    await callOperation(inst, 'commit', {
      kind: 'note-k',
      id: 'a|1',
      expected_version: 0,
      body: { text: 'x' },
    });
    await callOperation(inst, 'commit', {
      kind: 'note-k',
      id: 'b+2',
      expected_version: 0,
      body: { text: 'y' },
    });
    expect(await callOperation(inst, op.name, { prefix: 'a' })).toBe(1);
    // Its input is checked like every operation's.
    const bad = await callOperation(inst, 'count_notes', { prefix: 5 }).catch((e) => e);
    expect(isAgentStateError(bad) && bad.code).toBe('INVALID_INPUT');
    expect(operationRoutes().map((r) => r.path)).toContain('/api/v1/count_notes');
  });

  it('registering the kind again replaces its operations', () => {
    registerKind(noteKind([countNotes('count_notes_v2')]));
    expect(OPERATION_NAMES).toContain('count_notes_v2');
    expect(OPERATION_NAMES).not.toContain('count_notes');
    registerKind(noteKind([]));
    expect(OPERATION_NAMES).not.toContain('count_notes_v2');
  });

  it('refuses a kind whose operation cannot be served, and registers none of it', () => {
    const before = [...OPERATION_NAMES];
    const cases: Array<[string, Op[]]> = [
      ['enqueue', [countNotes('enqueue')]],
      ['escalate', [countNotes('escalate')]],
      ['Bad-Name', [countNotes('Bad-Name')]],
      ['group', [countNotes('odd_group', 'nowhere' as Op['group'])]],
      ['twice', [countNotes('twice_op'), countNotes('twice_op')]],
      ['schema', [{ ...countNotes('plain_schema'), input: { type: 'object', properties: {} } } as Op]],
    ];
    for (const [label, ops] of cases) {
      const err = refusal(() => registerKind({ ...noteKind(ops), name: `bad-${label.toLowerCase()}` }));
      expect(isAgentStateError(err) && err.code, label).toBe('INVALID_INPUT');
      expect(err.details?.field, label).toBe('serviceOperations');
      expect(kindNames(), label).not.toContain(`bad-${label.toLowerCase()}`);
    }
    expect(OPERATION_NAMES).toEqual(before);
    // Two kinds cannot declare one name.
    registerKind({ ...noteKind([countNotes('shared_name')]), name: 'first-k' });
    const clash = refusal(() => registerKind({ ...noteKind([countNotes('shared_name')]), name: 'second-k' }));
    expect(isAgentStateError(clash) && clash.code).toBe('INVALID_INPUT');
    expect(kindNames()).not.toContain('second-k');
  });
});
