// After the build: the durable-agent example of the Workflow World (examples/workflow-agent: DurableAgent of
// @workflow/ai with two tools on agentstate's World, on embedded SQLite) and its crash test. The example has
// its own package.json and lockfile (workflow, @workflow/cli, @workflow/ai, ai 6 and @agentstate/store as a
// link to this checkout, about 470 packages), so it is installed apart, the first time; then its workflows
// are compiled (`workflow build`: .well-known/workflow/v1/) and test.mjs runs: it SIGKILLs the app between
// the agent's two tools, restarts it past the dead process's lease and checks the run completes with each
// tool's side effect done once and `agentstate verify` clean. Extra arguments go to test.mjs (`--keep`).
// The install is `npm install --no-save` on the lockfile with install scripts off, as for the SDK suite
// (scripts/workflow-world-suite.mjs): nothing in it needs a script (@swc/core and esbuild ship their
// binaries as packages), and the link to this checkout must not run its `prepare`.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const example = join(root, 'examples', 'workflow-agent');
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

function run(command, args) {
  const r = spawnSync(command, args, { cwd: example, stdio: 'inherit' });
  if (r.status !== 0) process.exit(r.status ?? 1);
}

if (!existsSync(join(root, 'dist', 'workflow-world', 'world.js'))) {
  console.error('dist/ is missing: run npm run build first');
  process.exit(1);
}
const installed = ['workflow', '@workflow/cli', '@workflow/ai', 'ai'].every((p) =>
  existsSync(join(example, 'node_modules', p, 'package.json')),
);
if (!installed) {
  console.log('installing the workflow-agent example into examples/workflow-agent (once; about 25 s)');
  run(npm, ['install', '--no-save', '--ignore-scripts', '--no-audit', '--no-fund']);
}
run(process.execPath, [join(example, 'node_modules', '@workflow', 'cli', 'bin', 'run.js'), 'build']);
run(process.execPath, [join(example, 'test.mjs'), ...process.argv.slice(2)]);
