// Kind `aios-workflow`: the seed's example file, the YAML codec (comments kept, stamp, parse errors),
// every format and logical rule (one valid and one violating body each), and the operations.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { checkInput } from '../../src/core/input.js';
import type { FileStamp, KindFile, KindOperation } from '../../src/core/kind.js';
import type { JsonObject } from '../../src/core/types.js';
import type { ErrorCode } from '../../src/errors.js';
import type { AiosWorkflow } from '../../src/kinds/aios-workflow/kind.js';
import { aiosWorkflowKind } from '../../src/kinds/aios-workflow/kind.js';
import { newInstanceId } from '../../src/kinds/aios-workflow/operations.js';
import { validateSchema } from '../../src/kinds/registry.js';
import { clone, example, makeCtx, NOW, refusal } from './ctx.js';
import { expectRefused } from './expect-refusal.js';

const file = aiosWorkflowKind.file as KindFile;
const EXAMPLE_PATH = './examples/aios/greenfield-service-20260131-a1b2c3-state.yaml';
const exampleText = () => readFileSync(new URL(EXAMPLE_PATH, import.meta.url), 'utf8');
const seedBody = () => file.parse(exampleText()).body as unknown as AiosWorkflow;
const minimal = () => example('aios/minimal') as unknown as AiosWorkflow;
const j = (b: AiosWorkflow) => b as unknown as JsonObject;
const view = { now: NOW, recentEvents: [] };
const stampOf = (version: number): FileStamp => ({
  kind: 'aios-workflow',
  id: 'greenfield-service-20260131-a1b2c3',
  version,
});
const ctx = makeCtx({ kind: 'aios-workflow', id: 'greenfield-service-20260131-a1b2c3' });

/** What the store does: schema, then the kind's rules against the previous version. */
async function commit(next: AiosWorkflow, prev: AiosWorkflow | null = null): Promise<AiosWorkflow> {
  const body = clone(j(next));
  validateSchema(aiosWorkflowKind, body);
  await aiosWorkflowKind.check!(body, prev ? j(prev) : null, ctx);
  return body as unknown as AiosWorkflow;
}

describe('aios-workflow: the seed example', () => {
  it('parses (no stamp), validates clean, and has the seed values', async () => {
    const { body, stamp } = file.parse(exampleText());
    expect(stamp).toBeNull();
    await commit(body as unknown as AiosWorkflow);
    expect(body).toMatchObject({
      instance_id: 'greenfield-service-20260131-a1b2c3',
      current_step_index: 1,
      steps: [{ status: 'completed', artifacts_created: ['project-brief.md'] }, { status: 'in_progress' }],
    });
  });

  it('renders, and re-parses to the same body and the stamp it was rendered with', () => {
    const body = seedBody();
    const text = file.render(j(body), stampOf(3), view);
    expect(text.split('\n')[0]).toBe(
      '# agentstate: kind=aios-workflow id=greenfield-service-20260131-a1b2c3 version=3',
    );
    expect(file.parse(text)).toEqual({ body: j(body), stamp: stampOf(3) });
    // The seed's quoting of dates is kept (YAML 1.1 readers would otherwise see timestamps).
    expect(text).toContain('started_at: "2026-01-31T10:00:00Z"');
    expect(text).toContain('artifacts_created: [project-brief.md]');
  });

  it('a render over the original text keeps it byte for byte, with the stamp line added on top', () => {
    const original = exampleText();
    const text = file.render(j(seedBody()), stampOf(1), view, original);
    expect(text).toBe(
      `# agentstate: kind=aios-workflow id=greenfield-service-20260131-a1b2c3 version=1\n${original}`,
    );
    // Rendering again replaces the stamp rather than adding a second one.
    const again = file.render(j(seedBody()), stampOf(2), view, text);
    expect(again.match(/agentstate:/g)).toHaveLength(1);
    expect(file.parse(again).stamp).toEqual(stampOf(2));
  });

  it('a render over a commented file keeps the comments and key order where the data did not change', () => {
    const original = exampleText()
      .replace('status: active\n', 'status: active # paused on Fridays\n')
      .replace('artifacts:\n', '# every output, created or not\nartifacts:\n');
    const body = seedBody();
    body.steps[1]!.status = 'completed';
    body.steps[1]!.completed_at = '2026-01-31T15:00:00Z';
    body.updated_at = '2026-01-31T15:00:00Z';
    body.steps.push({ step_index: 2, phase: 'Architect: Design', status: 'pending', optional: true });
    const text = file.render(j(body), stampOf(2), view, original);
    expect(text).toContain('# Example state file of the AIOS workflow state schema 1.0.0');
    expect(text).toContain('status: active # paused on Fridays');
    expect(text).toContain('# every output, created or not\nartifacts:');
    expect(text).toContain('updated_at: "2026-01-31T15:00:00Z"');
    // The new field goes where the seed puts it (after started_at), not at the end of the step.
    expect(text).toContain(
      '    started_at: "2026-01-31T14:00:00Z"\n    completed_at: "2026-01-31T15:00:00Z"\n',
    );
    expect(text).toContain('\n  - step_index: 2\n    phase: "Architect: Design"\n');
    expect(file.parse(text).body).toEqual(j(body));
    // Removing data removes it, comments elsewhere stay.
    const fewer = clone(body);
    delete fewer.decisions;
    const t2 = file.render(j(fewer), stampOf(3), view, text);
    expect(t2).not.toContain('decisions:');
    expect(t2).toContain('# paused on Fridays');
    expect(file.parse(t2).body).toEqual(j(fewer));
  });

  it('a render over unusable previous text (broken YAML) falls back to a fresh file', () => {
    const text = file.render(j(seedBody()), stampOf(1), view, 'steps: [unclosed\n');
    expect(file.parse(text).body).toEqual(j(seedBody()));
  });

  it('maps paths to ids and back', () => {
    expect(file.defaultPath('greenfield-service-20260131-a1b2c3')).toBe(
      '.aios/greenfield-service-20260131-a1b2c3-state.yaml',
    );
    expect(file.idFromPath('.aios/greenfield-service-20260131-a1b2c3-state.yaml')).toBe(
      'greenfield-service-20260131-a1b2c3',
    );
    expect(file.idFromPath('/repo/.aios/x-20260101-abc-state.yaml')).toBe('x-20260101-abc');
    expect(file.idFromPath('.aios/x.yaml')).toBeNull();
    expect(file.idFromPath('.grid/STATE.md')).toBeNull();
  });
});

