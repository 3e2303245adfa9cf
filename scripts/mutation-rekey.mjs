// Carries the hand-written notes of reports/mutation/scores.json (`"<file>:<line>:<column>": "why"`) to where
// their code lives now, after code moved between files or lines since revision <rev>. A note is keyed by the
// place of its survivor, so moving a function would orphan it and the next Stryker run would report the same
// equivalent mutant as unexplained. For each note whose line no longer holds the same text, the line of <rev>
// is looked for in today's src/ (its text, trimmed; ties broken by the lines around it) and the note is copied
// to the new place, the column shifted by the change of indentation. The old key stays (the module's record
// still names the old place until Stryker runs it again; scripts/mutation-report.mjs then drops records and
// notes of files that no longer exist).
//   node scripts/mutation-rekey.mjs --from <rev>            # print what would move, and what cannot be found
//   node scripts/mutation-rekey.mjs --from <rev> --write    # and write the new keys into scores.json
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const arg = (name) => {
  const i = process.argv.indexOf(name);
  return i === -1 ? undefined : process.argv[i + 1];
};
// --root <checkout> (the script's test uses it): the git checkout whose src/ is searched [default: this one].
const root = arg('--root') ?? join(dirname(fileURLToPath(import.meta.url)), '..');
const from = arg('--from');
if (!from) {
  console.error(
    'usage: node scripts/mutation-rekey.mjs --from <rev> [--write] [--dir <folder>] [--root <checkout>]',
  );
  process.exit(2);
}
const dir = arg('--dir') ?? join(root, 'reports', 'mutation');
const write = process.argv.includes('--write');
const scoresFile = join(dir, 'scores.json');
const scores = JSON.parse(readFileSync(scoresFile, 'utf8'));
const notes = scores.notes ?? {};

const oldFiles = new Map();
/** The lines of `file` at revision `from` (null when it did not exist then). */
function oldLines(file) {
  if (!oldFiles.has(file)) {
    try {
      const text = execFileSync('git', ['show', `${from}:${file}`], { cwd: root, encoding: 'utf8' });
      oldFiles.set(file, text.split('\n'));
    } catch {
      oldFiles.set(file, null);
    }
  }
  return oldFiles.get(file);
}

/** Every .ts file under src/, with its lines now. */
function tree(d) {
  return readdirSync(d, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? tree(join(d, e.name)) : e.name.endsWith('.ts') ? [join(d, e.name)] : [],
  );
}
const now = new Map(
  tree(join(root, 'src')).map((f) => [relative(root, f), readFileSync(f, 'utf8').split('\n')]),
);

const indent = (s) => s.length - s.trimStart().length;
/** How many of the 3 lines either side of line index `i` in `a` equal those around `j` in `b` (trimmed). */
function context(a, i, b, j) {
  let same = 0;
  for (let d = 1; d <= 3; d++) {
    for (const k of [-d, d]) {
      if (a[i + k] !== undefined && b[j + k] !== undefined && a[i + k].trim() === b[j + k].trim()) same++;
    }
  }
  return same;
}

const moved = [];
const lost = [];
for (const [key, why] of Object.entries(notes)) {
  const m = /^(.*):(\d+):(\d+)$/.exec(key);
  if (!m) continue;
  const [, file, lineText, colText] = m;
  const line = Number(lineText);
  const col = Number(colText);
  const before = oldLines(file);
  if (before === null || before[line - 1] === undefined) continue; // a note of code newer than <rev>
  const text = before[line - 1];
  const here = now.get(file);
  if (here !== undefined && here[line - 1] === text) continue; // still where it was
  // The same line, or failing that a line that holds it whole (a statement that became a `return`).
  const find = (fits) => {
    let best = null;
    let tie = false;
    for (const [f, lines] of now) {
      for (let j = 0; j < lines.length; j++) {
        if (!fits(lines[j])) continue;
        const score = context(before, line - 1, lines, j) + (f === file ? 0.5 : 0);
        if (best === null || score > best.score) {
          best = { file: f, line: j + 1, score, col: col - indent(text) + lines[j].indexOf(text.trim()) };
          tie = false;
        } else if (score === best.score) tie = true;
      }
    }
    return { best, tie };
  };
  let { best, tie } = find((l) => l.trim() === text.trim());
  if (best === null) ({ best, tie } = find((l) => l.includes(text.trim())));
  if (best === null || tie) {
    lost.push({ key, text: text.trim(), reason: best === null ? 'not found' : 'several places fit' });
    continue;
  }
  const to = `${best.file}:${best.line}:${best.col}`;
  if (to !== key) moved.push({ key, to, why });
}

for (const { key, to } of moved) console.log(`${key} -> ${to}`);
for (const { key, text, reason } of lost) console.log(`LOST ${key} (${reason}): ${text}`);
console.log(`${moved.length} note(s) moved, ${lost.length} not placed`);
if (write) {
  for (const { to, why } of moved) notes[to] ??= why;
  scores.notes = notes;
  writeFileSync(scoresFile, `${JSON.stringify(scores, null, 2)}\n`);
  console.log(`${relative(root, scoresFile)} written`);
}
