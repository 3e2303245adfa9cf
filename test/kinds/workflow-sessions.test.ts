// Kind `workflow-sessions`: the JSON codec (stamp round trip, parse errors), every format and logical
// rule (one valid and one violating body each), the append-only sessions, and the operations.
import { describe, expect, it } from 'vitest';
import { checkInput } from '../../src/core/input.js';
import type { FileStamp, KindFile, KindOperation } from '../../src/core/kind.js';
import type { JsonObject } from '../../src/core/types.js';
import type { ErrorCode } from '../../src/errors.js';
import { validateSchema } from '../../src/kinds/registry.js';
import { locateJsonError } from '../../src/kinds/workflow-sessions/file.js';
import {
  type Session,
  type WorkflowSessions,
  workflowSessionsKind,
} from '../../src/kinds/workflow-sessions/kind.js';
import { clone, example, makeCtx, refusal } from './ctx.js';
import { expectRefused } from './expect-refusal.js';

const kind = workflowSessionsKind;
const file = kind.file as KindFile;
const deploy = () => example('sessions/deploy') as unknown as WorkflowSessions;
const j = (b: WorkflowSessions) => b as unknown as JsonObject;
const view = { now: 0, recentEvents: [] };
const stamp: FileStamp = { kind: 'workflow-sessions', id: 'deploy', version: 7 };
const NOW = Date.parse('2026-02-03T12:00:00Z');
const ctx = makeCtx({ kind: 'workflow-sessions', id: 'deploy', now: NOW });

async function commit(
  next: WorkflowSessions,
  prev: WorkflowSessions | null = null,
): Promise<WorkflowSessions> {
  const body = clone(j(next));
  validateSchema(kind, body);
  await kind.check!(body, prev ? j(prev) : null, ctx);
  return body as unknown as WorkflowSessions;
}