describe('aios-workflow: parse errors are INVALID_INPUT naming the line', () => {
  const cases: Array<[string, string, RegExp, number | undefined]> = [
    ['unclosed flow sequence', 'workflow_id: x\nsteps: [1, 2\nstatus: active\n', /line 3/, 3],
    ['duplicate key', 'workflow_id: a\nworkflow_id: b\n', /line 2, column 1: Map keys must be unique/, 2],
    ['bad indentation', 'a:\n  b: 1\n c: 2\n', /line \d+/, undefined],
    ['a list, not a mapping', '- a\n- b\n', /line 1: the document must be a YAML mapping/, 1],
    ['a scalar', 'just text\n', /must be a YAML mapping/, 1],
    ['empty', '', /no YAML document/, undefined],
    ['only comments', '# nothing\n', /no YAML document/, undefined],
    ['two documents', 'a: 1\n---\nb: 2\n', /multiple documents/i, undefined],
    [
      'NaN',
      'workflow_id: x\ncurrent_step_index: .nan\n',
      /\/current_step_index: NaN is not a JSON number/,
      undefined,
    ],
    [
      'malformed stamp',
      '# agentstate: kind=aios-workflow version=x\nworkflow_id: x\n',
      /line 1: malformed agentstate stamp/,
      1,
    ],
    [
      'NUL bytes',
      'workflow_id: x\n\u0000\u0000\u0000',
      /line 2, column 1: control character U\+0000: this is binary data/,
      2,
    ],
  ];
  it.each(cases)('%s', async (_label, text, message, line) => {
    const err = await refusal(() => file.parse(text));
    expect(err.code).toBe('INVALID_INPUT');
    expect(err.message).toMatch(message);
    if (line !== undefined) expect(err.details.line).toBe(line);
  });

  it('a real U+FFFD is a character (invalid UTF-8 is refused where bytes are read, by readViewFile)', () => {
    const { body } = file.parse('workflow_id: x\nworkflow_name: "bad \uFFFD byte"\n');
    expect(body.workflow_name).toBe('bad \uFFFD byte');
  });

  it('binary garbage (random bytes) is refused', async () => {
    const bytes = Buffer.alloc(4096);
    for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 7919 + 13) % 256;
    const err = await refusal(() => file.parse(bytes.toString('latin1')));
    expect(err.code).toBe('INVALID_INPUT');
    expect(err.message).toMatch(/binary data/);
  });

  it('huge input is refused before parsing', async () => {
    const err = await refusal(() => file.parse(`workflow_id: x\nnotes: "${'a'.repeat(5 * 1024 * 1024)}"\n`));
    expect(err.code).toBe('INVALID_INPUT');
    expect(err.message).toMatch(/larger than the 4194304 byte limit/);
  });

  it('an alias bomb is refused', async () => {
    const lines = ['a: &a [x, x, x, x, x, x, x, x, x, x]'];
    for (let k = 1; k < 12; k++) {
      const p = String.fromCharCode(97 + k - 1);
      lines.push(
        `${String.fromCharCode(97 + k)}: &${String.fromCharCode(97 + k)} [${Array(10).fill(`*${p}`).join(', ')}]`,
      );
    }
    const err = await refusal(() => file.parse(`${lines.join('\n')}\n`));
    expect(err.code).toBe('INVALID_INPUT');
  });

  it('fills the seed defaults of required fields the file leaves out', () => {
    const text = exampleText()
      .replace('target_context: core\n', '')
      .replace('status: active\n', '')
      .replace('current_step_index: 1\n', '');
    const { body } = file.parse(text);
    expect(body).toMatchObject({ target_context: 'core', status: 'active', current_step_index: 0 });
  });
});

