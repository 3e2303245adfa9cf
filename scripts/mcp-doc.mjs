// Writes the tool-list figures of docs/mcp.md from the MCP server itself (dist/mcp/): each tool's cost in the
// tools/list a host sends to the model (characters of its JSON, tokens ≈ characters / 4), the totals of the
// default tools and of `--tools core`, and which tools only read or are idempotent. Only the spans between
// `<!-- mcp-doc:NAME -->` and `<!-- /mcp-doc:NAME -->` are written; `--check` exits 1 when they are out of
// date (a test runs it), so the page cannot drift from the code.
import { readFileSync, writeFileSync } from 'node:fs';
import { InMemoryTransport } from '@modelcontextprotocol/server';

const { createAgentStateMcp } = await import('../dist/mcp/index.js');

/** The tools/list result exactly as the server sends it to a 2025-era client (what hosts embed today). */
async function toolsList(tools) {
  // tools/list never touches the instance.
  const mcp = createAgentStateMcp({ instance: {}, tools });
  const [client, serverSide] = InMemoryTransport.createLinkedPair();
  const server = await mcp.factory({ era: 'legacy' });
  await server.connect(serverSide);
  const replies = new Map();
  client.onmessage = (m) => replies.set(m.id, m);
  await client.start();
  const request = async (id, method, params) => {
    await client.send({ jsonrpc: '2.0', id, method, params });
    while (!replies.has(id)) await new Promise((r) => setTimeout(r, 1));
    const reply = replies.get(id);
    if (reply.error) throw new Error(`${method}: ${reply.error.message}`);
    return reply.result;
  };
  await request(1, 'initialize', {
    protocolVersion: '2025-11-25',
    capabilities: {},
    clientInfo: { name: 'mcp-doc', version: '1' },
  });
  await client.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  const result = await request(2, 'tools/list', {});
  await server.close();
  await mcp.close();
  return result;
}

const n = (x) => x.toLocaleString('en-US');
const tokens = (chars) => Math.round(chars / 4);
const kTokens = (chars) => `${(chars / 4000).toFixed(1)}k`;

const all = await toolsList('all');
const core = await toolsList('core');
const allChars = JSON.stringify(all).length;
const coreChars = JSON.stringify(core).length;
const byName = new Map(all.tools.map((t) => [t.name, t]));

/** Each generated span: its text from the current one (the tools table keeps its hand-written column). */
const SPANS = {
  all: () => `${n(allChars)} characters (≈ ${kTokens(allChars)} tokens)`,
  core: () => `${n(coreChars)} characters ≈ ${kTokens(coreChars)} tokens`,
  tools(current) {
    const named = [];
    const out = current.split('\n').map((row) => {
      // Cells split at unescaped pipes: tool, what (hand-written, kept), reads only, idempotent, cost.
      const cells = row
        .split(/(?<!\\)\|/)
        .slice(1, -1)
        .map((c) => c.trim());
      const tool = /^`([a-z_]+)`$/.exec(cells[0] ?? '')?.[1];
      if (tool !== undefined) {
        const t = byName.get(tool);
        if (!t) throw new Error(`docs/mcp.md: the tools table names ${tool}, which is no default tool`);
        named.push(tool);
        const chars = JSON.stringify(t).length;
        cells[2] = t.annotations?.readOnlyHint ? 'yes' : '';
        cells[3] = t.annotations?.idempotentHint ? 'yes' : '';
        cells[4] = `${n(chars)}${named.length === 1 ? ' chars' : ''} ≈ ${n(tokens(chars))}${named.length === 1 ? ' tokens' : ''}`;
      } else if (cells[0] === '**all ten**') {
        cells[4] = `**${n(allChars)} ≈ ${n(tokens(allChars))}**`;
      } else {
        return row;
      }
      return `|${cells.map((c) => (c === '' ? ' ' : ` ${c} `)).join('|')}|`;
    });
    const missing = all.tools.map((t) => t.name).filter((name) => !named.includes(name));
    if (missing.length > 0)
      throw new Error(`docs/mcp.md: the tools table has no row for ${missing.join(', ')}`);
    return out.join('\n');
  },
};

const path = new URL('../docs/mcp.md', import.meta.url);
const current = readFileSync(path, 'utf8');
let text = current;
for (const [name, make] of Object.entries(SPANS)) {
  const re = new RegExp(`(<!-- mcp-doc:${name} -->)([\\s\\S]*?)(<!-- /mcp-doc:${name} -->)`);
  const m = re.exec(text);
  if (!m) throw new Error(`docs/mcp.md has no <!-- mcp-doc:${name} --> span`);
  const inner = m[2];
  const block = inner.startsWith('\n');
  const made = make(block ? inner.slice(1, -1) : inner);
  text = text.replace(re, `$1${block ? `\n${made}\n` : made}$3`);
}
if (process.argv.includes('--check')) {
  if (text !== current) {
    console.error('docs/mcp.md: the tool-list figures are out of date: run node scripts/mcp-doc.mjs');
    process.exit(1);
  }
} else {
  writeFileSync(path, text);
  console.log(`wrote docs/mcp.md (tools/list ${n(allChars)} characters, core ${n(coreChars)})`);
}