describe('workflow-sessions: the file .copilot/state/<workflow>.json', () => {
  it('the example validates, renders with a $agentstate stamp first, and round-trips', async () => {
    await commit(deploy());
    const text = file.render(j(deploy()), stamp, view);
    expect(
      text.startsWith(
        '{\n  "$agentstate": {\n    "kind": "workflow-sessions",\n    "id": "deploy",\n    "version": 7\n  },\n  "workflow": "deploy",',
      ),
    ).toBe(true);
    expect(file.parse(text)).toEqual({ body: j(deploy()), stamp });
    // Rendering the parsed file again gives the same text (stable key order).
    expect(file.render(file.parse(text).body, stamp, view, text)).toBe(text);
  });

  it('a file before its first session (empty sessions, activeSessionId null) validates', async () => {
    await commit(example('sessions/empty') as unknown as WorkflowSessions);
  });

  it('a file never exported by agentstate parses with a null stamp', () => {
    expect(file.parse(JSON.stringify(deploy()))).toEqual({ body: j(deploy()), stamp: null });
  });

  it('maps paths to ids and back', () => {
    expect(file.defaultPath('deploy')).toBe('.copilot/state/deploy.json');
    expect(file.idFromPath('.copilot/state/deploy.json')).toBe('deploy');
    expect(file.idFromPath('/p/.copilot/state/release-2.json')).toBe('release-2');
    expect(file.idFromPath('.copilot/state/deploy.json.checkpoint')).toBeNull();
    expect(file.idFromPath('.aios/x-state.yaml')).toBeNull();
  });

  const bad: Array<[string, string, RegExp, number?]> = [
    [
      'a missing value',
      '{\n  "updatedAt": "x",\n  "sessions": \n}',
      /line 4, column 1: expected a value, found "}"/,
      4,
    ],
    ['a trailing comma', '{"sessions": [1,]}', /line 1, column 17: expected a value, found "]"/, 1],
    ['a missing colon', '{\n "a" 1}', /line 2, column 6: expected ':' after the property name/, 2],
    ['single quotes', "{'a': 1}", /line 1, column 2: expected a property name in double quotes/, 1],
    ['an unterminated string', '{"a": "abc', /line 1, column 7: unterminated string/, 1],
    ['truncated', '{"a": [1, 2', /line 1, column 12: unexpected end of input/, 1],
    ['trailing garbage', '{"a": 1} x', /unexpected "x" after the JSON value/, 1],
    ['an array', '[1, 2]', /the top level must be a JSON object/],
    ['empty', '  \n', /the file is empty/],
    [
      'a bad stamp',
      '{"$agentstate": {"kind": "workflow-sessions", "id": "d"}}',
      /\/\$agentstate needs a positive integer version/,
    ],
    [
      'a stamp with extra keys',
      '{"$agentstate": {"kind": "k", "id": "d", "version": 1, "x": 1}}',
      /unknown keys x/,
    ],
    [
      'NUL bytes',
      '{"a": 1}\n\u0000\u0000',
      /line 2, column 1: control character U\+0000: this is binary data/,
      2,
    ],
  ];
  it.each(bad)('refuses %s with INVALID_INPUT naming the line', async (_l, text, message, line) => {
    const err = await refusal(() => file.parse(text));
    expect(err.code).toBe('INVALID_INPUT');
    expect(err.message).toMatch(message);
    if (line !== undefined) expect(err.details.line).toBe(line);
  });

  it('refuses binary garbage and huge files', async () => {
    const bytes = Buffer.alloc(2048);
    for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 31 + 7) % 256;
    expect((await refusal(() => file.parse(bytes.toString('latin1')))).message).toMatch(/binary data/);
    const huge = `{"sessions": [${Array(300_000).fill('"0123456789abcdef"').join(',')}]}`;
    const err = await refusal(() => file.parse(huge));
    expect(err.code).toBe('INVALID_INPUT');
    expect(err.message).toMatch(/larger than the 4194304 byte limit/);
  });

  it('locates errors in deeply nested input without recursion', () => {
    expect(locateJsonError(`${'['.repeat(100_000)}x`)?.pos).toBe(100_000);
    expect(locateJsonError('{"a": [1, {"b": null}], "c": "\\u00e9"}')).toBeNull();
  });

  it('the schema refuses a $agentstate key inside a body', async () => {
    await expectRefused(
      () => validateSchema(kind, { ...j(deploy()), $agentstate: {} }),
      'VALIDATION_FAILED',
      '/$agentstate',
      'schema.additionalProperties',
    );
  });
});

// ---------------------------------------------------------------------------------------------------
// Rules

type Mut = (b: WorkflowSessions) => void;
interface Case {
  rule: string;
  pointer: string;
  code?: ErrorCode;
  /** For rules across versions: how to make the previous version from the example. */
  prev?: Mut;
  good: Mut;
  bad: Mut;
}
const none: Mut = () => {};
const s = (b: WorkflowSessions, i: number): Session => b.sessions[i]!;
const s3 = (b: WorkflowSessions) => s(b, 2);