// ---------------------------------------------------------------------------------------------------
// Rules: each case is a valid body and a violating one, refused naming the pointer and the rule.

type Mut = (b: AiosWorkflow) => void;
interface Case {
  rule: string;
  pointer: string;
  code?: ErrorCode;
  /** The previous version (for transition rules); the seed example by default when given. */
  prev?: Mut;
  good: Mut;
  bad: Mut;
}
const none: Mut = () => {};

const schemaCases: Case[] = [
  {
    rule: 'schema.required',
    pointer: '/workflow_name',
    good: none,
    bad: (b) => {
      delete (b as Partial<AiosWorkflow>).workflow_name;
    },
  },
  {
    rule: 'schema.enum',
    pointer: '/target_context',
    good: (b) => {
      b.target_context = 'hybrid';
      b.squad_name = 'ux';
    },
    bad: (b) => {
      (b as { target_context: string }).target_context = 'squadron';
    },
  },
  {
    rule: 'schema.enum',
    pointer: '/status',
    good: (b) => {
      b.status = 'paused';
    },
    bad: (b) => {
      (b as { status: string }).status = 'running';
    },
  },
  {
    rule: 'schema.enum',
    pointer: '/steps/1/status',
    good: none,
    bad: (b) => {
      (b.steps[1] as { status: string }).status = 'done';
    },
  },
  {
    rule: 'schema.enum',
    pointer: '/artifacts/1/status',
    good: none,
    bad: (b) => {
      (b.artifacts![1] as { status: string }).status = 'missing';
    },
  },
  {
    rule: 'instance-id-format',
    pointer: '/instance_id',
    good: none,
    bad: (b) => {
      b.instance_id = 'greenfield-service-a1b2c3';
    },
  },
  {
    rule: 'workflow-id-format',
    pointer: '/workflow_id',
    good: none,
    bad: (b) => {
      b.workflow_id = '../etc';
    },
  },
  {
    rule: 'iso-8601',
    pointer: '/started_at',
    good: none,
    bad: (b) => {
      b.started_at = 'yesterday';
    },
  },
  {
    rule: 'iso-8601',
    pointer: '/steps/0/completed_at',
    good: none,
    bad: (b) => {
      b.steps[0]!.completed_at = '31/01/2026 11:00';
    },
  },
  {
    rule: 'schema.minimum',
    pointer: '/current_step_index',
    good: none,
    bad: (b) => {
      b.current_step_index = -1;
    },
  },
  {
    rule: 'schema.additionalProperties',
    pointer: '/steps/0/owner',
    good: none,
    bad: (b) => {
      (b.steps[0] as unknown as Record<string, unknown>).owner = 'x';
    },
  },
  {
    rule: 'schema.required',
    pointer: '/decisions/0/decision',
    good: none,
    bad: (b) => {
      delete (b.decisions![0] as Partial<{ decision: string }>).decision;
    },
  },
];

