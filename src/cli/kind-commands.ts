// Each kind's operations as commands (`agentstate grid update-position …`): one CAS commit and a file rewrite
// per call. Loaded only for a command that is not one of the others (or for help), since it loads every kind.
import type { Command } from 'commander';
import { inputSchema } from '../core/json-schema.js';
import type { CommitResult } from '../core/types.js';
import { getKind, kindNames } from '../kinds/registry.js';
import { given, projectOf, runCommand } from './context.js';
import { kebab, optionOf } from './generate.js';
import { FILES_GROUP } from './view-commands.js';

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
      const fields: Array<[field: string, key: string]> = [];
      for (const [field, s] of Object.entries(inputSchema(op.input).properties)) {
        if (field === op.positional) continue;
        const option = optionOf(field, s, {});
        if (op.input[field]?.required) option.makeOptionMandatory();
        c.addOption(option);
        fields.push([field, option.attributeName()]);
      }
      c.action(async (id: string, ...rest: unknown[]) => {
        const cmd = rest[rest.length - 1] as Command;
        const opts = cmd.opts<Record<string, unknown>>();
        const args: Record<string, unknown> = {};
        for (const [field, key] of fields) if (opts[key] !== undefined) args[field] = opts[key];
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
