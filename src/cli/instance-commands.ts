// `agentstate init | dashboard | retro | instance list|export|import`: the instance as a whole — creating it,
// its dashboard and retrospectives, and moving it between backends through a portable file.
import { resolve } from 'node:path';
import type { Command } from 'commander';
import type { DumpCounts } from '../core/portable.js';
import { redactUrl } from '../core/redact.js';
import type { InstanceSummary } from '../core/types.js';
import { instanceRoot } from '../instance/paths.js';
import type { ScaffoldResult } from '../instance/scaffold.js';
import type { DashboardResult } from '../reports/dashboard.js';
import type { RetroResult } from '../reports/retro.js';
import { resolveInstance } from '../service/instance-resolver.js';
import { type GlobalOpts, given, progressLine } from './context.js';
import { addCommands, command } from './generate.js';

type Moved = DumpCounts & { path?: string; anchor: string | null; source_backend?: string };

export const INSTANCE_COMMANDS = [
  command<ScaffoldResult>({
    usage: 'init',
    op: 'scaffold',
    description:
      'create the instance layout and database (ScaffoldFolders); the only command that creates one',
    human: (r) =>
      `instance ${r.name}@${r.host} at ${r.instance_dir}${r.created.length ? ` (created ${r.created.join(', ')})` : ' (already there)'}`,
  }),
  command<DashboardResult>({
    usage: 'dashboard',
    op: 'dashboard',
    human: (r) => `${r.path} (at event #${r.position})`,
  }),
  command<RetroResult>({
    usage: 'retro',
    op: 'retro',
    flags: {
      since: { help: 'ISO time or duration ago [default: 24h]' },
      until: { value: 'time', help: 'ISO time or duration ago [default: now]' },
    },
    human: (r) =>
      `${r.path}\n${r.summary.done} done, ${r.summary.failed} failed, ${r.summary.retried_items} retried`,
  }),
];

/** A dump's counts on one line (a Workflow World's when it has one), and the head it holds. */
const counts = (r: Moved) =>
  `${r.work_items} work items, ${r.events} events, ${r.documents} documents (${r.history} versions)${
    r.workflow_runs > 0 || r.workflow_chunks > 0
      ? `, Workflow World: ${r.workflow_runs} runs (${r.workflow_steps} steps, ${r.workflow_hooks} hooks, ${r.workflow_waits} waits), ${r.workflow_chunks} stream chunks`
      : ''
  }`;
const head = (r: Moved) => (r.anchor ? `\nhead ${r.anchor}` : '');

export const INSTANCE_GROUP_COMMANDS = [
  command<InstanceSummary[]>({
    usage: 'list',
    op: 'list_instances',
    description:
      'list the instances the store holds: with --url those of its schema, else every <root>/<host>/agents/<name> with a state.sqlite; creates nothing',
    // The store is the one the global flags and the environment name.
    route: (_input, _o, cmd) => {
      const { url, root } = resolveInstance(cmd.optsWithGlobals<GlobalOpts>());
      return { op: 'list_instances', input: { ...given('url', url), ...given('root', root) } };
    },
    human: (list, i) =>
      list.length === 0
        ? `no instances in ${i.url ? redactUrl(String(i.url)) : instanceRoot(i.root as string | undefined)}`
        : list
            .map(
              (x) =>
                `${x.instance}  ${x.error ? `unreadable: ${x.error}` : `${x.events} event${x.events === 1 ? '' : 's'}${x.last_event_at ? `, last ${x.last_event_at}` : ''}`}`,
            )
            .join('\n'),
  }),
  command<Moved>({
    usage: 'export <file>',
    op: 'export_instance',
    args: { file: 'path' },
    route: (i) => ({ op: 'export_instance', input: { ...i, path: resolve(String(i.path)) } }),
    human: (r) => `${r.path}: ${counts(r)}${head(r)}`,
    progress: () => progressLine('exporting: records'),
  }),
  command<Moved>({
    usage: 'import <file>',
    op: 'import_instance',
    args: { file: 'path' },
    route: (i) => ({ op: 'import_instance', input: { ...i, path: resolve(String(i.path)) } }),
    human: (r) =>
      `imported and verified: ${counts(r).replace(' events', ' events (chain intact)')} from ${r.source_backend}${head(r)}`,
    progress: () => progressLine('importing: events'),
  }),
];

export function addInstanceCommands(program: Command): void {
  program.commandsGroup('Instances:');
  addCommands(program, INSTANCE_COMMANDS);
  const group = program
    .command('instance')
    .description('the instances a store holds, and moving one between backends (SQLite ⇄ PostgreSQL)');
  addCommands(group, INSTANCE_GROUP_COMMANDS);
}