const at = (b: AiosWorkflow, i: number) => b.steps[i]!;
const logicCases: Case[] = [
  {
    rule: 'instance-id-format',
    pointer: '/instance_id',
    good: none,
    bad: (b) => {
      b.instance_id = 'brownfield-20260131-a1b2c3';
    },
  },
  {
    rule: 'instance-id-format',
    pointer: '/instance_id',
    good: (b) => {
      b.instance_id = 'greenfield-service-20240229-ffffff';
    },
    bad: (b) => {
      b.instance_id = 'greenfield-service-20250229-ffffff';
    },
  },
  {
    rule: 'squad-name-required',
    pointer: '/squad_name',
    good: (b) => {
      b.target_context = 'squad';
      b.squad_name = 'payments';
    },
    bad: (b) => {
      b.target_context = 'squad';
    },
  },
  {
    rule: 'iso-8601',
    pointer: '/updated_at',
    good: none,
    bad: (b) => {
      b.updated_at = '2026-13-31T14:30:00Z';
    },
  },
  {
    rule: 'updated-at-latest',
    pointer: '/updated_at',
    good: none,
    bad: (b) => {
      b.updated_at = '2026-01-31T13:00:00Z';
    },
  },
  {
    rule: 'step-index-sequence',
    pointer: '/steps/1/step_index',
    good: none,
    bad: (b) => {
      at(b, 1).step_index = 2;
    },
  },
  {
    rule: 'current-step-index',
    pointer: '/current_step_index',
    good: none,
    bad: (b) => {
      b.current_step_index = 2;
    },
  },
  {
    rule: 'skip-only-optional',
    pointer: '/steps/0/status',
    good: (b) => {
      at(b, 0).optional = true;
      at(b, 0).status = 'skipped';
      delete at(b, 0).completed_at;
      delete b.artifacts;
    },
    bad: (b) => {
      at(b, 0).status = 'skipped';
      delete at(b, 0).completed_at;
      delete b.artifacts;
    },
  },
  {
    rule: 'step-started-at',
    pointer: '/steps/1/started_at',
    good: none,
    bad: (b) => {
      delete at(b, 1).started_at;
    },
  },
  {
    rule: 'step-completed-at',
    pointer: '/steps/0/completed_at',
    good: none,
    bad: (b) => {
      delete at(b, 0).completed_at;
    },
  },
  {
    rule: 'step-time-order',
    pointer: '/steps/0/completed_at',
    good: none,
    bad: (b) => {
      at(b, 0).completed_at = '2026-01-31T09:00:00Z';
    },
  },
  {
    rule: 'in-progress-is-current',
    pointer: '/steps/0/status',
    good: none,
    bad: (b) => {
      at(b, 0).status = 'in_progress';
      delete at(b, 0).completed_at;
    },
  },
  {
    rule: 'steps-before-current-done',
    pointer: '/steps/0/status',
    good: none,
    bad: (b) => {
      at(b, 0).status = 'pending';
      delete at(b, 0).completed_at;
      delete at(b, 0).started_at;
    },
  },
  {
    rule: 'steps-after-current-pending',
    pointer: '/steps/2/status',
    good: (b) => {
      b.steps.push({ step_index: 2, phase: 'Architect', status: 'pending' });
    },
    bad: (b) => {
      b.steps.push({ step_index: 2, phase: 'Architect', status: 'skipped', optional: true });
    },
  },
  {
    rule: 'workflow-completed-steps',
    pointer: '/steps/1/status',
    good: (b) => {
      at(b, 1).status = 'completed';
      at(b, 1).completed_at = '2026-01-31T14:30:00Z';
      b.status = 'completed';
    },
    bad: (b) => {
      b.status = 'completed';
    },
  },
  {
    rule: 'unique-ids',
    pointer: '/artifacts/1/name',
    good: none,
    bad: (b) => {
      b.artifacts![1]!.name = 'project-brief.md';
    },
  },
  {
    rule: 'artifact-step-ref',
    pointer: '/artifacts/1/created_by_step',
    good: none,
    bad: (b) => {
      b.artifacts![1]!.created_by_step = 7;
    },
  },
  {
    rule: 'artifact-created-by-started-step',
    pointer: '/artifacts/0/status',
    good: (b) => {
      b.steps.push({ step_index: 2, phase: 'Architect', status: 'pending' });
      b.artifacts!.push({ name: 'architecture.md', created_by_step: 2, status: 'pending' });
    },
    bad: (b) => {
      b.steps.push({ step_index: 2, phase: 'Architect', status: 'pending' });
      b.artifacts![0]!.created_by_step = 2;
    },
  },
  {
    rule: 'decision-step-ref',
    pointer: '/decisions/0/step_index',
    good: none,
    bad: (b) => {
      b.decisions![0]!.step_index = 9;
    },
  },
];