const schemaCases: Case[] = [
  {
    rule: 'schema.required',
    pointer: '/sessions',
    good: none,
    bad: (b) => {
      delete (b as Partial<WorkflowSessions>).sessions;
    },
  },
  {
    rule: 'schema.enum',
    pointer: '/sessions/2/status',
    good: none,
    bad: (b) => {
      (s3(b) as { status: string }).status = 'paused';
    },
  },
  {
    rule: 'session-id-format',
    pointer: '/activeSessionId',
    good: none,
    bad: (b) => {
      b.activeSessionId = 'current';
    },
  },
  {
    rule: 'schema.enum',
    pointer: '/sessions/2/todos/1/status',
    good: none,
    bad: (b) => {
      (s3(b).todos[1] as { status: string }).status = 'doing';
    },
  },
  {
    rule: 'schema.enum',
    pointer: '/sessions/2/decisions/0/type',
    good: (b) => {
      s3(b).decisions![0]!.type = 'user-requirement';
    },
    bad: (b) => {
      (s3(b).decisions![0] as { type: string }).type = 'hack';
    },
  },
  {
    rule: 'schema.enum',
    pointer: '/sessions/0/lessonsLearned/0/category',
    good: (b) => {
      s(b, 0).lessonsLearned![0]!.category = 'security';
    },
    bad: (b) => {
      (s(b, 0).lessonsLearned![0] as { category: string }).category = 'gotcha';
    },
  },
  {
    rule: 'schema.enum',
    pointer: '/sessions/0/lessonsLearned/0/severity',
    good: (b) => {
      s(b, 0).lessonsLearned![0]!.severity = 'medium';
    },
    bad: (b) => {
      (s(b, 0).lessonsLearned![0] as { severity: string }).severity = 'critical';
    },
  },
  {
    rule: 'schema.enum',
    pointer: '/sessions/2/delegations/0/status',
    good: none,
    bad: (b) => {
      (s3(b).delegations![0] as { status: string }).status = 'running';
    },
  },
  {
    rule: 'schema.required',
    pointer: '/sessions/2/decisions/0/workaround',
    good: none,
    bad: (b) => {
      delete (s3(b).decisions![0] as { workaround?: boolean }).workaround;
    },
  },
  {
    rule: 'iso-8601',
    pointer: '/sessions/2/startedAt',
    good: none,
    bad: (b) => {
      s3(b).startedAt = 'this morning';
    },
  },
  {
    rule: 'schema.required',
    pointer: '/sessions/2/todos',
    good: none,
    bad: (b) => {
      delete (s3(b) as Partial<Session>).todos;
    },
  },
];

const logicCases: Case[] = [
  {
    rule: 'session-id-sequential',
    pointer: '/sessions/1/id',
    good: none,
    bad: (b) => {
      s(b, 1).id = 'session-5';
    },
  },
  {
    rule: 'previous-session-closed',
    pointer: '/sessions/1/status',
    good: none,
    bad: (b) => {
      s(b, 1).status = 'active';
      delete s(b, 1).endedAt;
      s3(b).status = 'abandoned';
      s3(b).endedAt = '2026-02-03T11:00:00Z';
      b.activeSessionId = 'session-2';
    },
  },
  {
    rule: 'one-active-session',
    pointer: '/sessions',
    good: none,
    bad: (b) => {
      s(b, 1).status = 'active';
      delete s(b, 1).endedAt;
    },
  },
  {
    rule: 'active-session-id',
    pointer: '/activeSessionId',
    good: (b) => {
      s3(b).status = 'abandoned';
      s3(b).endedAt = '2026-02-03T11:00:00Z';
      b.activeSessionId = null;
    },
    bad: (b) => {
      b.activeSessionId = 'session-1';
    },
  },
  {
    rule: 'session-ended-at',
    pointer: '/sessions/1/endedAt',
    good: none,
    bad: (b) => {
      delete s(b, 1).endedAt;
    },
  },
  {
    rule: 'session-ended-at',
    pointer: '/sessions/1/endedAt',
    good: none,
    bad: (b) => {
      s(b, 1).endedAt = '2026-02-02T08:00:00Z';
    },
  },
  {
    rule: 'session-complete-delegations',
    pointer: '/sessions/2/delegations/0/status',
    good: (b) => {
      s3(b).status = 'abandoned';
      s3(b).endedAt = '2026-02-03T11:00:00Z';
      b.activeSessionId = null;
    },
    bad: (b) => {
      s3(b).status = 'completed';
      s3(b).endedAt = '2026-02-03T11:00:00Z';
      b.activeSessionId = null;
    },
  },
  {
    rule: 'directives-carried-forward',
    pointer: '/sessions/2/directives',
    good: none,
    bad: (b) => {
      s3(b).directives = [];
    },
  },
  {
    rule: 'unique-ids',
    pointer: '/sessions/2/todos/2/id',
    good: (b) => {
      s3(b).todos[2]!.id = 'write-tests';
    },
    bad: (b) => {
      s3(b).todos[2]!.id = 2;
    },
  },
  {
    rule: 'workaround-fields-required',
    pointer: '/sessions/2/decisions/0/correct_solution',
    good: (b) => {
      Object.assign(s3(b).decisions![0]!, {
        workaround: true,
        correct_solution: 'OIDC provider',
        why_not_implemented: 'no budget',
        revisit_when: 'next quarter',
      });
    },
    bad: (b) => {
      s3(b).decisions![0]!.workaround = true;
    },
  },
  {
    rule: 'workaround-type-flag',
    pointer: '/sessions/2/decisions/0/workaround',
    good: (b) => {
      Object.assign(s3(b).decisions![0]!, {
        type: 'workaround',
        workaround: true,
        correct_solution: 'OIDC provider',
        why_not_implemented: 'no budget',
        revisit_when: 'next quarter',
      });
    },
    bad: (b) => {
      s3(b).decisions![0]!.type = 'workaround';
    },
  },
  {
    rule: 'blocker-resolution-required',
    pointer: '/sessions/2/blockers/1/resolution',
    good: none,
    bad: (b) => {
      delete s3(b).blockers![1]!.resolution;
    },
  },
  {
    rule: 'delegation-result-recorded',
    pointer: '/sessions/0/delegations/0/outputArtifacts',
    good: (b) => {
      s(b, 0).delegations![0]!.status = 'failed';
      delete s(b, 0).delegations![0]!.outputArtifacts;
    },
    bad: (b) => {
      delete s(b, 0).delegations![0]!.outputArtifacts;
    },
  },
  {
    rule: 'delegation-result-recorded',
    pointer: '/sessions/0/delegations/0/resultSummary',
    good: none,
    bad: (b) => {
      delete s(b, 0).delegations![0]!.resultSummary;
    },
  },
  {
    rule: 'directive-revoked-at',
    pointer: '/sessions/0/directives/1/revokedAt',
    good: none,
    bad: (b) => {
      delete s(b, 0).directives![1]!.revokedAt;
    },
  },
  {
    rule: 'iso-8601',
    pointer: '/sessions/2/blockers/0/raisedAt',
    good: none,
    bad: (b) => {
      s3(b).blockers![0]!.raisedAt = '2026-02-31T25:00:00Z';
    },
  },
  {
    rule: 'updated-at-latest',
    pointer: '/updatedAt',
    good: none,
    bad: (b) => {
      b.updatedAt = '2026-02-03T10:00:00Z';
    },
  },
];

