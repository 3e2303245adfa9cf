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
        // A global option of the other commands; workflows read no state files.
        project: { type: 'string' },
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
      `Usage: agentstate ${name} [options]\n\n` +
        `${WORKFLOWS[name as keyof typeof WORKFLOWS].summary}\n\n` +
        'Options:\n' +
        '  -p, --payload <json>  the payload, a JSON object (- reads stdin) [default: MF_TRIGGER_PAYLOAD_JSON,\n' +
        '                        or the file MF_TRIGGER_PAYLOAD_FILE names (- for stdin); empty means {}]\n' +
        '  -h, --help            display help for command\n\n' +
        'Global Options:\n' +
        '  --dir <path>          the instance folder itself (like MF_INSTANCE_DIR)\n' +
        '  --name <name>         agent name (like MF_AGENT_NAME)\n' +
        '  --host <host>         host name (like MF_HOST) [default: this machine]\n' +
        '  --root <path>         folder holding <host>/agents/<name> [default: AGENTSTATE_ROOT, $XDG_CONFIG_HOME or ~/.config]\n' +
        '  --durability <mode>   SQLite sync mode, full or normal (or AGENTSTATE_DURABILITY)\n' +
        '  --url <url>           shared store, e.g. postgres://user@host/db (or AGENTSTATE_URL)\n' +
        '  --json                accepted; workflows always print JSON\n\n' +
        'Prints one JSON document; errors go to stderr as {"error":{"code","message"}} with exit codes\n' +
        '1 not found, 2 invalid input, 3 conflict, 4 refused, 5 storage. ' +
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
    payloadSource: values.payload === '-' ? 'payload (stdin)' : 'payload',
    dir: values.dir as string | undefined,
    name: values.name as string | undefined,
    host: values.host as string | undefined,
    root: values.root as string | undefined,
    durability: values.durability as string | undefined,
    url: values.url as string | undefined,
  });
}