const transitionCases: Case[] = [
  {
    rule: 'identity-immutable',
    pointer: '/instance_id',
    prev: none,
    good: (b) => {
      b.current_phase = 'PM: Review PRD';
    },
    bad: (b) => {
      b.instance_id = 'greenfield-service-20260131-ffffff';
    },
  },
  {
    rule: 'status-transition',
    code: 'INVALID_TRANSITION',
    pointer: '/status',
    prev: (b) => {
      b.status = 'aborted';
    },
    good: (b) => {
      b.status = 'aborted';
      b.current_phase = 'aborted by the user';
    },
    bad: (b) => {
      b.status = 'active';
    },
  },
  {
    rule: 'status-transition',
    code: 'INVALID_TRANSITION',
    pointer: '/status',
    prev: (b) => {
      b.status = 'completed';
      at(b, 1).status = 'completed';
      at(b, 1).completed_at = '2026-01-31T14:30:00Z';
    },
    good: (b) => {
      b.status = 'completed';
      at(b, 1).status = 'completed';
      at(b, 1).completed_at = '2026-01-31T14:30:00Z';
      at(b, 1).notes = 'PRD approved';
    },
    bad: (b) => {
      b.status = 'paused';
      at(b, 1).status = 'completed';
      at(b, 1).completed_at = '2026-01-31T14:30:00Z';
    },
  },
  {
    rule: 'step-transition',
    code: 'INVALID_TRANSITION',
    pointer: '/steps/1/status',
    prev: none,
    good: (b) => {
      at(b, 1).status = 'completed';
      at(b, 1).completed_at = '2026-01-31T14:30:00Z';
    },
    bad: (b) => {
      at(b, 1).status = 'pending';
      delete at(b, 1).started_at;
    },
  },
  {
    rule: 'steps-not-removed',
    pointer: '/steps',
    prev: (b) => {
      b.steps.push({ step_index: 2, phase: 'Architect', status: 'pending' });
    },
    good: (b) => {
      b.steps.push({ step_index: 2, phase: 'Architect', status: 'pending', notes: 'next' });
    },
    bad: none,
  },
  {
    rule: 'step-final-frozen',
    pointer: '/steps/0',
    prev: none,
    good: (b) => {
      at(b, 0).notes = 'brief approved';
      at(b, 0).artifacts_created!.push('brief-summary.md');
    },
    bad: (b) => {
      at(b, 0).agent = 'pm';
    },
  },
  {
    rule: 'artifacts-not-removed',
    pointer: '/artifacts',
    prev: none,
    good: (b) => {
      b.artifacts![1]!.path = 'docs/prd-v2.md';
    },
    bad: (b) => {
      b.artifacts!.pop();
    },
  },
  {
    rule: 'artifact-transition',
    code: 'INVALID_TRANSITION',
    pointer: '/artifacts/0/status',
    prev: none,
    good: (b) => {
      b.artifacts![1]!.status = 'created';
    },
    bad: (b) => {
      b.artifacts![0]!.status = 'pending';
    },
  },
  {
    rule: 'decisions-append-only',
    pointer: '/decisions/0',
    prev: none,
    good: (b) => {
      b.decisions!.push({ step_index: 1, decision: 'PRD in one file', timestamp: '2026-01-31T14:10:00Z' });
    },
    bad: (b) => {
      b.decisions![0]!.rationale = 'rewritten';
    },
  },
];

function build(m: Mut): AiosWorkflow {
  const b = seedBody();
  m(b);
  return b;
}

describe('aios-workflow: format rules (schema)', () => {
  it.each(schemaCases.map((c) => [`${c.rule} at ${c.pointer}`, c] as const))('%s', async (_l, c) => {
    expect(() => validateSchema(aiosWorkflowKind, j(build(c.good)))).not.toThrow();
    await expectRefused(
      () => validateSchema(aiosWorkflowKind, j(build(c.bad))),
      'VALIDATION_FAILED',
      c.pointer,
      c.rule,
    );
  });
});

