// `agentstate gate` and `agentstate resume`: the workflow-state skill's gates A–H and resume summary
// over the project's .copilot/state/*.json files (and the store, when an instance is named).
import type { Command } from 'commander';
import { EXIT_CODES } from '../errors.js';
import type { ResumeSummary } from '../kinds/workflow-sessions/operations.js';
import type { GateResult } from '../kinds/workflow-sessions/rules.js';
import { duration } from './context.js';
import { addCommands, command } from './generate.js';

const all = (r: GateResult | GateResult[]) => (Array.isArray(r) ? r : [r]);

/** The kind's renderer, loaded with the command that needs it (not with every command). */
let render: ((r: ResumeSummary) => string) | undefined;

export const SESSION_COMMANDS = [
  command<GateResult | GateResult[]>({
    usage: 'gate <gate> [workflow]',
    op: 'gate',
    description:
      'check a workflow-state gate (A–H, or all) over .copilot/state/*.json; exit 0 when it holds, 3 with the failures otherwise',
    flags: {
      max_age_ms: {
        flags: '--max-age <duration>',
        help: 'gate B: the longest the active session may go unchanged, e.g. 30m',
        parse: duration('--max-age'),
      },
    },
    // Gates are letters in any case; `all` checks each.
    route: (input) => {
      const gate = String(input.gate).toUpperCase();
      return { op: 'gate', input: { ...input, gate: gate === 'ALL' ? 'all' : gate } };
    },
    human: (r) =>
      all(r)
        .map((g) =>
          g.ok
            ? `gate ${g.gate}: holds`
            : `gate ${g.gate}: FAILS\n${g.failures.map((f) => `  - ${f}`).join('\n')}`,
        )
        .join('\n'),
    exitCode: (r) => (all(r).some((g) => !g.ok) ? EXIT_CODES.STATE_CONFLICT : undefined),
  }),
  command<ResumeSummary>({
    usage: 'resume <workflow>',
    op: 'resume_workflow',
    route: async (input) => {
      render = (await import('../kinds/workflow-sessions/operations.js')).renderResume;
      return { op: 'resume_workflow', input };
    },
    human: (r) => render!(r),
  }),
];

export function addSessionCommands(program: Command): void {
  addCommands(program, SESSION_COMMANDS);
}
