// `agentstate setup <host>`: writes the project-scoped MCP configuration and instruction file a coding-agent
// host reads (src/hosts/setup.ts), and creates the project's store in .agentstate/. Not an operation of the
// table: it writes the project's own files, which only the local CLI may touch.
import { join } from 'node:path';
import type { Command } from 'commander';
import { InvalidInputError } from '../errors.js';
import { outputOf, projectOf } from './context.js';

export function addSetupCommand(program: Command): void {
  program
    .command('setup <host>')
    .description(
      "wire a coding-agent host to this project's store: claude-code, codex, cursor or vscode (MCP server entry and instructions; see docs/hosts.md)",
    )
    .option('--dry-run', 'print what would change, write nothing')
    .option('--remove', 'take out exactly what setup wrote (other entries stay byte for byte)')
    .option(
      '--command <json>',
      'the server command and its first arguments, as a JSON list [default: ["npx","--no-install","agentstate"]]',
    )
    .action(
      async (host: string, o: { dryRun?: boolean; remove?: boolean; command?: string }, cmd: Command) => {
        const out = outputOf(cmd);
        const project = projectOf(cmd);
        let command: string[] | undefined;
        if (o.command !== undefined) {
          try {
            command = JSON.parse(o.command) as string[];
          } catch {
            throw new InvalidInputError(
              '--command must be a JSON list of strings, e.g. ["node","/path/cli.js"]',
              {
                field: 'command',
              },
            );
          }
          if (!Array.isArray(command)) {
            throw new InvalidInputError('--command must be a JSON list of strings', { field: 'command' });
          }
        }
        const { setupHost, diffOf, INSTANCE_DIR } = await import('../hosts/setup.js');
        const changes = setupHost({
          host,
          project,
          ...(o.remove ? { remove: true } : {}),
          ...(o.dryRun ? { dryRun: true } : {}),
          ...(command ? { command } : {}),
        });
        if (!o.remove && !o.dryRun) {
          // The store the server runs on: created now, so the host's first start finds it.
          const { openInstance } = await import('../instance/instance.js');
          await (await openInstance({ dir: join(project, INSTANCE_DIR) })).close();
        }
        out.emit(
          {
            host,
            project,
            dry_run: o.dryRun === true,
            changes: changes.map(({ path, action }) => ({ path, action })),
          },
          () =>
            changes
              .map((c) =>
                o.dryRun && c.action !== 'unchanged' ? diffOf(c) : `${c.action.padEnd(9)} ${c.path}`,
              )
              .join('\n'),
        );
      },
    );
}

/**
 * `agentstate hook <event>` as commander lists it. The entry (src/cli/main.ts) runs `hook` on its lean path
 * before commander loads; this makes it appear in `agentstate --help` and answers `agentstate help hook`.
 */
export function addHookCommand(program: Command): void {
  program
    .command('hook <event>')
    .description(
      "run a host's hook (session-start, pre-compact, post-tool-use, subagent-start, subagent-stop, stop): reads its JSON on stdin; never blocks the host (setup writes the entries; see docs/hosts.md)",
    )
    .allowUnknownOption()
    .helpOption(false)
    .action(async (_event: string, _o: unknown, cmd: Command) => {
      const { runHookCommand } = await import('./hook-command.js');
      process.exitCode = await runHookCommand(cmd.args);
    });
}