describe('aios-workflow: logical rules', () => {
  it.each(logicCases.map((c) => [`${c.rule} at ${c.pointer}`, c] as const))('%s', async (_l, c) => {
    await commit(build(c.good));
    await expectRefused(() => commit(build(c.bad)), c.code ?? 'VALIDATION_FAILED', c.pointer, c.rule);
  });
});

describe('aios-workflow: rules across versions', () => {
  it.each(transitionCases.map((c) => [`${c.rule} at ${c.pointer}`, c] as const))('%s', async (_l, c) => {
    const prev = await commit(build(c.prev ?? none));
    await commit(build(c.good), prev);
    await expectRefused(() => commit(build(c.bad), prev), c.code ?? 'VALIDATION_FAILED', c.pointer, c.rule);
  });

  it('keeps updated_at current: a change that does not advance it gets the time of the write', async () => {
    const prev = seedBody();
    const next = j(clone(prev));
    next.current_phase = 'PM: Review';
    const later = makeCtx({ kind: 'aios-workflow', now: Date.parse('2026-02-01T08:00:00Z') });
    await aiosWorkflowKind.check!(next, j(prev), later);
    expect(next.updated_at).toBe('2026-02-01T08:00:00Z');
    // With a clock behind the data (skew), updated_at stays as it was rather than going back.
    const skewed = clone(prev);
    skewed.current_phase = 'PM: Review';
    expect((await commit(skewed, prev)).updated_at).toBe(prev.updated_at);
    // A writer that sets a later updated_at keeps it.
    const own = clone(prev);
    own.current_phase = 'PM: Review';
    own.updated_at = '2026-01-31T16:00:00Z';
    expect((await commit(own, prev)).updated_at).toBe('2026-01-31T16:00:00Z');
  });
});

// ---------------------------------------------------------------------------------------------------
// Operations

const op = (name: string): KindOperation => {
  const o = aiosWorkflowKind.operations!.find((x) => x.name === name);
  if (!o) throw new Error(`no operation ${name}`);
  return o;
};
let clock = Date.parse('2026-02-01T09:00:00Z');
/** Applies an operation and commits its result as the store would (schema + rules against the previous). */
async function run(
  name: string,
  body: AiosWorkflow | null,
  args: Record<string, unknown> = {},
): Promise<AiosWorkflow> {
  clock += 60_000;
  checkInput(name, args, op(name).input);
  const next = op(name).apply(body ? clone(j(body)) : null, args, { now: clock, actor: 'pm', role: null });
  return commit(next as unknown as AiosWorkflow, body);
}

