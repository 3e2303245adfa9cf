// `npm run test:workflow-world` after the build: the Workflow SDK's own World conformance suite
// (@workflow/world-testing, pinned in test/workflow-world/sdk/package.json) against agentstate's World, on
// SQLite and on PostgreSQL. The suite brings 486 packages of its own, so it is installed apart, from its own
// lockfile, the first time, and run with its own vitest. Extra arguments go to vitest (e.g. `-- sqlite` for
// one backend). The install is `npm install --no-save` on that lockfile, not `npm ci`: the lockfile names
// optional platform packages of cbor-extract that a registry may not serve (npm ci then refuses the whole
// lockfile as out of sync; npm install skips a missing optional package and leaves the lockfile as it is).
// Install scripts are off: the suite's own workflows come prebuilt; ours (workflows/, for the crash and
// two-process tests) are compiled here by the SDK's `workflow build`, as an app would compile them.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const suite = join(dirname(fileURLToPath(import.meta.url)), '..', 'test', 'workflow-world', 'sdk');
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

function run(command, args) {
  const r = spawnSync(command, args, { cwd: suite, stdio: 'inherit' });
  if (r.status !== 0) process.exit(r.status ?? 1);
}

if (!existsSync(join(suite, 'node_modules', '@workflow', 'world-testing'))) {
  console.log('installing the Workflow SDK suite into test/workflow-world/sdk (once; about 40 s)');
  run(npm, ['install', '--no-save', '--ignore-scripts', '--no-audit', '--no-fund']);
}
run(process.execPath, [join(suite, 'node_modules', '@workflow', 'cli', 'bin', 'run.js'), 'build']);
run(process.execPath, [join(suite, 'node_modules', 'vitest', 'vitest.mjs'), 'run', ...process.argv.slice(2)]);
