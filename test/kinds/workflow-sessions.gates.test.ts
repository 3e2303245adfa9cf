// Gates A–H of the workflow-state skill as pure checks over state files (each passing and failing), and
// the resume summary with its compact text.
import { describe, expect, it } from 'vitest';
import type { KindFile } from '../../src/core/kind.js';
import type { JsonObject } from '../../src/core/types.js';
import type { Session, WorkflowSessions } from '../../src/kinds/workflow-sessions/kind.js';
import { workflowSessionsKind } from '../../src/kinds/workflow-sessions/kind.js';
import { renderResume, resumeSummary } from '../../src/kinds/workflow-sessions/operations.js';
import {
  checkGate,
  checkGates,
  type Gate,
  type GateFile,
  type GateOptions,
  gateFile,
} from '../../src/kinds/workflow-sessions/rules.js';
import { example } from './ctx.js';

const file = workflowSessionsKind.file as KindFile;
const deploy = () => example('sessions/deploy') as unknown as WorkflowSessions;
const j = (b: WorkflowSessions) => b as unknown as JsonObject;
const PATH = '.copilot/state/deploy.json';

/** A state file as exported by agentstate (stamped), read back through the codec. */
function exported(body: WorkflowSessions, path = PATH, version = 7): GateFile {
  const id = file.idFromPath(path)!;
  return gateFile(
    path,
    file.render(j(body), { kind: 'workflow-sessions', id, version }, { now: 0, recentEvents: [] }),
  );
}
const s3 = (b: WorkflowSessions): Session => b.sessions[2]!;

/** deploy with its in-progress delegation finished (so C and the completion rules are clean). */
function settled(): WorkflowSessions {
  const b = deploy();
  Object.assign(s3(b).delegations![0]!, {
    status: 'completed',
    completedAt: '2026-02-03T10:50:00Z',
    resultSummary: 'refresh endpoint done',
    outputArtifacts: ['src/auth/refresh.ts'],
  });
  return b;
}
/** settled, with session-3 completed too: nothing active. */
function finished(): WorkflowSessions {
  const b = settled();
  s3(b).status = 'completed';
  s3(b).endedAt = '2026-02-03T11:00:00Z';
  b.activeSessionId = null;
  return b;
}

function expectGate(gate: Gate, files: GateFile[], options: GateOptions, failures: Array<string | RegExp>) {
  const r = checkGate(gate, files, options);
  expect(r.gate).toBe(gate);
  expect(r.failures).toHaveLength(failures.length);
  failures.forEach((f, i) => {
    expect(r.failures[i]).toMatch(f);
  });
  expect(r.ok).toBe(failures.length === 0);
}