describe('aios-workflow: operations (cli aios)', () => {
  it('are exposed under `agentstate aios`', () => {
    expect(aiosWorkflowKind.cli).toBe('aios');
    expect(aiosWorkflowKind.operations!.map((o) => o.name)).toEqual([
      'init',
      'start-step',
      'complete-step',
      'skip-step',
      'register-artifact',
      'log-decision',
      'set-status',
    ]);
  });

  it('run a workflow from init to completed: start, decide, register, complete, skip an optional step', async () => {
    let w = await run('init', null, {
      workflow_id: 'brownfield-fix',
      workflow_name: 'Brownfield Fix',
      instance_id: 'brownfield-fix-20260201-0f9e8d',
      target_context: 'squad',
      squad_name: 'payments',
      steps: [
        { phase: 'Analyst: Triage', agent: 'analyst', action: 'creates: triage.md' },
        { phase: 'Brainstorm', agent: 'analyst', optional: true },
        'Dev: Fix',
      ],
    });
    expect(w).toMatchObject({ status: 'active', current_step_index: 0, current_phase: 'Analyst: Triage' });
    expect(w.steps.map((s) => s.status)).toEqual(['pending', 'pending', 'pending']);

    w = await run('start-step', w, { session_id: 'session-abc' });
    expect(w.steps[0]).toMatchObject({ status: 'in_progress', session_id: 'session-abc' });
    w = await run('register-artifact', w, { name: 'triage.md', path: 'docs/triage.md' });
    expect(w.artifacts).toEqual([
      { name: 'triage.md', created_by_step: 0, path: 'docs/triage.md', status: 'pending' },
    ]);
    w = await run('log-decision', w, { decision: 'Fix in place', rationale: 'small blast radius' });
    expect(w.decisions).toEqual([
      { step_index: 0, decision: 'Fix in place', rationale: 'small blast radius', timestamp: w.updated_at },
    ]);
    w = await run('complete-step', w, { artifacts: ['triage.md'], notes: 'done' });
    expect(w.steps[0]).toMatchObject({
      status: 'completed',
      artifacts_created: ['triage.md'],
      notes: 'done',
    });
    expect(w.artifacts![0]!.status).toBe('created');
    expect(w).toMatchObject({ current_step_index: 1, current_phase: 'Brainstorm' });

    w = await run('skip-step', w, { reason: 'requirements are clear' });
    expect(w.steps[1]).toMatchObject({ status: 'skipped', notes: 'requirements are clear' });
    expect(w.current_step_index).toBe(2);

    // The last step is not optional: skipping it is refused, naming the rule.
    await expectRefused(
      () => run('skip-step', w, { reason: 'lazy' }),
      'VALIDATION_FAILED',
      '/steps/2/status',
      'skip-only-optional',
    );
    // Completing a step that has not started is an invalid transition.
    await expectRefused(
      () => run('complete-step', w),
      'INVALID_TRANSITION',
      '/steps/2/status',
      'step-transition',
    );

    w = await run('start-step', w, { step: 2 });
    w = await run('complete-step', w);
    expect(w).toMatchObject({ status: 'completed', current_step_index: 2 });
    await expectRefused(() => run('start-step', w), 'INVALID_TRANSITION', '/status', 'status-transition');
  });

  it('set-status pauses and resumes; a step operation resumes a paused workflow', async () => {
    let w = await run('set-status', seedBody(), { status: 'paused' });
    expect(w.status).toBe('paused');
    w = await run('set-status', w, { status: 'active' });
    w = await run('set-status', w, { status: 'paused' });
    // Completing the last step of a paused workflow resumes it and completes it.
    w = await run('complete-step', w, { artifacts: ['prd.md'] });
    expect(w.status).toBe('completed');
    expect(w.artifacts!.find((a) => a.name === 'prd.md')!.status).toBe('created');
    // A finished step may still gain artifacts it produced.
    w = await run('register-artifact', w, { name: 'arch.md', step: 1, status: 'created' });
    expect(w.steps[1]!.artifacts_created).toEqual(['prd.md', 'arch.md']);
    await expectRefused(
      () => run('set-status', w, { status: 'active' }),
      'INVALID_TRANSITION',
      '/status',
      'status-transition',
    );
  });

  it('refuse bad calls with typed errors', async () => {
    const w = seedBody();
    expect((await refusal(() => run('start-step', null))).code).toBe('NOT_FOUND');
    const initArgs = { workflow_id: 'x', workflow_name: 'x', instance_id: 'x-20260101-abc', steps: ['a'] };
    expect((await refusal(() => run('init', w, initArgs))).details).toMatchObject({ field: 'instance_id' });
    expect((await refusal(() => run('init', null, { ...initArgs, steps: [] }))).details).toMatchObject({
      field: 'steps',
    });
    expect((await refusal(() => run('init', null, { ...initArgs, instance_id: undefined }))).message).toMatch(
      /instance_id is required/,
    );
    expect((await refusal(() => run('complete-step', w, { step: 0 }))).details).toMatchObject({
      field: 'step',
    });
    await expectRefused(
      () => run('start-step', w),
      'INVALID_TRANSITION',
      '/steps/1/status',
      'step-transition',
    );
    await expectRefused(
      () => run('register-artifact', w, { name: 'project-brief.md', status: 'pending' }),
      'INVALID_TRANSITION',
      '/artifacts/0/status',
      'artifact-transition',
    );
  });

  it('init derives the instance id {workflow_id}-YYYYMMDD-{6 hex} from its inputs (pure)', () => {
    const a = newInstanceId('greenfield-service', { now: Date.parse('2026-01-31T10:00:00Z'), actor: 'pm' });
    expect(a).toMatch(/^greenfield-service-20260131-[0-9a-f]{6}$/);
    expect(
      newInstanceId('greenfield-service', { now: Date.parse('2026-01-31T10:00:00Z'), actor: 'pm' }),
    ).toBe(a);
  });

  it('the example with a squad context validates', async () => {
    await commit(minimal());
  });
});
