// One bundle workflow run from the command line (`agentstate EnqueueWorkItem --payload …`): flags parsed
// without a CLI framework, so a host spawning one workflow per lifecycle moment pays only for what it needs.
import { parseArgs } from 'node:util';

/** Runs workflow `name` with the flags after its name; returns the exit code. */
export async function runWorkflowCommand(name: string, rest: string[]): Promise<number> {
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
