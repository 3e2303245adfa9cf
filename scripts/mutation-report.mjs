// After `stryker run` (npm run mutate): folds the run's report (reports/mutation/mutation.json, not committed)
// into the committed record of the trust core's scores, reports/mutation/scores.json, and writes
// reports/mutation/README.md from it: per module the mutants killed, timed out, survived and not covered, the
// score (detected ÷ valid, as Stryker counts it), the goal (90%), the date and commit of its last run, and each
// survivor with its place and replacement. A run of some modules (`npm run mutate -- --mutate <file>`) updates
// only their rows.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
// --dir <folder>: where the report and the record are [default: reports/mutation] (the script's test uses it).
const dirFlag = process.argv.indexOf('--dir');
const dir = dirFlag === -1 ? join(root, 'reports', 'mutation') : process.argv[dirFlag + 1];
const reportFile = join(dir, 'mutation.json');
const scoresFile = join(dir, 'scores.json');
const GOAL = 90;

if (!existsSync(reportFile)) {
  console.error(`${reportFile} is missing: run npm run mutate first`);
  process.exit(2);
}
// --check: exit 1 when a module of the record misses the goal (a survivor neither killed nor explained), so a
// scheduled run fails where a guarantee lost a test.
const check = process.argv.includes('--check');
const report = JSON.parse(readFileSync(reportFile, 'utf8'));
const scores = existsSync(scoresFile) ? JSON.parse(readFileSync(scoresFile, 'utf8')) : { modules: {} };
// Why a survivor is left alive, written by hand in scores.json: `"notes": { "<file>:<line>:<column>": "why" }`.
scores.notes ??= {};
let commit = 'unknown';
try {
  commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: root, encoding: 'utf8' }).trim();
} catch {
  // Not a git checkout: the date alone.
}
const date = new Date().toISOString().slice(0, 10);

/** `{a,b}` in a pattern of `mutate` spelled out (the only glob the config uses). */
const expand = (pattern) => {
  const m = /\{([^{}]*)\}/.exec(pattern);
  return m
    ? m[1]
        .split(',')
        .flatMap((alt) => expand(pattern.slice(0, m.index) + alt + pattern.slice(m.index + m[0].length)))
    : [pattern];
};
// The files this run mutated (`--mutate` or the config's list, a line range cut off). An incremental run's
// report also carries the earlier verdicts of every other module it knows: those keep their own row, date and
// commit instead of being restamped with this run's.
const mutated = new Set(
  (report.config?.mutate ?? Object.keys(report.files)).flatMap((p) => expand(p.replace(/:\d+-\d+$/, ''))),
);

for (const [file, { mutants }] of Object.entries(report.files)) {
  if (!mutated.has(file)) continue;
  const count = (status) => mutants.filter((m) => m.status === status).length;
  const row = {
    killed: count('Killed'),
    timeout: count('Timeout'),
    survived: count('Survived'),
    noCoverage: count('NoCoverage'),
    ignored: count('Ignored'),
    errors: count('CompileError') + count('RuntimeError'),
    date,
    commit,
    survivors: mutants
      .filter((m) => m.status === 'Survived' || m.status === 'NoCoverage')
      .map((m) => ({
        line: m.location.start.line,
        column: m.location.start.column,
        mutator: m.mutatorName,
        replacement: String(m.replacement ?? '').slice(0, 120),
        status: m.status,
        // A mutant of a module-level initializer: Stryker's vitest runner loads each module once per test
        // process, so it never activates one; no test can kill it here (a gap of the runner, listed apart).
        ...(m.static ? { static: true } : {}),
      }))
      .sort((a, b) => a.line - b.line || a.column - b.column),
  };
  const valid = row.killed + row.timeout + row.survived + row.noCoverage;
  row.score = valid === 0 ? null : Math.round(((row.killed + row.timeout) / valid) * 1000) / 10;
  scores.modules[file] = row;
}
// --prune: drop the rows, and the notes, of files that are no longer in the tree (code that moved: its new
// place gets its own row when it is run; scripts/mutation-rekey.mjs carries the notes there first).
if (process.argv.includes('--prune')) {
  const gone = (f) => !existsSync(join(root, f));
  for (const f of Object.keys(scores.modules)) if (gone(f)) delete scores.modules[f];
  for (const key of Object.keys(scores.notes))
    if (gone(key.replace(/:\d+:\d+$/, ''))) delete scores.notes[key];
}
writeFileSync(scoresFile, `${JSON.stringify(scores, null, 2)}\n`);

