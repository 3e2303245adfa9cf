// File views from the command line: export, import, validate, watch and recover. Each kind's own operations
// are in kind-commands.ts, loaded only when a command needs them.
import type { Command } from 'commander';
import { type ErrorCode, EXIT_CODES } from '../errors.js';
import type { RecoverResult } from '../views/recover.js';
import type { ExportResult, ImportResult } from '../views/sync.js';
import type { ValidateResult } from '../views/validate.js';
import { given, int, projectOf, runCommand, withInstance } from './context.js';

/** The heading the file commands, and each kind's operations, are listed under in help. */
export const FILES_GROUP = 'State files (.grid/STATE.md, .aios/…, .copilot/state/…):';

export function addViewCommands(program: Command): void {
  program.commandsGroup(FILES_GROUP);

  program
    .command('export <kind> <id>')
    .description('write the document to its file (e.g. .grid/STATE.md), stamped with the version it shows')
    .action((kind: string, id: string, _o, cmd: Command) =>
      runCommand<ExportResult>(
        cmd,
        'export_file',
        { kind, id, project: projectOf(cmd) },
        (r) => `${r.path} ← ${kind}/${id} v${r.version}${r.written ? '' : ' (already up to date)'}`,
      ),
    );

  program
    .command('import <file>')
    .description(
      'commit a hand-edited file against the version it was exported from (STATE_CONFLICT with a diff if stale)',
    )
    .option('-k, --kind <kind>', 'the kind, when the path does not tell')
    .option(
      '-e, --expect <version>',
      'commit against this version instead of the file stamp',
      int('--expect'),
    )
    .option('--role <role>', 'your role, for kinds with field permissions')
    .option('--actor <name>', 'who edited the file [default: the agent name]')
    .action((file: string, o, cmd: Command) =>
      runCommand<ImportResult>(
        cmd,
        'import_file',
        {
          path: file,
          project: projectOf(cmd),
          ...given('kind', o.kind),
          ...given('expected_version', o.expect),
          ...given('role', o.role),
          ...given('actor', o.actor),
        },
        (r) =>
          r.changed
            ? `${r.kind}/${r.id} v${r.previous_version} → v${r.version} from ${r.path}`
            : `${r.path}: nothing changed`,
      ),
    );

  program
    .command('validate <file>')
    .description('check a state file against its kind without touching the store (exit 0 when valid)')
    .option('-k, --kind <kind>', 'the kind, when the path does not tell')
    .option('--role <role>', 'check field permissions for this role')
    .action((file: string, o, cmd: Command) =>
      runCommand<ValidateResult>(
        cmd,
        'validate_file',
        { path: file, project: projectOf(cmd), ...given('kind', o.kind), ...given('role', o.role) },
        (r) =>
          r.ok
            ? `${r.path}: valid ${r.kind}${r.version === null ? '' : ` (stamped v${r.version})`}`
            : `${r.path}: ${r.error!.message}${r.error!.pointer ? `\n  field: ${r.error!.pointer}` : ''}${r.error!.rule ? `\n  rule:  ${r.error!.rule}` : ''}`,
        { exitCode: (r) => (r.ok ? undefined : (EXIT_CODES[r.error!.code as ErrorCode] ?? 2)) },
      ),
    );

  program
    .command('recover <file>')
    .description('restore a corrupted state file: from the store, else the last checkpoint, else git history')
    .option('-k, --kind <kind>', 'the kind, when the path does not tell')
    .action((file: string, o, cmd: Command) =>
      runCommand<RecoverResult>(
        cmd,
        'recover_file',
        { path: file, project: projectOf(cmd), ...given('kind', o.kind) },
        (r) =>
          r.source === 'none'
            ? `${r.path} is readable and valid: nothing to recover`
            : `${r.path} recovered from ${r.source}${r.commit ? ` ${r.commit.slice(0, 12)}` : ''}${r.version === null ? '' : ` (v${r.version})`}\n  problem was: ${r.problem}`,
      ),
    );

  program
    .command('watch <kind> <id>')
    .description('keep the file and the store in step both ways until interrupted')
    .option('--role <role>', 'your role, for imports')
    .option(
      '--interval <ms>',
      'poll interval, 10 ms to 1 hour [default: 500]',
      int('--interval', { min: 10, max: 3_600_000 }),
    )
    .action(async (kind: string, id: string, o, cmd: Command) =>
      withInstance(cmd, async (inst, out) => {
        const [{ watchView }, { targetFor }] = await Promise.all([
          import('../views/watch.js'),
          import('../views/files.js'),
        ]);
        const ac = new AbortController();
        process.once('SIGINT', () => ac.abort());
        process.once('SIGTERM', () => ac.abort());
        await watchView(inst, targetFor(kind, id, projectOf(cmd)), {
          signal: ac.signal,
          ...(o.role !== undefined && { role: o.role }),
          ...(o.interval !== undefined && { pollMs: o.interval }),
          onEvent: (e) =>
            process.stdout.write(
              out.json
                ? `${JSON.stringify(e)}\n`
                : `${e.action} ${e.path}${e.version === undefined ? '' : ` v${e.version}`}${e.message ? `: ${e.message}` : ''}\n`,
            ),
        });
      }),
    );
}
