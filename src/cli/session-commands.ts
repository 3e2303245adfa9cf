// `agentstate gate` and `agentstate resume`: the workflow-state skill's gates A–H and resume summary
// over the project's .copilot/state/*.json files (and the store, when an instance is named).
import { type Command, InvalidArgumentError } from 'commander';
import { EXIT_CODES } from '../errors.js';
import type { ResumeSummary } from '../kinds/workflow-sessions/operations.js';
import type { GateResult } from '../kinds/workflow-sessions/rules.js';
import { duration, given, projectOf, runCommand } from './context.js';

export function addSessionCommands(program: Command): void {
  program
    .command('gate <gate> [workflow]')
    .description(
      'check a workflow-state gate (A–H, or all) over .copilot/state/*.json; exit 0 when it holds, 3 with the failures otherwise',
    )
    .option('--delegation <id>', 'gates F/G: the delegation about to be spawned / just returned')
    .option(
      '--max-age <duration>',
      'gate B: the longest the active session may go unchanged, e.g. 30m',
      duration('--max-age'),
    )
    .action(async (gateArg: string, workflow: string | undefined, o, cmd: Command) => {
      // The kind's modules load with the command that needs them, not with every command.
      const { GATES } = await import('../kinds/workflow-sessions/rules.js');
      const want = gateArg.toUpperCase();
      if (want !== 'ALL' && !(GATES as readonly string[]).includes(want)) {
        throw new InvalidArgumentError(`gate must be one of ${GATES.join(', ')} or all, got ${gateArg}`);
      }
      return runCommand<GateResult | GateResult[]>(
        cmd,
        'gate',
        {
          gate: want === 'ALL' ? 'all' : want,
          project: projectOf(cmd),
          ...given('workflow', workflow),
          ...given('delegation', o.delegation),
          ...given('max_age_ms', o.maxAge),
        },
        (r) =>
          (Array.isArray(r) ? r : [r])
            .map((g) =>
              g.ok
                ? `gate ${g.gate}: holds`
                : `gate ${g.gate}: FAILS\n${g.failures.map((f) => `  - ${f}`).join('\n')}`,
            )
            .join('\n'),
        {
          exitCode: (r) =>
            (Array.isArray(r) ? r : [r]).some((g) => !g.ok) ? EXIT_CODES.STATE_CONFLICT : undefined,
        },
      );
    });

  program
    .command('resume <workflow>')
    .description(
      'what an agent needs to pick a workflow up: active session, phase, open todos, blockers, lessons, directives',
    )
    .action(async (workflow: string, _o, cmd: Command) => {
      const { renderResume } = await import('../kinds/workflow-sessions/operations.js');
      await runCommand<ResumeSummary>(
        cmd,
        'resume_workflow',
        { workflow, project: projectOf(cmd) },
        renderResume,
      );
    });
}
