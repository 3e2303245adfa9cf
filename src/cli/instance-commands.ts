// `agentstate instance export|import`: move an instance between backends through a portable file.
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { checkDump, exportInstance, importInstance } from '../core/portable.js';
import { withInstance } from './context.js';

export function addInstanceCommands(program: Command): void {
  const group = program
    .command('instance')
    .description('move an instance between backends (SQLite ⇄ PostgreSQL)');

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
