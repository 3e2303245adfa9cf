// Lints the package as npm would publish it: publint (package.json against the files) and
// Are the Types Wrong (types as each TypeScript resolution mode sees them). Packs dist/ as built
// (run `npm run build` first), or checks the tarball given as the argument.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// `--ignore-scripts`: packing must not clean and rebuild dist/ under tests that are using it.
function pack(dir) {
  const out = execFileSync('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', dir], {
    encoding: 'utf8',
  });
  return join(dir, JSON.parse(out)[0].filename);
}

const given = process.argv[2];
const tmp = given ? undefined : mkdtempSync(join(tmpdir(), 'agentstate-pack-'));
const tarball = given ?? pack(tmp);
const bin = (name) => join(import.meta.dirname, '..', 'node_modules', '.bin', name);
try {
  execFileSync(bin('publint'), ['--strict', tarball], { stdio: 'inherit' });
  // Profile node16: node10 resolution (`moduleResolution: node`) predates `exports` and cannot
  // see subpaths. cjs-resolves-to-esm is ignored because that is the design: the package is ESM,
  // and CommonJS loads it with require() on Node >= 20.19 / 22.12 (require(esm)); TypeScript >= 5.8
  // types that require under `module: node20` or `nodenext`, while attw's TypeScript (5.6) and
  // `module: node16` still call it import-only. Every other rule applies to CommonJS consumers too.
  execFileSync(
    bin('attw'),
    [tarball, '--profile', 'node16', '--ignore-rules', 'cjs-resolves-to-esm', '--no-emoji', '--no-color'],
    { stdio: 'inherit' },
  );
} catch {
  process.exitCode = 1;
} finally {
  if (tmp) rmSync(tmp, { recursive: true, force: true });
}