const transitionCases: Case[] = [
  {
    rule: 'sessions-append-only',
    pointer: '/sessions',
    prev: none,
    good: (b) => {
      s3(b).currentPhase = 'test';
    },
    bad: (b) => {
      b.sessions.pop();
      b.activeSessionId = null;
    },
  },
  {
    rule: 'closed-session-frozen',
    pointer: '/sessions/0',
    prev: none,
    good: (b) => {
      s3(b).artifacts = ['src/auth/login.ts'];
    },
    bad: (b) => {
      s(b, 0).summary = 'rewritten history';
    },
  },
  {
    rule: 'session-transition',
    code: 'INVALID_TRANSITION',
    pointer: '/sessions/2/status',
    prev: (b) => {
      s3(b).status = 'abandoned';
      s3(b).endedAt = '2026-02-03T11:00:00Z';
      b.activeSessionId = null;
    },
    good: (b) => {
      s3(b).status = 'abandoned';
      s3(b).endedAt = '2026-02-03T11:00:00Z';
      b.activeSessionId = null;
    },
    bad: (b) => {
      b.activeSessionId = 'session-3';
    },
  },
  {
    rule: 'session-transition',
    code: 'INVALID_TRANSITION',
    pointer: '/sessions/3/status',
    prev: (b) => {
      s3(b).status = 'abandoned';
      s3(b).endedAt = '2026-02-03T11:00:00Z';
      b.activeSessionId = null;
    },
    good: (b) => {
      s3(b).status = 'abandoned';
      s3(b).endedAt = '2026-02-03T11:00:00Z';
      b.sessions.push({ ...newSession(4), directives: clone(s3(b).directives!) });
      b.activeSessionId = 'session-4';
    },
    bad: (b) => {
      s3(b).status = 'abandoned';
      s3(b).endedAt = '2026-02-03T11:00:00Z';
      b.sessions.push({
        ...newSession(4),
        directives: clone(s3(b).directives!),
        status: 'completed',
        endedAt: '2026-02-03T11:00:00Z',
      });
      b.activeSessionId = null;
    },
  },
  {
    rule: 'decisions-append-only',
    pointer: '/sessions/2/decisions/0',
    prev: none,
    good: (b) => {
      s3(b).decisions!.push({ type: 'user-requirement', description: 'Support SSO', workaround: false });
    },
    bad: (b) => {
      s3(b).decisions![0]!.description = 'Use cookies';
    },
  },
  {
    rule: 'lessons-append-only',
    pointer: '/sessions/2/lessonsLearned',
    prev: none,
    good: (b) => {
      s3(b).lessonsLearned!.push({ category: 'performance', summary: 'cache JWKS', severity: 'medium' });
    },
    bad: (b) => {
      s3(b).lessonsLearned = [];
    },
  },
  {
    rule: 'blocker-transition',
    code: 'INVALID_TRANSITION',
    pointer: '/sessions/2/blockers/1/status',
    prev: none,
    good: (b) => {
      Object.assign(s3(b).blockers![0]!, {
        status: 'resolved',
        resolvedAt: '2026-02-03T11:00:00Z',
        resolution: 'IdP is back',
      });
    },
    bad: (b) => {
      s3(b).blockers![1]!.status = 'open';
    },
  },
  {
    rule: 'blockers-append-only',
    pointer: '/sessions/2/blockers',
    prev: none,
    good: none,
    bad: (b) => {
      s3(b).blockers!.pop();
    },
  },
  {
    rule: 'delegation-transition',
    code: 'INVALID_TRANSITION',
    pointer: '/sessions/2/delegations/1/status',
    prev: (b) => {
      s3(b).delegations!.push({
        id: 'del-3',
        agent: 'docs',
        task: 'README',
        status: 'failed',
        startedAt: '2026-02-03T10:00:00Z',
        completedAt: '2026-02-03T10:10:00Z',
        resultSummary: 'crashed',
      });
    },
    good: (b) => {
      s3(b).delegations!.push({
        id: 'del-3',
        agent: 'docs',
        task: 'README',
        status: 'failed',
        startedAt: '2026-02-03T10:00:00Z',
        completedAt: '2026-02-03T10:10:00Z',
        resultSummary: 'crashed',
      });
      Object.assign(s3(b).delegations![0]!, {
        status: 'completed',
        completedAt: '2026-02-03T11:00:00Z',
        resultSummary: 'endpoint done',
        outputArtifacts: ['src/auth/refresh.ts'],
      });
    },
    bad: (b) => {
      s3(b).delegations!.push({
        id: 'del-3',
        agent: 'docs',
        task: 'README',
        status: 'in-progress',
        startedAt: '2026-02-03T10:00:00Z',
      });
    },
  },
  {
    rule: 'delegations-append-only',
    pointer: '/sessions/2/delegations/0',
    prev: none,
    good: none,
    bad: (b) => {
      s3(b).delegations![0]!.task = 'Something else';
    },
  },
  {
    rule: 'directive-transition',
    code: 'INVALID_TRANSITION',
    pointer: '/sessions/2/directives/1/status',
    prev: (b) => {
      s3(b).directives!.push({
        id: 'dir-3',
        text: 'Ask before deleting files',
        status: 'revoked',
        issuedAt: '2026-02-03T09:00:00Z',
        revokedAt: '2026-02-03T10:00:00Z',
      });
    },
    good: (b) => {
      s3(b).directives!.push({
        id: 'dir-3',
        text: 'Ask before deleting files',
        status: 'revoked',
        issuedAt: '2026-02-03T09:00:00Z',
        revokedAt: '2026-02-03T10:00:00Z',
      });
      Object.assign(s3(b).directives![0]!, { status: 'revoked', revokedAt: '2026-02-03T11:00:00Z' });
    },
    bad: (b) => {
      s3(b).directives!.push({
        id: 'dir-3',
        text: 'Ask before deleting files',
        status: 'active',
        issuedAt: '2026-02-03T09:00:00Z',
      });
    },
  },
  {
    rule: 'directives-append-only',
    pointer: '/sessions/2/directives/0',
    prev: none,
    good: none,
    bad: (b) => {
      s3(b).directives![0]!.text = 'Push wherever you like';
    },
  },
];

