// Each kind's operations as commands (`agentstate grid update-position …`): one CAS commit and a file rewrite
// per call. Loaded only for a command that is not one of the others (or for help), since it loads every kind.
import { type Command, InvalidArgumentError } from 'commander';
import type { FieldSpec } from '../core/input.js';
import { parseJsonInput } from '../core/input.js';
import type { CommitResult } from '../core/types.js';
import { getKind, kindNames } from '../kinds/registry.js';
import { given, int, projectOf, runCommand } from './context.js';
import { FILES_GROUP } from './view-commands.js';

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

/** Adds a command group per kind with a CLI name (`grid`, `aios`, `session`), listed with the file commands. */
export function addKindCommands(program: Command): void {
  // Each kind's operations, grouped under its CLI name.
  for (const name of kindNames()) {
    const kind = getKind(name);
    if (!kind.cli || !kind.operations?.length) continue;
    const group = program
      .command(kind.cli)
      .helpGroup(FILES_GROUP)
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
