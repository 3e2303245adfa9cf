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
import { type GlobalOpts, given, progressLine, runCommand } from './context.js';

type Moved = DumpCounts & { path?: string; anchor: string | null; source_backend?: string };

export function addInstanceCommands(program: Command): void {
  program.commandsGroup('Instances:');

  program
    .command('init')
    .description(
      'create the instance layout and database (ScaffoldFolders); the only command that creates one',
    )
    .action((_o, cmd: Command) =>
      runCommand<ScaffoldResult>(
        cmd,
        'scaffold',
        {},
        (r) =>
          `instance ${r.name}@${r.host} at ${r.instance_dir}${r.created.length ? ` (created ${r.created.join(', ')})` : ' (already there)'}`,
      ),
    );

  program
    .command('dashboard')
    .description('rewrite dashboard.md from the store (RegenerateDashboard)')
    .action((_o, cmd: Command) =>
      runCommand<DashboardResult>(cmd, 'dashboard', {}, (r) => `${r.path} (at event #${r.position})`),
    );

  program
    .command('retro')
    .description('write a retrospective of a time window to retros/ (RetrospectiveSummary)')
    .option('--since <time>', 'ISO time or duration ago [default: 24h]')
    .option('--until <time>', 'ISO time or duration ago [default: now]')
    .action((o, cmd: Command) =>
      runCommand<RetroResult>(
        cmd,
        'retro',
        { ...given('since', o.since), ...given('until', o.until) },
        (r) =>
          `${r.path}\n${r.summary.done} done, ${r.summary.failed} failed, ${r.summary.retried_items} retried`,
      ),
    );

  const group = program
    .command('instance')
    .description('the instances a store holds, and moving one between backends (SQLite ⇄ PostgreSQL)');

  group
    .command('list')
    .description(
      'list the instances the store holds: with --url those of its schema, else every <root>/<host>/agents/<name> with a state.sqlite; creates nothing',
    )
    .action((_o, cmd: Command) => {
      const { url, root } = resolveInstance(cmd.optsWithGlobals<GlobalOpts>());
      const where = url ? redactUrl(url) : instanceRoot(root);
      return runCommand<InstanceSummary[]>(
        cmd,
        'list_instances',
        { ...given('url', url), ...given('root', root) },
        (list) =>
          list.length === 0
            ? `no instances in ${where}`
            : list
                .map(
                  (i) =>
                    `${i.instance}  ${i.error ? `unreadable: ${i.error}` : `${i.events} event${i.events === 1 ? '' : 's'}${i.last_event_at ? `, last ${i.last_event_at}` : ''}`}`,
                )
                .join('\n'),
      );
    });

  group
    .command('export <file>')
    .description('write every work item, event (with its chain) and document version to a JSON Lines file')
    .action((file: string, _o, cmd: Command) =>
      runCommand<Moved>(
        cmd,
        'export_instance',
        { path: resolve(file) },
        (r) =>
          `${r.path}: ${r.work_items} work items, ${r.events} events, ${r.documents} documents (${r.history} versions)${r.anchor ? `\nhead ${r.anchor}` : ''}`,
        { progress: progressLine('exporting: records') },
      ),
    );

  group
    .command('import <file>')
    .description(
      'check an exported instance as verify would, load it into this (empty) instance and verify it; a dump that fails is refused (exit 3) and nothing is written',
    )
    .action((file: string, _o, cmd: Command) =>
      runCommand<Moved>(
        cmd,
        'import_instance',
        { path: resolve(file) },
        (r) =>
          `imported and verified: ${r.work_items} work items, ${r.events} events (chain intact), ${r.documents} documents (${r.history} versions) from ${r.source_backend}${r.anchor ? `\nhead ${r.anchor}` : ''}`,
        { progress: progressLine('importing: events') },
      ),
    );
}
