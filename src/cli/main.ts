#!/usr/bin/env node
// agentstate CLI entry. Workflow names (PascalCase) take a lean path that loads no CLI framework, so a
// host spawning one workflow per lifecycle moment pays only for Node, the driver and the store.
import { isWorkflowName } from '../workflows/registry.js';

// A closed pipe (`agentstate events | head`) ends the output quietly.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw err;
});

const argv = process.argv.slice(2);
const first = argv[0];

// The way hosts call a workflow (its name first) skips commander; anything else, global options before a
// workflow name included, is commander's to dispatch.
if (first === 'hook') {
  // A host waits for its hooks at every lifecycle moment: no CLI framework on this path either.
  const { runHookCommand } = await import('./hook-command.js');
  process.exitCode = await runHookCommand(argv.slice(1));
} else if (first !== undefined && isWorkflowName(first)) {
  const { runWorkflowCommand } = await import('./workflow-command.js');
  process.exitCode = await runWorkflowCommand(first, argv.slice(1));
} else {
  const { runCli } = await import('./program.js');
  process.exitCode = await runCli(argv);
}
