// `agentstate instance list|export|import`: the instances a store holds, and moving one between backends
// through a portable file.
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { checkDump, exportInstance, importInstance } from '../core/portable.js';
import { redactUrl } from '../core/redact.js';
import { listInstances } from '../instance/list.js';
import { instanceRoot } from '../instance/paths.js';
import { resolveInstance } from '../service/instance-resolver.js';
import { type GlobalOpts, Output, withInstance } from './context.js';

export function addInstanceCommands(program: Command): void {
  const group = program
    .command('instance')
    .description('list the instances of a store; move one between backends (SQLite ⇄ PostgreSQL)');

  group
    .command('list')
    .description(
      'list the instances the store holds: with --url those of its schema, else every <root>/<host>/agents/<name> with a state.sqlite; creates nothing',
    )
    .action(async (_o, cmd: Command) => {
      const g = cmd.optsWithGlobals<GlobalOpts>();
      const { url, root } = resolveInstance(g);
      const list = await listInstances({ url, root });
      const where = url ? redactUrl(url) : instanceRoot(root);
      new Output(g.json ?? false).emit(list, () =>
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
    .action(async (file: string, _o, cmd: Command) =>
      withInstance(cmd, async (inst, out) => {
        const r = await exportInstance(inst.backend, { host: inst.host, name: inst.name }, resolve(file));
        out.emit(
          r,
          () =>
            `${r.path}: ${r.work_items} work items, ${r.events} events, ${r.documents} documents (${r.history} versions)${r.anchor ? `\nhead ${r.anchor}` : ''}`,
        );
      }),
    );

  group
    .command('import <file>')
    .description(
      'check an exported instance as verify would, load it into this (empty) instance and verify it; a dump that fails is refused (exit 3) and nothing is written',
    )
    .action(async (file: string, _o, cmd: Command) => {
      // The dump is read and checked before the instance is opened: a bad dump creates nothing.
      const dump = await checkDump(resolve(file));
      await withInstance(
        cmd,
        async (inst, out) => {
          const r = await importInstance(inst.backend, inst.events, dump);
          out.emit(
            r,
            () =>
              `imported and verified: ${r.work_items} work items, ${r.events} events (chain intact), ${r.documents} documents (${r.history} versions) from ${r.source_backend}${r.anchor ? `\nhead ${r.anchor}` : ''}`,
          );
        },
        { create: true },
      );
    });
}
