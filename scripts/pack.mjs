// Packs the package as it is published: npm picks the files (package.json `files`), then the tarball's
// package.json is replaced by the published manifest (publishedManifest below), without the repository's
// scripts (`prepare` builds dist/ and the native addon in a clone; in a tarball npm would warn about it on
// every install), dev dependencies or npm settings, and packed again. Publish the result:
//   npm run package && npm publish agentstate-store-<version>.tgz
// Options: --pack-destination <dir> (default: the current folder), --no-build (pack dist/ as it is: tests do,
// while other tests run the CLI from it; by default dist/ is emptied and rebuilt first, so the tarball holds
// only what the current sources compile to). Prints the tarball's path.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';

/** The package.json fields a consumer's tools read; anything else stays in the repository. */
export const PUBLISHED_FIELDS = [
  'name',
  'version',
  'description',
  'keywords',
  'homepage',
  'bugs',
  'repository',
  'license',
  'author',
  'type',
  'engines',
  'bin',
  'main',
  'types',
  'exports',
  'files',
  'publishConfig',
  'dependencies',
  'peerDependencies',
  'peerDependenciesMeta',
];

/** The manifest a consumer gets: the repository's package.json, with only PUBLISHED_FIELDS. */
export function publishedManifest(pkg) {
  return Object.fromEntries(PUBLISHED_FIELDS.filter((k) => k in pkg).map((k) => [k, pkg[k]]));
}

const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

function npmPack(cwd, dest) {
  // --ignore-scripts: the repository's prepack refuses (it would publish the development manifest).
  const out = execFileSync(npm, ['pack', '--ignore-scripts', '--json', '--pack-destination', dest], {
    cwd,
    encoding: 'utf8',
  });
  return join(dest, JSON.parse(out)[0].filename);
}

export function pack({ destination = '.', build = true } = {}) {
  const root = resolve(import.meta.dirname, '..');
  if (build) {
    rmSync(join(root, 'dist'), { recursive: true, force: true });
    execFileSync(npm, ['run', 'build'], { cwd: root, stdio: 'inherit' });
  }
  const tmp = mkdtempSync(join(tmpdir(), 'agentstate-pack-'));
  try {
    const first = npmPack(root, tmp);
    execFileSync('tar', ['-xzf', first, '-C', tmp]);
    const folder = join(tmp, 'package');
    const pkg = JSON.parse(readFileSync(join(folder, 'package.json'), 'utf8'));
    writeFileSync(join(folder, 'package.json'), `${JSON.stringify(publishedManifest(pkg), null, 2)}\n`);
    return npmPack(folder, resolve(destination));
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

if (import.meta.filename === resolve(process.argv[1] ?? '')) {
  const { values } = parseArgs({
    options: {
      'pack-destination': { type: 'string' },
      'no-build': { type: 'boolean' },
      refuse: { type: 'boolean' },
    },
  });
  if (values.refuse) {
    // `prepack` of the repository: `npm pack` / `npm publish` here would ship the development manifest.
    console.error(
      'agentstate: this package.json is the development manifest (scripts, dev dependencies, npm settings); ' +
        'pack with `npm run package` and publish its tarball: npm publish agentstate-store-<version>.tgz',
    );
    process.exit(1);
  }
  const tarball = pack({
    destination: values['pack-destination'] ?? '.',
    build: values['no-build'] !== true,
  });
  console.log(tarball);
}