const files = Object.keys(scores.modules).sort();
/** How many of a module's survivors have a recorded reason, and how many are left to kill or explain. */
function verdict(f) {
  const { survivors } = scores.modules[f];
  const dynamic = survivors.filter((s) => !s.static);
  // A note that starts with "gap:" says why a survivor lives without excusing it: it stays to be killed.
  const explained = dynamic.filter((s) => {
    const note = scores.notes[`${f}:${s.line}:${s.column}`];
    return note !== undefined && !note.startsWith('gap:');
  }).length;
  const unexplained = dynamic.length - explained;
  const unrun = survivors.length - dynamic.length;
  const r = scores.modules[f];
  const valid = r.killed + r.timeout + r.survived + r.noCoverage - explained - unrun;
  const without = valid <= 0 ? null : Math.round(((r.killed + r.timeout) / valid) * 1000) / 10;
  const met = unexplained === 0 && (without ?? 100) >= GOAL;
  return { explained, unexplained, unrun, without, met };
}
const lines = [
  '# Mutation scores of the trust core',
  '',
  'Written by `npm run mutate` (Stryker over the modules of `stryker.config.mjs`, with the tests of',
  '`vitest.mutate.config.ts`; then `scripts/mutation-report.mjs`). Score = mutants detected (killed or timed',
  `out) ÷ valid mutants (those plus survived and not covered). Goal: ${GOAL}% in each module. A module's row is`,
  'from its last run (date and commit); the modules not listed have not been run yet.',
  '',
  'Equivalent mutants are marked where they live, with `// Stryker disable next-line <mutators>: <why>`, and',
  "counted as ignored, not in the score. A survivor is *explained* when scores.json's `notes` records why it is",
  'equivalent (no test can tell it from the original); a note starting with "gap:" says why it lives without',
  "excusing it. *Not run*: mutants of module-level initializers, which Stryker's vitest runner never activates",
  '(it loads each module once per test process), so no test can kill them here: a gap of the runner, listed',
  'apart. "Without them" is the score with the explained and the not-run left out. A module meets the goal',
  'when that reaches it and every other survivor is killed or explained.',
  '',
  '| module | score | explained | not run | without them | unexplained | goal | killed | timeout | survived | no coverage | last run |',
  '|---|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---|',
  ...files.map((f) => {
    const r = scores.modules[f];
    const pct = (x) => (x === null ? '—' : `${x}%`);
    const { explained, unexplained, unrun, without, met } = verdict(f);
    const goal = met
      ? 'met'
      : unexplained > 0
        ? `open: ${unexplained} to kill or explain`
        : 'open: below the goal';
    return `| \`${f}\` | ${pct(r.score)} | ${explained} | ${unrun} | ${pct(without)} | ${unexplained} | ${goal} | ${r.killed} | ${r.timeout} | ${r.survived} | ${r.noCoverage} | ${r.date} ${r.commit} |`;
  }),
  '',
  '## Survivors',
  '',
  'Each is a test to write or a reason it is equivalent to record (line:column, mutator, replacement; a',
  "reason, when one is recorded in scores.json's `notes`, follows the dash).",
  '',
];
for (const f of files) {
  const { survivors } = scores.modules[f];
  if (survivors.length === 0) continue;
  lines.push(`### \`${f}\``, '');
  for (const s of survivors) {
    const what = s.replacement.replace(/\s+/g, ' ').replace(/`/g, "'");
    const note = scores.notes[`${f}:${s.line}:${s.column}`];
    const how = s.static
      ? ' (not run: a module-level initializer)'
      : s.status === 'NoCoverage'
        ? ' (no test covers it)'
        : '';
    lines.push(`- ${s.line}:${s.column} ${s.mutator}${how}: \`${what}\`${note ? ` — ${note}` : ''}`);
  }
  lines.push('');
}
writeFileSync(join(dir, 'README.md'), lines.join('\n'));
console.log(`reports/mutation/README.md: ${files.length} module(s)`);
for (const f of Object.keys(report.files).filter((f) => mutated.has(f))) {
  const r = scores.modules[f];
  console.log(`  ${f}: ${r.score ?? '—'}% (${r.survived} survived, ${r.noCoverage} not covered)`);
}
if (check) {
  const open = files.filter((f) => !verdict(f).met);
  if (open.length > 0) {
    console.error(
      `mutation goal missed in ${open.length} module(s): ${open.join(', ')} (see reports/mutation/README.md)`,
    );
    process.exit(1);
  }
}
