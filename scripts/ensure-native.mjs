// Makes sure better-sqlite3's native addon is built: npm may skip dependency install scripts
// (npm 11 allowScripts) or fail to download a prebuilt binary, so we build from source if needed.
import { execSync } from 'node:child_process';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

function loads() {
  try {
    const Database = require('better-sqlite3');
    new Database(':memory:').close();
    return true;
  } catch (err) {
    return err;
  }
}

const first = loads();
if (first !== true) {
  console.error(
    `agentstate: better-sqlite3 native addon not usable (${first.message.split('\n')[0]}); building it from source…`,
  );
  execSync('npm rebuild better-sqlite3 --foreground-scripts --allow-scripts=better-sqlite3', {
    stdio: 'inherit',
  });
  const second = loads();
  if (second !== true) {
    console.error(`agentstate: better-sqlite3 still does not load: ${second.message}`);
    console.error('Install a C++ toolchain (python3, make, g++) and run `npm rebuild better-sqlite3`.');
    process.exit(1);
  }
}
