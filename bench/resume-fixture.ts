// A workflow-sessions body the size an agent meets after a long task (3 sessions, 100 todos, 20 decisions,
// 30 lessons), for bench row 6 (what `agentstate resume` costs in tokens) and the resume tests. The body
// passes the kind's rules; titles and texts are as long as real ones, not padded.

/** Counts of the fixture, as named in the row. */
export const RESUME_FIXTURE = { sessions: 3, todos: 100, decisions: 20, lessons: 30 } as const;

const at = (day: number, minute: number) =>
  new Date(Date.UTC(2026, 1, day, 9, 0) + minute * 60_000).toISOString().replace('.000Z', 'Z');

const AREAS = ['billing', 'auth', 'search', 'notifications', 'reporting'];
const VERBS = ['Migrate', 'Add tests for', 'Refactor', 'Document', 'Wire up', 'Profile'];

/** A realistic todo title, 40–70 characters. */
function title(i: number): string {
  const area = AREAS[i % AREAS.length]!;
  const verb = VERBS[i % VERBS.length]!;
  return `${verb} the ${area} ${['service', 'API handlers', 'background jobs', 'data model'][i % 4]} (step ${i})`;
}

const CATEGORIES = [
  'platform-quirk',
  'tool-limitation',
  'pattern-that-worked',
  'pattern-to-avoid',
  'process',
];

function lessons(session: number, day: number): Array<Record<string, unknown>> {
  return Array.from({ length: 10 }, (_, k) => ({
    category: CATEGORIES[(session + k) % CATEGORIES.length],
    summary: `The ${AREAS[k % AREAS.length]} test database must be reset between suites or fixtures leak into later runs (${session}.${k})`,
    detail: 'Call resetDb() in beforeEach; the shared pool otherwise keeps rows from the previous suite.',
    appliesTo: ['tester', 'coder'],
    severity: ['low', 'medium', 'high'][k % 3],
    recordedAt: at(day, 30 + k),
  }));
}

function directives(carriedFrom?: string): Array<Record<string, unknown>> {
  return [
    'Never push directly to main',
    'Run the full test suite before closing a delegation',
    'Ask before adding a dependency',
  ].map((text, k) => ({
    id: `dir-${k + 1}`,
    text,
    status: 'active',
    issuedAt: at(1, 5 + k),
    ...(carriedFrom ? { carriedFrom } : {}),
  }));
}

function closed(n: number, day: number): Record<string, unknown> {
  return {
    id: `session-${n}`,
    label: `Release ${n}: ${AREAS[n]} overhaul`,
    status: 'completed',
    startedAt: at(day, 0),
    updatedAt: at(day, 300),
    endedAt: at(day, 300),
    summary: `Release ${n} shipped`,
    currentPhase: 'verify',
    todos: [],
    decisions: [],
    blockers: [],
    artifacts: [],
    lessonsLearned: lessons(n, day),
    delegations: [],
    directives: directives(n > 1 ? `session-${n - 1}` : undefined),
  };
}

/** The fixture: sessions 1 and 2 completed, session 3 active with every list full. */
export function resumeFixture(workflow = 'release'): Record<string, unknown> {
  const todos = Array.from({ length: RESUME_FIXTURE.todos }, (_, i) => ({
    id: i + 1,
    title: title(i + 1),
    ...(i % 10 === 0 ? { description: 'Keep the old endpoint until every client has moved.' } : {}),
    status: i < 35 ? 'completed' : i < 40 ? 'in-progress' : 'not-started',
  }));
  const decisions = Array.from({ length: RESUME_FIXTURE.decisions }, (_, i) => {
    const base = {
      type: ['architecture', 'user-requirement', 'platform-limitation'][i % 3],
      description: `Keep ${AREAS[i % AREAS.length]} behind a feature flag until the migration of step ${i + 1} is verified in staging`,
      rationale: 'A rollback must not need a deploy',
      alternatives_considered: ['a long-lived branch', 'a big-bang release'],
      timestamp: at(3, 10 + i),
    };
    return i % 4 === 3
      ? {
          ...base,
          type: 'workaround',
          workaround: true,
          correct_solution: `Subscribe to the ${AREAS[i % AREAS.length]} change feed instead of polling it every 30 seconds`,
          why_not_implemented: 'The change feed is not available on the current broker version',
          revisit_when: 'The broker is upgraded to 4.x (ticket OPS-1182)',
        }
      : { ...base, workaround: false };
  });
  return {
    workflow,
    createdAt: at(1, 0),
    updatedAt: at(3, 200),
    activeSessionId: 'session-3',
    sessions: [
      closed(1, 1),
      closed(2, 2),
      {
        id: 'session-3',
        label: 'Release 3: move billing to the new ledger',
        status: 'active',
        startedAt: at(3, 0),
        updatedAt: at(3, 200),
        currentPhase: 'build',
        todos,
        decisions,
        blockers: [
          {
            id: 'blk-1',
            description: 'Staging ledger credentials expired',
            status: 'open',
            raisedAt: at(3, 50),
          },
          {
            id: 'blk-2',
            description: 'Finance has not signed off the rounding rules',
            status: 'open',
            raisedAt: at(3, 60),
          },
        ],
        artifacts: ['src/billing/ledger.ts'],
        lessonsLearned: lessons(3, 3),
        delegations: [
          {
            id: 'del-1',
            agent: 'tester',
            task: 'Write property tests for the ledger rounding',
            status: 'in-progress',
            startedAt: at(3, 100),
          },
        ],
        directives: directives('session-2'),
      },
    ],
  };
}
