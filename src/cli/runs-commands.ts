// `agentstate runs` and `agentstate runs show <run-id>`: the runs of a Workflow SDK World kept in the store
// (@agentstate/store/workflow-world), as the workflow_runs and workflow_run operations of the table (flags
// from their input schemas), printed as tables.
import type { Command } from 'commander';
import type { WorldErrorView, WorldRunDetail, WorldRunSummary } from '../workflow-world/inspect.js';
import { cell, table, when } from './format.js';
import { addCommands, command } from './generate.js';

/** A run's or step's error on one line: its message (or that it is serialized) and its code. */
const errorText = (e: WorldErrorView | null): string =>
  e === null
    ? ''
    : `${e.message === null ? '(serialized)' : cell(e.message, 80)}${e.code ? ` [${cell(e.code)}]` : ''}`;

/** The line that says how to read the next page, when a page came back full. */
const more = (shown: number, limit: unknown, next: string): string =>
  shown > 0 && shown >= (typeof limit === 'number' ? limit : 100) ? `\nmore: ${next}` : '';

function runsTable(runs: WorldRunSummary[], input: Record<string, unknown>): string {
  if (runs.length === 0) return 'no workflow runs';
  const rows = runs.map((r) => [
    cell(r.run_id),
    r.status,
    cell(r.workflow_name, 60),
    when(r.created_at),
    when(r.completed_at),
    errorText(r.error),
  ]);
  const last = runs.at(-1)!.run_id;
  return (
    table(['RUN', 'STATUS', 'WORKFLOW', 'CREATED', 'ENDED', 'ERROR'], rows) +
    more(
      runs.length,
      input.limit,
      `agentstate runs list --after ${JSON.stringify(last)} (and the same filters)`,
    )
  );
}

function runDetail(d: WorldRunDetail, input: Record<string, unknown>): string {
  const r = d.run;
  const attrs = Object.entries(r.attributes);
  const head = [
    `run         ${cell(r.run_id)}`,
    `workflow    ${cell(r.workflow_name)}`,
    `status      ${r.status}${r.error ? `  ${errorText(r.error)}` : ''}`,
    `created     ${when(r.created_at)}   started ${when(r.started_at)}   ended ${when(r.completed_at)}`,
    ...(r.deployment_id === null ? [] : [`deployment  ${cell(r.deployment_id)}`]),
    ...(attrs.length === 0
      ? []
      : [`attributes  ${attrs.map(([k, v]) => `${cell(k)}=${cell(v)}`).join('  ')}`]),
  ];
  const section = (title: string, header: string[], rows: string[][]) =>
    rows.length === 0 ? `${title}: none` : `${title}:\n${table(header, rows)}`;
  const steps =
    section(
      input.after === undefined ? 'steps' : `steps after ${cell(String(input.after))}`,
      ['STEP', 'NAME', 'STATUS', 'ATTEMPT', 'CREATED', 'ENDED', 'ERROR'],
      d.steps.map((s) => [
        cell(s.step_id),
        cell(s.step_name ?? '', 50),
        s.status,
        String(s.attempt),
        when(s.created_at),
        when(s.completed_at),
        errorText(s.error),
      ]),
    ) +
    more(
      d.steps.length,
      input.limit,
      `agentstate runs show ${JSON.stringify(r.run_id)} --after ${JSON.stringify(d.steps.at(-1)?.step_id ?? '')}`,
    );
  const hooks = section(
    'live hooks',
    ['HOOK', 'CREATED', 'WEBHOOK'],
    d.hooks.map((h) => [cell(h.hook_id), when(h.created_at), h.is_webhook ? 'yes' : 'no']),
  );
  const waits = section(
    'waits',
    ['WAIT', 'STATUS', 'CREATED', 'RESUMES'],
    d.waits.map((w) => [cell(w.wait_id), w.status, when(w.created_at), when(w.resume_at)]),
  );
  const streams = section(
    'streams',
    ['STREAM', 'CHUNKS', 'CLOSED'],
    d.streams.map((s) => [cell(s.name), String(s.chunks), s.done ? 'yes' : 'no']),
  );
  const notShown = d.not_included.map((n) =>
    n.part === 'work_items'
      ? 'not shown: its queue messages (work items of kind wf:…, titled with the run id: agentstate list --kind wf:__wkf_step_)'
      : `not shown: some ${n.part} (${n.reason})`,
  );
  return [head.join('\n'), steps, hooks, waits, streams, ...notShown].join('\n\n');
}

/** `agentstate runs list` (also bare `agentstate runs`) and `agentstate runs show <run-id>`. */
export const RUNS_COMMANDS = [
  command<WorldRunSummary[]>({
    usage: 'list',
    op: 'workflow_runs',
    isDefault: true,
    description: 'list the runs, newest first (the default: `agentstate runs` alone lists them)',
    flags: {
      status: { short: 's', help: 'only runs in this status' },
      workflow: {
        short: 'w',
        value: 'name',
        help: 'only runs of this workflow (its full name, as the list shows it)',
      },
      after: { value: 'run-id', help: 'the runs after this one (the last run id a page showed)' },
    },
    human: runsTable,
  }),
  command<WorldRunDetail>({
    usage: 'show <run-id>',
    op: 'workflow_run',
    description:
      'show one run: its status, steps, live hooks, waits and streams (exit 1 when there is no such run)',
    flags: {
      after: { value: 'step-id', help: 'the steps after this one (the last step id a page showed)' },
      limit: { short: 'n', help: 'at most n steps [default: 100]' },
    },
    human: runDetail,
  }),
];

export function addRunsCommands(program: Command): void {
  program.commandsGroup('Workflow SDK runs:');
  const runs = program
    .command('runs')
    .description(
      'the runs of the Workflow SDK World kept in this store: list them, show one (docs/workflow-world.md)',
    );
  addCommands(runs, RUNS_COMMANDS);
}
