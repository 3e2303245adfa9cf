// File views from the command line: export, import, validate and recover as commands of the table's
// file operations, and watch (a loop of its own, not an operation). Each kind's own operations are in
// kind-commands.ts, loaded only when a command needs them.
import type { Command } from 'commander';
import { type ErrorCode, EXIT_CODES } from '../errors.js';
import type { RecoverResult } from '../views/recover.js';
import type { ExportResult, ImportResult } from '../views/sync.js';
import type { ValidateResult } from '../views/validate.js';
import { int, interrupted, projectOf, withInstance } from './context.js';
import { addCommands, command } from './generate.js';

/** The heading the file commands, and each kind's operations, are listed under in help. */
export const FILES_GROUP = 'State files (.grid/STATE.md, .aios/…, .copilot/state/…):';

const path = { file: 'path' };
const kind = { short: 'k', help: 'the kind, when the path does not tell' };

export const FILE_COMMANDS = [
  command<ExportResult>({
    usage: 'export <kind> <id>',
    op: 'export_file',
    human: (r, i) => `${r.path} ← ${i.kind}/${i.id} v${r.version}${r.written ? '' : ' (already up to date)'}`,
  }),
  command<ImportResult>({
    usage: 'import <file>',
    op: 'import_file',
    args: path,
    flags: {
      kind,
      expected_version: { help: 'commit against this version instead of the file stamp' },
      actor: { help: 'who edited the file [default: the agent name]' },
    },
    human: (r) =>
      r.changed
        ? `${r.kind}/${r.id} v${r.previous_version} → v${r.version} from ${r.path}`
        : `${r.path}: nothing changed`,
  }),
  command<ValidateResult>({
    usage: 'validate <file>',
    op: 'validate_file',
    args: path,
    flags: { kind },
    human: (r) =>
      r.ok
        ? `${r.path}: valid ${r.kind}${r.version === null ? '' : ` (stamped v${r.version})`}`
        : `${r.path}: ${r.error!.message}${r.error!.pointer ? `\n  field: ${r.error!.pointer}` : ''}${r.error!.rule ? `\n  rule:  ${r.error!.rule}` : ''}`,
    exitCode: (r) => (r.ok ? undefined : (EXIT_CODES[r.error!.code as ErrorCode] ?? 2)),
  }),
  command<RecoverResult>({
    usage: 'recover <file>',
    op: 'recover_file',
    args: path,
    flags: { kind },
    human: (r) =>
      r.source === 'none'
        ? `${r.path} is readable and valid: nothing to recover`
        : `${r.path} recovered from ${r.source}${r.commit ? ` ${r.commit.slice(0, 12)}` : ''}${r.version === null ? '' : ` (v${r.version})`}\n  problem was: ${r.problem}`,
  }),
];

export function addViewCommands(program: Command): void {
  program.commandsGroup(FILES_GROUP);
  addCommands(program, FILE_COMMANDS);

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
        await watchView(inst, targetFor(kind, id, projectOf(cmd)), {
          signal: interrupted(),
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
