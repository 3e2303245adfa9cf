// Writes dist/cjs/, what package.json's "require" conditions point at: for each subpath a CommonJS entry that
// is the ES module itself, loaded with require() (Node >= 20.19 / 22.12 load ES modules that way), and a copy
// of the declarations, in a folder marked CommonJS. A CommonJS consumer compiled with `moduleResolution:
// node16` otherwise gets TS1479 on every import (its compiler does not know require() of an ES module); the
// copies describe exactly what require() returns, the module's named exports, and one module instance is
// shared with `import` (no dual-package hazard).
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, posix, relative } from 'node:path';

const DIST = 'dist';
const OUT = join(DIST, 'cjs');
rmSync(OUT, { recursive: true, force: true });

function copyDeclarations(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const from = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (from !== OUT && from !== join(DIST, 'demo')) copyDeclarations(from);
    } else if (entry.name.endsWith('.d.ts')) {
      const to = join(OUT, relative(DIST, from));
      mkdirSync(dirname(to), { recursive: true });
      // The source map stays next to the original declaration; point the copy at it.
      const map = relative(dirname(to), `${from}.map`).split('\\').join('/');
      writeFileSync(
        to,
        readFileSync(from, 'utf8').replace(/^\/\/# sourceMappingURL=.*$/m, `//# sourceMappingURL=${map}`),
      );
    }
  }
}

copyDeclarations(DIST);
writeFileSync(join(OUT, 'package.json'), `${JSON.stringify({ type: 'commonjs' }, null, 2)}\n`);

/** Adapters whose entry names their optional peers when one is missing (src/adapters/peers.ts). */
const PEER_CHECKED = { './langgraph': 'langgraph', './openai-agents': 'openai-agents' };

const { exports } = JSON.parse(readFileSync('package.json', 'utf8'));
for (const [subpath, target] of Object.entries(exports)) {
  if (typeof target !== 'object' || !target.require) continue;
  // ./dist/cjs/<path>.js is the entry of ./dist/<path>.js.
  const entry = target.require.default.slice(2);
  const from = (path) => posix.relative(posix.dirname(entry), path);
  const esm = from(entry.replace(/^dist\/cjs\//, 'dist/'));
  const adapter = PEER_CHECKED[subpath];
  const peers = from('dist/adapters/peers.js');
  const body = adapter
    ? `try {\n  module.exports = require('${esm}');\n} catch (err) {\n  throw require('${peers}').missingPeerError('${adapter}', err) ?? err;\n}\n`
    : `module.exports = require('${esm}');\n`;
  mkdirSync(dirname(entry), { recursive: true });
  writeFileSync(
    entry,
    `'use strict';\n// CommonJS entry of @agentstate/store${subpath.slice(1)}: the ES module, loaded with require().\n${body}`,
  );
}
