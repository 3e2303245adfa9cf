// Lints the package as npm would publish it: publint (package.json against the files) and
// Are the Types Wrong (types as each TypeScript resolution mode sees them). Packs dist/ as built, with the
// published manifest (scripts/pack.mjs; run `npm run build` first), or checks the tarball given as the
// argument.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pack } from './pack.mjs';

const given = process.argv[2];
const tmp = given ? undefined : mkdtempSync(join(tmpdir(), 'agentstate-pack-'));
const bin = (name) => join(import.meta.dirname, '..', 'node_modules', '.bin', name);
try {
  // --no-build: packing must not empty and rebuild dist/ under tests that are using it.
  const tarball = given ?? pack({ destination: tmp, build: false });
  execFileSync(bin('publint'), ['--strict', tarball], { stdio: 'inherit' });
  // Profile node16: node10 resolution (`moduleResolution: node`) predates `exports` and cannot see
  // subpaths. The package is ESM; its "require" conditions give CommonJS entries (dist/cjs/,
  // scripts/cjs-entries.mjs) that load the ES modules with require() (Node >= 20.19 / 22.12), with
  // declarations marked CommonJS, so a node16 CommonJS consumer resolves types without TS1479.
  execFileSync(bin('attw'), [tarball, '--profile', 'node16', '--no-emoji', '--no-color'], {
    stdio: 'inherit',
  });
} catch {
  process.exitCode = 1;
} finally {
  if (tmp) rmSync(tmp, { recursive: true, force: true });
}
