#!/usr/bin/env node
// agentstate CLI entry. Workflow names (PascalCase) take a lean path that loads no CLI framework, so a
// host spawning one workflow per lifecycle moment pays only for Node, the driver and the store.
import { parseArgs } from 'node:util';
import { isWorkflowName } from '../workflows/registry.js';

// A closed pipe (`agentstate events | head`) ends the output quietly.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw err;
});

const argv = process.argv.slice(2);
const VALUE_FLAGS = new Set([
  '--dir',
  '--name',
  '--host',
  '--root',
  '--payload',
  '-p',
  '--durability',
  '--url',
]);

/** Index of the command word: the first argument that is neither a flag nor a flag's value. */
function commandIndex(args: string[]): number {
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (VALUE_FLAGS.has(a)) i++;
    else if (!a.startsWith('-')) return i;
  }
  return -1;
}

const at = commandIndex(argv);
const command = at >= 0 ? argv[at]! : undefined;

if (command !== undefined && isWorkflowName(command)) {
  process.exitCode = await runWorkflowCommand(command, [...argv.slice(0, at), ...argv.slice(at + 1)]);
} else {
  const { runCli } = await import('./program.js');
  process.exitCode = await runCli(argv);
}

async function runWorkflowCommand(name: string, rest: string[]): Promise<number> {
  const { runWorkflowProcess, reportError } = await import('../workflows/process.js');
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: rest,
      options: {
        payload: { type: 'string', short: 'p' },
        dir: { type: 'string' },
        name: { type: 'string' },
        host: { type: 'string' },
        root: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
        // Workflows always print JSON; accepted so global flags work in any position.
        json: { type: 'boolean' },
        durability: { type: 'string' },
        url: { type: 'string' },
      },
      strict: true,
    }));
  } catch (err) {
    const { InvalidInputError } = await import('../errors.js');
    return reportError(new InvalidInputError(`${name}: ${(err as Error).message}`));
  }
  if (values.help) {
    const { WORKFLOWS } = await import('../workflows/registry.js');
    process.stdout.write(
      `Usage: agentstate ${name} [--payload JSON | --payload -] [--dir DIR | --name NAME [--host HOST] [--root ROOT]]\n\n` +
        `${WORKFLOWS[name as keyof typeof WORKFLOWS].summary}\n\n` +
        'The payload comes from --payload (- reads stdin) or MF_TRIGGER_PAYLOAD_JSON; the instance from the flags or\n' +
        'MF_INSTANCE_DIR / MF_AGENT_NAME / MF_HOST. Prints one JSON document; errors go to stderr as\n' +
        '{"error":{"code","message"}} with exit codes 1 not found, 2 invalid input, 3 conflict, 4 refused, 5 storage.\n' +
        `See skill/Workflows/${name}.md.\n`,
    );
    return 0;
  }
  let payloadText = values.payload as string | undefined;
  if (payloadText === '-') {
    const { readInputText } = await import('./read-input.js');
    try {
      payloadText = await readInputText('-', 'payload');
    } catch (err) {
      return reportError(err);
    }
  }
  return runWorkflowProcess(name, {
    payloadText,
    dir: values.dir as string | undefined,
    name: values.name as string | undefined,
    host: values.host as string | undefined,
    root: values.root as string | undefined,
    durability: values.durability as string | undefined,
    url: values.url as string | undefined,
  });
}
