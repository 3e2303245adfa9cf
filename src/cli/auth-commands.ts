// `agentstate auth add | list | revoke`: the named principals `serve` and `mcp --http` take besides the owner's
// token, kept in the root's principals file (never inside an instance folder). Local administration: whoever
// runs the CLI owns the root.
import { type Command, Option } from 'commander';
import { ROLES, type Role } from '../auth/access.js';
import { type PrincipalRecord, PrincipalStore } from '../auth/principals.js';
import { instanceRoot } from '../instance/paths.js';
import { resolveInstance } from '../service/instance-resolver.js';
import { type GlobalOpts, outputOf } from './context.js';

function storeOf(cmd: Command): PrincipalStore {
  return new PrincipalStore(instanceRoot(resolveInstance(cmd.optsWithGlobals<GlobalOpts>()).root));
}

const line = (p: PrincipalRecord) =>
  `${p.name}  ${p.role}${p.read_only ? ' (read-only)' : ''}  ${p.id}  created ${p.created_at}${p.revoked_at ? `  revoked ${p.revoked_at}` : ''}`;

export function addAuthCommands(program: Command): void {
  program.commandsGroup('Network access:');
  const group = program
    .command('auth')
    .description('named tokens for serve and mcp --http: agents, humans and admins (kept in the root)');

  group
    .command('add')
    .description('create a principal and print its token once (only a hash of it is kept)')
    .argument('<name>', 'who it is: recorded as the actor of its writes (letters, digits, . _ @ + -)')
    .addOption(
      new Option('--role <role>', 'agent (a model or program), human, or admin')
        .choices([...ROLES])
        .makeOptionMandatory(),
    )
    .option('--read-only', 'may read, never write')
    .action((name: string, o: { role: Role; readOnly?: boolean }, cmd: Command) => {
      const store = storeOf(cmd);
      const { principal, token } = store.add({ name, role: o.role, read_only: o.readOnly === true });
      outputOf(cmd).emit(
        { ...principal, token, file: store.file },
        () =>
          `${line(principal)}\ntoken (shown once, keep it secret): ${token}\nkept as a hash in ${store.file}`,
      );
    });

  group
    .command('list')
    .description('the principals, revoked ones included (never their tokens)')
    .action((_o, cmd: Command) => {
      const list = storeOf(cmd).list();
      outputOf(cmd).emit(list, () =>
        list.length === 0 ? 'no principals: agentstate auth add <name> --role …' : list.map(line).join('\n'),
      );
    });

  group
    .command('revoke')
    .description('revoke a principal: its token and its dashboard sessions stop working at once')
    .argument('<name>', 'the principal')
    .action((name: string, _o, cmd: Command) => {
      const p = storeOf(cmd).revoke(name);
      outputOf(cmd).emit(p, () => `revoked ${line(p)}`);
    });
}