function newSession(n: number): Session {
  return {
    id: `session-${n}`,
    label: `task ${n}`,
    status: 'active',
    startedAt: '2026-02-03T11:00:00Z',
    todos: [],
  };
}

function build(m: Mut): WorkflowSessions {
  const b = deploy();
  m(b);
  return b;
}

describe('workflow-sessions: format rules (schema)', () => {
  it.each(schemaCases.map((c) => [`${c.rule} at ${c.pointer}`, c] as const))('%s', async (_l, c) => {
    expect(() => validateSchema(kind, j(build(c.good)))).not.toThrow();
    await expectRefused(() => validateSchema(kind, j(build(c.bad))), 'VALIDATION_FAILED', c.pointer, c.rule);
  });
});

describe('workflow-sessions: logical rules', () => {
  it.each(logicCases.map((c) => [`${c.rule} at ${c.pointer}`, c] as const))('%s', async (_l, c) => {
    await commit(build(c.good));
    await expectRefused(() => commit(build(c.bad)), c.code ?? 'VALIDATION_FAILED', c.pointer, c.rule);
  });
});

describe('workflow-sessions: rules across versions (sessions are never overwritten)', () => {
  it.each(transitionCases.map((c) => [`${c.rule} at ${c.pointer}`, c] as const))('%s', async (_l, c) => {
    const prev = await commit(build(c.prev ?? none));
    await commit(build(c.good), prev);
    await expectRefused(() => commit(build(c.bad), prev), c.code ?? 'VALIDATION_FAILED', c.pointer, c.rule);
  });

  it('a write that deletes a closed session, or all of them, is refused', async () => {
    const prev = deploy();
    const gone = deploy();
    gone.sessions = [];
    gone.activeSessionId = null;
    await expectRefused(() => commit(gone, prev), 'VALIDATION_FAILED', '/sessions', 'sessions-append-only');
    const middle = deploy();
    middle.sessions.splice(1, 1);
    await expectRefused(
      () => commit(middle, prev),
      'VALIDATION_FAILED',
      '/sessions/1/id',
      'sessions-append-only',
    );
    const reopened = deploy();
    s(reopened, 1).status = 'completed';
    await expectRefused(
      () => commit(reopened, prev),
      'INVALID_TRANSITION',
      '/sessions/1/status',
      'session-transition',
    );
    const relabelled = deploy();
    s(relabelled, 0).label = 'something nicer';
    await expectRefused(
      () => commit(relabelled, prev),
      'VALIDATION_FAILED',
      '/sessions/0',
      'closed-session-frozen',
    );
  });

  it('a new file may import closed sessions; a session appended to an existing file starts active', async () => {
    await commit(deploy());
    const prev = await commit(deploy());
    const next = deploy();
    s3(next).status = 'completed';
    s3(next).endedAt = '2026-02-03T11:00:00Z';
    Object.assign(s3(next).delegations![0]!, {
      status: 'completed',
      completedAt: '2026-02-03T11:00:00Z',
      resultSummary: 'done',
      outputArtifacts: [],
    });
    next.activeSessionId = 'session-4';
    next.sessions.push({ ...newSession(4), directives: clone(s3(next).directives!) });
    await commit(next, prev);
  });

  it('keeps updatedAt current, for the file and the active session', async () => {
    const prev = deploy();
    const next = deploy();
    s3(next).currentPhase = 'test';
    const stored = await commit(next, prev);
    expect(stored.updatedAt).toBe('2026-02-03T12:00:00Z');
    expect(s3(stored).updatedAt).toBe('2026-02-03T12:00:00Z');
    expect(s(stored, 0)).toEqual(s(prev, 0));
  });
});