describe('gate A (start): the file exists, has a sessions array and an active session', () => {
  it('passes for a file with an active session', () => {
    expectGate('A', [exported(deploy())], { workflow: 'deploy' }, []);
  });
  it('fails when the file is missing, unreadable, has no sessions array or no active session', () => {
    expectGate('A', [exported(deploy())], { workflow: 'release' }, [
      '.copilot/state/release.json: does not exist (no state file, no execution)',
    ]);
    expectGate('A', [], {}, [/no state file in \.copilot\/state\//]);
    expectGate('A', [gateFile(PATH, '{"sessions": [')], { workflow: 'deploy' }, [
      /^\.copilot\/state\/deploy\.json: cannot be read: .*line 1, column 15/,
    ]);
    expectGate('A', [{ path: PATH, body: { updatedAt: 'x' } }], {}, [`${PATH}: has no sessions array`]);
    expectGate('A', [exported(example('sessions/empty') as unknown as WorkflowSessions)], {}, [
      `${PATH}: has no active session: start one before the first major step`,
    ]);
    expectGate('A', [exported(finished())], { workflow: 'deploy' }, [
      `${PATH}: has no active session: start one before the first major step`,
    ]);
    const wrongId = deploy();
    wrongId.activeSessionId = 'session-1';
    expectGate('A', [{ path: PATH, body: j(wrongId) }], {}, [
      `${PATH}: activeSessionId is "session-1" but the active session is session-3`,
    ]);
  });
});

describe('gate B (transition): the file is in sync with the store and its updatedAt is current', () => {
  const store = (body: WorkflowSessions, version = 7) => ({ deploy: { version, body: j(body) } });
  it('passes when the file shows the store version and body', () => {
    expectGate('B', [exported(deploy())], { store: store(deploy()) }, []);
    expectGate('B', [exported(deploy())], {}, []);
  });
  it('fails for an unstamped file, a stale export, an edit not imported, a stale updatedAt, a stale session', () => {
    expectGate('B', [{ path: PATH, body: j(deploy()), stamp: null }], {}, [
      `${PATH}: carries no agentstate stamp: it was not written through the store (import it)`,
    ]);
    expectGate('B', [exported(deploy(), PATH, 6)], { store: store(deploy()) }, [
      `${PATH}: shows version 6 but the store is at 7: re-export it`,
    ]);
    const edited = deploy();
    s3(edited).currentPhase = 'test';
    expectGate('B', [exported(edited)], { store: store(deploy()) }, [
      `${PATH}: differs from version 7 in the store at /sessions/2/currentPhase: import it (or re-export to discard)`,
    ]);
    expectGate('B', [exported(deploy())], { store: {} }, [
      `${PATH}: the store has no workflow-sessions/deploy: import the file`,
    ]);
    const stale = deploy();
    stale.updatedAt = '2026-02-03T10:00:00Z';
    expectGate('B', [exported(stale)], {}, [
      `${PATH}: updatedAt 2026-02-03T10:00:00Z is older than a change recorded at 2026-02-03T11:00:00.000Z`,
    ]);
    const now = Date.parse('2026-02-03T13:00:00Z');
    expectGate('B', [exported(deploy())], { now, maxAgeMs: 30 * 60_000 }, [
      `${PATH}: session-3 "Add authentication" unchanged for 120 min (limit 30)`,
    ]);
    expectGate('B', [exported(deploy())], { now, maxAgeMs: 3 * 3600_000 }, []);
  });
});

describe('gate C (handoff/resume): activeSessionId resolves; no delegation left in-progress', () => {
  it('passes when every delegation has returned', () => {
    expectGate('C', [exported(settled())], {}, []);
  });
  it('lists delegations still in-progress and a dangling activeSessionId', () => {
    expectGate('C', [exported(deploy())], {}, [
      `${PATH}: session-3 delegation del-2 (coder: Implement the refresh endpoint) is still in-progress since 2026-02-03T10:30:00Z: incomplete sub-agent work`,
    ]);
    const dangling = settled();
    dangling.activeSessionId = 'session-9';
    expectGate('C', [{ path: PATH, body: j(dangling) }], {}, [
      `${PATH}: activeSessionId "session-9" names no session`,
    ]);
    const unset = settled();
    unset.activeSessionId = null;
    expectGate('C', [{ path: PATH, body: j(unset) }], {}, [
      `${PATH}: activeSessionId is null but session-3 "Add authentication" is active`,
    ]);
  });
});

describe('gate D (new task): previous sessions closed; directives carried forward', () => {
  it('passes for closed earlier sessions and carried directives', () => {
    expectGate('D', [exported(deploy())], {}, []);
  });
  it('fails for an earlier session left active, a closed one without endedAt, a directive dropped', () => {
    const open = deploy();
    open.sessions[1]!.status = 'active';
    delete open.sessions[1]!.endedAt;
    const noEnd = deploy();
    delete noEnd.sessions[0]!.endedAt;
    const dropped = deploy();
    s3(dropped).directives = [];
    expectGate('D', [{ path: PATH, body: j(open) }], {}, [
      `${PATH}: session-2 "Try a new bundler" is active but a later session was started: close it (completed or abandoned) first`,
    ]);
    expectGate('D', [{ path: PATH, body: j(noEnd) }], {}, [
      `${PATH}: session-1 "Dataverse date fix" is completed without endedAt`,
    ]);
    expectGate('D', [{ path: PATH, body: j(dropped) }], {}, [
      `${PATH}: session-3 did not carry forward directive dir-1 ("Never push directly to main")`,
    ]);
  });
});

describe('gate E (completion): no session in any state file is active', () => {
  const other = '.copilot/state/docs.json';
  it('passes when every session everywhere is completed or abandoned', () => {
    expectGate('E', [exported(finished()), exported(finished(), other)], { workflow: 'deploy' }, []);
  });
  it('lists every active session of every file, and unreadable files', () => {
    expectGate(
      'E',
      [exported(deploy()), exported(finished(), other), exported(deploy(), '.copilot/state/api.json')],
      { workflow: 'deploy' },
      [
        `${PATH}: session-3 "Add authentication" is still active (phase build, 2 open todos): resume it before finishing`,
        '.copilot/state/api.json: session-3 "Add authentication" is still active (phase build, 2 open todos): resume it before finishing',
      ],
    );
    expectGate('E', [gateFile(other, '\u0000binary')], {}, [
      /^\.copilot\/state\/docs\.json: cannot be read: .*binary data/,
    ]);
  });
});

describe('gate F (pre-delegation): a delegation is persisted in-progress before the spawn', () => {
  it('passes for the delegation recorded in-progress in the active session', () => {
    expectGate('F', [exported(deploy())], { workflow: 'deploy', delegation: 'del-2' }, []);
  });
  it('fails for a delegation not persisted, one not in-progress, no active session, incomplete entries', () => {
    expectGate('F', [exported(deploy())], { delegation: 'del-9' }, [
      `${PATH}: delegation del-9 is not persisted in session-3: record it in-progress before spawning`,
    ]);
    expectGate('F', [exported(settled())], { delegation: 'del-2' }, [
      `${PATH}: delegation del-2 is completed, not in-progress`,
    ]);
    expectGate('F', [exported(finished())], {}, [`${PATH}: has no active session to record delegations in`]);
    const partial = deploy() as unknown as {
      sessions: Array<{ delegations: Array<Record<string, unknown>> }>;
    };
    delete partial.sessions[2]!.delegations[0]!.agent;
    expectGate('F', [{ path: PATH, body: partial as unknown as JsonObject }], {}, [
      `${PATH}: session-3 delegation del-2 lacks agent`,
    ]);
  });
});

describe('gate G (post-delegation): a returned delegation records status, result summary and outputArtifacts', () => {
  it('passes for recorded results', () => {
    expectGate('G', [exported(settled())], { delegation: 'del-2' }, []);
    expectGate('G', [exported(deploy())], {}, []);
  });
  it('fails for a returned delegation still in-progress, or a completed one without its result', () => {
    expectGate('G', [exported(deploy())], { delegation: 'del-2' }, [
      `${PATH}: delegation del-2 (coder) is still in-progress: record its status, result summary and outputArtifacts`,
    ]);
    const noOutputs = settled();
    delete s3(noOutputs).delegations![0]!.outputArtifacts;
    expectGate('G', [{ path: PATH, body: j(noOutputs) }], {}, [
      `${PATH}: session-3 delegation del-2 is completed without outputArtifacts`,
    ]);
    expectGate('G', [exported(deploy())], { delegation: 'del-7' }, [
      `${PATH}: delegation del-7 is not recorded`,
    ]);
  });
});

describe('gate H (cross-session directives): every session holds the directives of the last completed one', () => {
  it('passes when directives are carried (revoked ones are not)', () => {
    expectGate('H', [exported(deploy())], {}, []);
  });
  it('fails for a session that dropped a directive', () => {
    const b = deploy();
    b.sessions[1]!.directives = [];
    expectGate('H', [{ path: PATH, body: j(b) }], {}, [
      `${PATH}: session-2 is missing directive dir-1 ("Never push directly to main") carried from the most recent completed session`,
    ]);
  });
});

it('checkGates runs all eight gates', () => {
  const results = checkGates([exported(deploy())], { workflow: 'deploy' });
  expect(results.map((r) => [r.gate, r.ok])).toEqual([
    ['A', true],
    ['B', true],
    ['C', false],
    ['D', true],
    ['E', false],
    ['F', true],
    ['G', true],
    ['H', true],
  ]);
});

it('gates never crash on bodies that do not match the schema', () => {
  const junk: GateFile[] = [
    { path: PATH, body: { sessions: [null, 3, { id: 'session-2', status: 'active', delegations: [null] }] } },
  ];
  for (const r of checkGates(junk)) expect(Array.isArray(r.failures)).toBe(true);
});

describe('resume summary', () => {
  it('gives the active session, phase, open todos, blockers, high lessons, directives, delegations', () => {
    const r = resumeSummary(j(deploy()));
    expect(r).toEqual({
      workflow: 'deploy',
      activeSession: { id: 'session-3', label: 'Add authentication', startedAt: '2026-02-03T09:00:00Z' },
      lastSession: null,
      phase: 'build',
      todos: s3(deploy()).todos,
      openTodos: [
        { id: 2, title: 'Wire the login endpoint', status: 'in-progress' },
        { id: 3, title: 'Write tests', description: 'unit and e2e', status: 'not-started' },
      ],
      decisions: s3(deploy()).decisions,
      unresolvedBlockers: [
        {
          id: 'blk-1',
          description: 'Staging identity provider is down',
          status: 'open',
          raisedAt: '2026-02-03T10:00:00Z',
        },
      ],
      highSeverityLessons: [{ ...deploy().sessions[0]!.lessonsLearned![0]!, session: 'session-1' }],
      directives: [s3(deploy()).directives![0]!],
      delegationsInProgress: [{ ...s3(deploy()).delegations![0]!, session: 'session-3' }],
    });
    expect(renderResume(r)).toBe(
      [
        'deploy: session-3 "Add authentication" phase=build',
        'todos: [~] 2 Wire the login endpoint | [ ] 3 Write tests; 1 of 3 done',
        'blockers: blk-1 Staging identity provider is down',
        'decisions: [architecture] Use short-lived JWTs with refresh tokens',
        'delegations in progress: session-3/del-2 coder: Implement the refresh endpoint',
        'directives: dir-1 Never push directly to main',
        "lesson! session-1 platform-quirk: Dataverse date-only columns shift by one day when the user's UTC offset is negative",
        '',
      ].join('\n'),
    );
  });

  it('with no active session: the last session and the directives a new one would carry', () => {
    const r = resumeSummary(j(finished()));
    expect(r.activeSession).toBeNull();
    expect(r.lastSession).toEqual({ id: 'session-3', label: 'Add authentication', status: 'completed' });
    expect(r.directives.map((d) => d.id)).toEqual(['dir-1']);
    expect(renderResume(r).split('\n')[0]).toBe(
      'deploy: no active session (last: session-3 "Add authentication" completed); start one',
    );
    expect(renderResume(resumeSummary({ updatedAt: 'x', activeSessionId: null, sessions: [] }))).toBe(
      'no active session; start one\n',
    );
  });
});
