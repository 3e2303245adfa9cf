// Writes docs/operations.md from the operation table (dist/service/table.js): every operation with its
// description, whether it writes, what instance it needs, and its input fields. `--check` exits 1 when the
// file is out of date (a test runs it), so the page cannot drift from the table.
import { readFileSync, writeFileSync } from 'node:fs';

const { OPERATIONS } = await import('../dist/service/table.js');
const { WORKFLOWS } = await import('../dist/workflows/registry.js');
const byOp = new Map(Object.entries(WORKFLOWS).map(([w, d]) => [d.operation, w]));
const GROUPS = {
  work: 'Work items',
  events: 'Events',
  documents: 'Documents',
  files: 'State files',
  reports: 'Reports',
  instance: 'Instances',
  workflow: 'Workflow SDK runs',
};

function type(s) {
  if (s.anyOf) return s.anyOf.map(type).join(' \\| ');
  if (s.enum) return s.enum.map((v) => `\`${v}\``).join(' \\| ');
  if (s.type === undefined) return 'JSON';
  const t = Array.isArray(s.type) ? s.type.join(' \\| ') : s.type;
  return s.type === 'array' && s.items ? `${type(s.items)}[]` : t;
}

const lines = [
  '# Operations',
  '',
  'Generated from the operation table (`src/service/`) by `node scripts/operations-doc.mjs`; do not edit by hand.',
  'Every edge is a view of these: the library (`runOperation`, `invoke`), the CLI commands, the bundle workflows',
  '(named in the last column), the HTTP API of `agentstate serve` (`/api/v1/<operation>` for every operation that',
  'is not local; [http.md](http.md)) and the MCP server, whose tools are generated from some of them',
  "([mcp.md](mcp.md)). Inputs are validated against each operation's JSON Schema (`OPERATIONS[i].input`);",
  'results follow `OPERATIONS[i].output`. *Local* operations read or write paths the caller names on this',
  'machine and are not offered to network callers. The *instance* column says what an operation needs:',
  '`required` an existing instance (a missing one is `NOT_FOUND`, and nothing is created), `create` creates it',
  'when missing (`init` / ScaffoldFolders, `instance import`), `optional` runs without one when none is named,',
  '`none` never opens one.',
  '',
];
for (const [group, title] of Object.entries(GROUPS)) {
  const ops = OPERATIONS.filter((o) => o.group === group);
  if (ops.length === 0) continue;
  lines.push(
    `## ${title}`,
    '',
    '| operation | what it does | writes | instance | input | workflow |',
    '|---|---|---|---|---|---|',
  );
  for (const op of ops) {
    const req = new Set(op.input.required ?? []);
    const fields = Object.entries(op.input.properties ?? {})
      .map(([k, s]) => `${req.has(k) ? `**${k}**` : k}: ${type(s)}`)
      .join(', ');
    const flags = [op.writes ? 'yes' : 'no', op.idempotent ? '(idempotent)' : ''].filter(Boolean).join(' ');
    const inst = `${op.instance ?? 'required'}${op.local ? ', local' : ''}`;
    lines.push(
      `| \`${op.name}\` | ${op.description.replaceAll('|', '\\|')} | ${flags} | ${inst} | ${fields || '—'} | ${byOp.get(op.name) ?? ''} |`,
    );
  }
  lines.push('');
}
const text = `${lines.join('\n')}`;
const path = new URL('../docs/operations.md', import.meta.url);
if (process.argv.includes('--check')) {
  let current = '';
  try {
    current = readFileSync(path, 'utf8');
  } catch {}
  if (current !== text) {
    console.error('docs/operations.md is out of date: run node scripts/operations-doc.mjs');
    process.exit(1);
  }
} else {
  writeFileSync(path, text);
  console.log(`wrote docs/operations.md (${OPERATIONS.length} operations)`);
}
