// File views from the command line: export, import, validate, watch, recover, and each kind's
// operations (`agentstate grid update-position …`), which commit and rewrite the file in one call.
import { type Command, InvalidArgumentError } from 'commander';
import type { FieldSpec } from '../core/input.js';
import { parseJsonInput } from '../core/input.js';
import type { CommitResult } from '../core/types.js';
import { type ErrorCode, EXIT_CODES } from '../errors.js';
import { getKind, kindNames } from '../kinds/registry.js';
import { targetFor } from '../views/files.js';
import type { RecoverResult } from '../views/recover.js';
import type { ExportResult, ImportResult } from '../views/sync.js';
import type { ValidateResult } from '../views/validate.js';
import { watchView } from '../views/watch.js';
import { given, int, projectOf, runCommand, withInstance } from './context.js';

function kebab(field: string): string {
  return field
    .replace(/_/g, '-')
    .replace(/([a-z])([A-Z])/g, '$1-$2')
    .toLowerCase();
}

/** A commander option parser for one input field. */
function parserFor(field: string, spec: FieldSpec): ((v: string, prev?: unknown) => unknown) | undefined {
  switch (spec.type) {
    case 'int':
      return int(field);
    case 'json':
    case 'object':
      return (v) => {
        try {
          return parseJsonInput(v, `--${kebab(field)}`);
        } catch (err) {
          throw new InvalidArgumentError((err as Error).message);
        }
      };
    case 'names':
      return (v, prev) => [
        ...((prev as string[] | undefined) ?? []),
        ...v
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean),
      ];
    default:
      return undefined;
  }
}

export function addViewCommands(program: Command): void {
  program.commandsGroup('State files (.grid/STATE.md, .aios/…, .copilot/state/…):');

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

  // Each kind's operations, grouped under its CLI name.
  for (const name of kindNames()) {
    const kind = getKind(name);
    if (!kind.cli || !kind.operations?.length) continue;
    const group = program
      .command(kind.cli)
      .description(`operations on ${name} documents (each one CAS commit + file rewrite)`);
    for (const op of kind.operations) {
      const c = group
        .command(
          `${op.name} <id>${
            op.positional
              ? op.input[op.positional]?.required
                ? ` <${kebab(op.positional)}>`
                : ` [${kebab(op.positional)}]`
              : ''
          }`,
        )
        .description(op.summary)
        .option('--role <role>', 'your role, for field permissions')
        .option('--actor <name>', 'who acts [default: the agent name]')
        .option('--no-export', 'do not rewrite the file');
      for (const [field, spec] of Object.entries(op.input)) {
        if (field === op.positional) continue;
        const flag = spec.type === 'bool' ? `--${kebab(field)}` : `--${kebab(field)} <value>`;
        const parse = parserFor(field, spec);
        const desc = `${field}${spec.required ? ' (required)' : ''}${spec.enum ? `: ${spec.enum.join('|')}` : ''}${
          spec.type === 'names'
            ? ' (comma-separated, repeatable)'
            : spec.type === 'json' || spec.type === 'object'
              ? ' (JSON)'
              : ''
        }`;
        if (parse) c.option(flag, desc, parse as (v: string, p: unknown) => unknown);
        else c.option(flag, desc);
      }
      c.action(async (id: string, ...rest: unknown[]) => {
        const cmd = rest[rest.length - 1] as Command;
        const opts = cmd.opts<Record<string, unknown>>();
        const args: Record<string, unknown> = {};
        for (const field of Object.keys(op.input)) {
          const key = kebab(field).replace(/-([a-z])/g, (_m, ch: string) => ch.toUpperCase());
          if (opts[key] !== undefined) args[field] = opts[key];
        }
        if (op.positional && rest[0] !== undefined) args[op.positional] = rest[0];
        await runCommand<CommitResult & { file: string | null }>(
          cmd,
          'apply_file',
          {
            kind: name,
            id,
            operation: op.name,
            args,
            actor_kind: 'human',
            project: projectOf(cmd),
            ...(opts.export === false && { export: false }),
            ...given('role', opts.role as string | undefined),
            ...given('actor', opts.actor as string | undefined),
          },
          (r) =>
            `${name}/${id} ${r.changed ? `v${r.previous_version} → v${r.version}` : `v${r.version} (nothing changed)`}${r.file ? `  ${r.file}` : ''}`,
        );
      });
    }
  }
}