// ---------------------------------------------------------------------------------------------------
// Operations

const op = (name: string): KindOperation => {
  const o = kind.operations!.find((x) => x.name === name);
  if (!o) throw new Error(`no operation ${name}`);
  return o;
};
let clock = Date.parse('2026-03-01T09:00:00Z');
async function run(
  name: string,
  body: WorkflowSessions | null,
  args: Record<string, unknown> = {},
): Promise<WorkflowSessions> {
  clock += 60_000;
  checkInput(name, args, op(name).input);
  const next = op(name).apply(body ? clone(j(body)) : null, args, {
    now: clock,
    actor: 'orchestrator',
    role: null,
  });
  const stored = clone(next);
  validateSchema(kind, stored);
  await kind.check!(stored, body ? j(body) : null, makeCtx({ kind: 'workflow-sessions', now: clock }));
  return stored as unknown as WorkflowSessions;
}
const active = (w: WorkflowSessions) => w.sessions.find((x) => x.id === w.activeSessionId)!;

describe('workflow-sessions: operations (cli session)', () => {
  it('are exposed under `agentstate session`', () => {
    expect(kind.cli).toBe('session');
    expect(kind.operations!.map((o) => o.name)).toEqual([
      'start-session',
      'set-todos',
      'update-todo',
      'add-todo',
      'remove-todo',
      'set-phase',
      'log-decision',
      'log-blocker',
      'resolve-blocker',
      'log-lesson',
      'add-artifact',
      'open-delegation',
      'close-delegation',
      'add-directive',
      'revoke-directive',
      'complete-session',
      'abandon-session',
    ]);
  });

  it('run a workflow across sessions: todos, phase, decisions, blockers, lessons, delegations, directives', async () => {
    let w = await run('start-session', null, {
      label: 'Add auth',
      workflow: 'auth',
      todos: [
        { id: 1, title: 'Design' },
        { id: 2, title: 'Build', status: 'not-started' },
      ],
      phase: 'design',
    });
    expect(w).toMatchObject({ workflow: 'auth', activeSessionId: 'session-1' });
    expect(active(w).todos[0]).toEqual({ id: 1, title: 'Design', status: 'not-started' });

    w = await run('update-todo', w, { todo: '1', status: 'in-progress' });
    // add-todo numbers a new todo after the highest numeric id, or sets the one it names; remove-todo takes it out.
    w = await run('add-todo', w, { title: 'Docs' });
    w = await run('add-todo', w, { todo: 'task-7', title: 'Ship', status: 'in-progress' });
    w = await run('add-todo', w, { todo: '3', title: 'Docs again', status: 'completed' });
    expect(active(w).todos.slice(2)).toEqual([
      { id: 3, title: 'Docs again', status: 'completed' },
      { id: 'task-7', title: 'Ship', status: 'in-progress' },
    ]);
    w = await run('remove-todo', w, { todo: 'task-7' });
    w = await run('remove-todo', w, { todo: '3' });
    expect(active(w).todos.map((t) => t.id)).toEqual([1, 2]);
    w = await run('set-todos', w, {
      todos: [
        { id: 1, title: 'Design', status: 'completed' },
        { id: 2, title: 'Build', status: 'in-progress' },
      ],
    });
    w = await run('set-phase', w, { phase: 'build' });
    w = await run('log-decision', w, {
      type: 'workaround',
      description: 'Poll instead of webhooks',
      correct_solution: 'webhooks',
      why_not_implemented: 'firewall',
      revisit_when: 'the firewall rule lands',
      alternatives: ['long polling'],
    });
    expect(active(w).decisions![0]).toMatchObject({
      type: 'workaround',
      workaround: true,
      alternatives_considered: ['long polling'],
    });
    // A workaround without its three fields is refused by the kind.
    await expectRefused(
      () => run('log-decision', w, { type: 'workaround', description: 'hack' }),
      'VALIDATION_FAILED',
      '/sessions/0/decisions/1/correct_solution',
      'workaround-fields-required',
    );
    w = await run('log-blocker', w, { description: 'CI is red' });
    w = await run('resolve-blocker', w, { blocker: 'blk-1', resolution: 'flaky test fixed' });
    expect(active(w).blockers![0]).toMatchObject({ status: 'resolved', resolution: 'flaky test fixed' });
    expect(
      (await refusal(() => run('resolve-blocker', w, { blocker: 'blk-1', resolution: 'again' }))).code,
    ).toBe('INVALID_TRANSITION');
    w = await run('log-lesson', w, {
      summary: 'The CI cache hides stale builds',
      category: 'tool-limitation',
      severity: 'high',
      applies_to: ['ci-skill'],
    });
    w = await run('add-artifact', w, { path: 'src/auth.ts' });
    w = await run('add-directive', w, { text: 'Never push to main' });
    w = await run('add-directive', w, { text: 'Use pnpm' });
    w = await run('open-delegation', w, { agent: 'coder', task: 'Write the login form' });
    expect(active(w).delegations![0]).toMatchObject({ id: 'del-1', status: 'in-progress' });
    // Completing with a delegation in progress is refused (its result is not recorded).
    await expectRefused(
      () => run('complete-session', w),
      'VALIDATION_FAILED',
      '/sessions/0/delegations/0/status',
      'session-complete-delegations',
    );
    w = await run('close-delegation', w, {
      delegation: 'del-1',
      result_summary: 'form done',
      output_artifacts: ['src/form.tsx'],
    });
    w = await run('revoke-directive', w, { directive: 'dir-2', reason: 'user switched to npm' });
    w = await run('complete-session', w, { summary: 'auth shipped' });
    expect(w.activeSessionId).toBeNull();
    expect(w.sessions[0]).toMatchObject({ status: 'completed', summary: 'auth shipped' });

    // A new session carries forward the active directives of the most recent completed session.
    w = await run('start-session', w, { label: 'Add logout' });
    expect(active(w).directives).toEqual([{ ...w.sessions[0]!.directives![0]!, carriedFrom: 'session-1' }]);
    // Starting another while one is active needs to say how the active one ended (Gate D).
    await expectRefused(
      () => run('start-session', w, { label: 'Third' }),
      'INVALID_TRANSITION',
      '/sessions/1/status',
      'previous-session-closed',
    );
    w = await run('start-session', w, {
      label: 'Third',
      close_previous: 'abandoned',
      previous_summary: 'deprioritized',
    });
    expect(w.sessions.map((x) => [x.id, x.status])).toEqual([
      ['session-1', 'completed'],
      ['session-2', 'abandoned'],
      ['session-3', 'active'],
    ]);
    // Directives still come from session-1, the most recent completed one.
    expect(active(w).directives!.map((d) => [d.id, d.carriedFrom])).toEqual([['dir-1', 'session-1']]);
    w = await run('abandon-session', w, { summary: 'out of time' });
    expect(w.activeSessionId).toBeNull();
    expect((await refusal(() => run('set-phase', w, { phase: 'x' }))).details).toMatchObject({
      rule: 'active-session-required',
    });
  });

  it('refuse bad calls with typed errors', async () => {
    expect((await refusal(() => run('set-phase', null, { phase: 'x' }))).code).toBe('NOT_FOUND');
    const w = deploy();
    w.updatedAt = '2026-02-28T00:00:00Z';
    for (const [name, args, field] of [
      ['set-todos', { todos: 'not a list' }, 'todos'],
      ['set-todos', { todos: [{ id: 1, title: 'x', status: 'doing' }] }, 'todos[0].status'],
      ['set-todos', { todos: [{ id: 1 }] }, 'todos[0].title'],
      ['update-todo', { todo: '9', status: 'completed' }, 'todo'],
      ['remove-todo', { todo: '9' }, 'todo'],
      ['add-todo', { title: '  ' }, 'title'],
      ['resolve-blocker', { blocker: 'blk-9', resolution: 'x' }, 'blocker'],
      ['close-delegation', { delegation: 'nope', result_summary: 'x' }, 'delegation'],
      ['add-directive', { text: 'again', directive: 'dir-1' }, 'directive'],
    ] as const) {
      const err = await refusal(() => run(name, w, args));
      expect([name, err.code, err.details.field]).toEqual([name, 'INVALID_INPUT', field]);
    }
  });
});
