// `agentstate setup <host>` for Claude Code, Codex, Cursor and VS Code, through the built CLI: on an empty
// project, on a project with the user's own configuration (kept byte for byte, and given back exactly by
// --remove), twice (nothing changes), as a dry run (nothing written), on hostile files (refused, nothing
// written), and the written MCP entry started the way the host starts it and initialized with the official
// MCP client.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { describe, expect, it } from 'vitest';
import { CLI, cleanEnv, runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';

const root = tempDir('agentstate-setup-');
let n = 0;
const COMMAND = JSON.stringify([process.execPath, CLI]);

interface HostCase {
  host: string;
  mcp: string;
  instructions: string;
  /** The hooks file, for the hosts that have hooks. */
  hooks?: string;
  /** The user's own files before setup. */
  user: Record<string, string>;
  /** The server entry as the host reads it: command, args (host variables substituted for `project`). */
  entry(project: string): { command: string; args: string[] };
}

const jsonEntry = (file: string, key: string, vars: Record<string, string>) => (project: string) => {
  const text = readFileSync(join(project, file), 'utf8').replace(/^\s*\/\/.*$/gm, '');
  const e = (JSON.parse(text) as Record<string, Record<string, { command: string; args: string[] }>>)[key]!
    .agentstate!;
  const sub = (s: string) =>
    Object.entries(vars).reduce((x, [k, v]) => x.split(k).join(v === '$P' ? project : v), s);
  return { command: e.command, args: e.args.map(sub) };
};

const CASES: HostCase[] = [
  {
    host: 'claude-code',
    mcp: '.mcp.json',
    instructions: 'CLAUDE.md',
    hooks: '.claude/settings.json',
    user: {
      '.claude/settings.json':
        '{\n  // my settings\n  "permissions": { "allow": ["Bash(ls)"] },\n  "hooks": {\n    "Stop": [\n      { "hooks": [{ "type": "command", "command": "say done" }] }\n    ]\n  }\n}\n',
      '.mcp.json':
        '{\n  // my servers\n  "mcpServers": {\n    "search": { "command": "search-mcp", "args": ["--fast"] }\n  },\n  "extra": [1, 2]\n}\n',
      'CLAUDE.md': '# My project\n\nUse tabs. Ünïcode stays.\n',
    },
    entry: jsonEntry('.mcp.json', 'mcpServers', { '${CLAUDE_PROJECT_DIR:-.}': '$P' }),
  },
  {
    host: 'codex',
    mcp: '.codex/config.toml',
    instructions: 'AGENTS.md',
    hooks: '.codex/hooks.json',
    user: {
      '.codex/hooks.json':
        '{\n\t"hooks": {\n\t\t"SessionStart": [\n\t\t\t{ "hooks": [{ "type": "command", "command": "./mine.sh" }] }\n\t\t]\n\t}\n}\n',
      '.codex/config.toml':
        '# my codex\nmodel = "o4"\n\n[mcp_servers.search] # mine\ncommand = "search-mcp"\n',
      'AGENTS.md': '# Agents\n\n- be brief\n',
    },
    entry: (project) => {
      const text = readFileSync(join(project, '.codex/config.toml'), 'utf8');
      const block = text.slice(text.indexOf('[mcp_servers.agentstate]'));
      const command = JSON.parse(/^command = (.*)$/m.exec(block)![1]!) as string;
      const args = JSON.parse(/^args = (.*)$/m.exec(block)![1]!) as string[];
      // Codex starts servers in the project (its cwd): the relative store folder is the project's.
      return { command, args: args.map((a) => (a === '.agentstate' ? join(project, a) : a)) };
    },
  },
  {
    host: 'cursor',
    mcp: '.cursor/mcp.json',
    instructions: '.cursor/rules/agentstate.mdc',
    user: { '.cursor/mcp.json': '{\n\t"mcpServers": {\n\t\t"db": { "url": "http://localhost:9" }\n\t}\n}\n' },
    entry: (project) => {
      const e = jsonEntry('.cursor/mcp.json', 'mcpServers', {})(project);
      return { ...e, args: e.args.map((a) => (a === '.agentstate' ? join(project, a) : a)) };
    },
  },
  {
    host: 'vscode',
    mcp: '.vscode/mcp.json',
    instructions: '.github/copilot-instructions.md',
    user: {
      '.vscode/mcp.json':
        '{\n  "servers": {\n    "gh": { "type": "http", "url": "https://example.com/mcp" }\n  }\n}',
      '.github/copilot-instructions.md': 'Prefer small PRs.\n',
    },
    entry: jsonEntry('.vscode/mcp.json', 'servers', { '${workspaceFolder}': '$P' }),
  },
];

function project(files: Record<string, string> = {}): string {
  const dir = join(root, `p${++n}`);
  mkdirSync(dir, { recursive: true });
  for (const [f, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, f)), { recursive: true });
    writeFileSync(join(dir, f), text);
  }
  return dir;
}

const setup = (dir: string, ...args: string[]) =>
  runCli(['--project', dir, 'setup', ...args, '--command', COMMAND]);

const read = (dir: string, f: string) =>
  existsSync(join(dir, f)) ? readFileSync(join(dir, f), 'utf8') : null;

describe.each(CASES)('agentstate setup $host', (c) => {
  it('on an empty project writes its entries; a second run changes nothing; --remove leaves nothing', () => {
    const dir = project();
    const first = setup(dir, c.host, '--json');
    expect(first.code, first.stderr).toBe(0);
    const files = [c.mcp, ...(c.hooks ? [c.hooks] : []), c.instructions];
    expect((first.json as { changes: Array<{ path: string; action: string }> }).changes).toEqual(
      files.map((path) => ({ path, action: 'created' })),
    );
    const mcp = read(dir, c.mcp)!;
    const instructions = read(dir, c.instructions)!;
    expect(instructions).toContain('call `resume`');
    expect(existsSync(join(dir, '.agentstate'))).toBe(true);
    const again = setup(dir, c.host);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toBe(files.map((f) => `unchanged ${f}\n`).join(''));
    expect([read(dir, c.mcp), read(dir, c.instructions)]).toEqual([mcp, instructions]);
    expect(setup(dir, c.host, '--remove').code).toBe(0);
    expect(files.map((f) => read(dir, f))).toEqual(files.map(() => null));
    // The folders setup made for its files went with them; the store (the user's data) stays.
    expect(existsSync(join(dir, '.claude')) || existsSync(join(dir, '.codex'))).toBe(false);
    expect(existsSync(join(dir, '.agentstate'))).toBe(true);
  });

  it("keeps the user's configuration byte for byte, and --remove gives it back exactly", () => {
    const dir = project(c.user);
    const r = setup(dir, c.host);
    expect(r.code, r.stderr).toBe(0);
    for (const [f, text] of Object.entries(c.user)) {
      const now = read(dir, f)!;
      // Everything the user wrote is still there, in order (ours is added, nothing of theirs changed).
      const theirs = text.split('\n').filter((l) => l.trim() !== '' && l.trim() !== '}');
      let at = 0;
      for (const line of theirs) {
        const found = now.indexOf(line, at);
        expect(found, `${f}: ${line}`).toBeGreaterThanOrEqual(0);
        at = found;
      }
    }
    expect(setup(dir, c.host).stdout).toMatch(/^(unchanged .+\n)+$/);
    expect(setup(dir, c.host, '--remove').code).toBe(0);
    for (const [f, text] of Object.entries(c.user)) {
      // A file that did not end with a newline gets one back (documented); every other byte is the same.
      expect(read(dir, f), f).toBe(text.endsWith('\n') || f.endsWith('.json') ? text : `${text}\n`);
    }
  });

  it('--dry-run prints the diff and writes nothing', () => {
    const dir = project(c.user);
    const r = setup(dir, c.host, '--dry-run');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('+++ ');
    expect(r.stdout).toContain('agentstate');
    for (const [f, text] of Object.entries(c.user)) expect(read(dir, f)).toBe(text);
    expect(existsSync(join(dir, '.agentstate'))).toBe(false);
  });

  it('the written server starts as the host starts it and answers the official MCP client', async () => {
    const dir = project();
    expect(setup(dir, c.host).code).toBe(0);
    const { command, args } = c.entry(dir);
    const transport = new StdioClientTransport({
      command,
      args,
      cwd: dir,
      env: cleanEnv() as Record<string, string>,
      stderr: 'pipe',
    });
    const client = new Client({ name: `${c.host}-test`, version: '1.0.0' });
    await client.connect(transport);
    try {
      const tools = await client.listTools();
      expect(tools.tools.map((t) => t.name)).toContain('resume');
      const r = await client.callTool({ name: 'enqueue', arguments: { title: `from ${c.host}` } });
      expect(r.isError).toBeFalsy();
    } finally {
      await client.close();
    }
  });
});

describe('agentstate setup refuses', () => {
  it.for([
    ['an unknown host', ['windsurf'], {}],
    ['a host that is a path', ['../../etc'], {}],
    ['a prototype key as the host', ['__proto__'], {}],
    ['a command list of numbers', ['vscode', '--command', '[1,2]'], {}],
    ['a .mcp.json that is not JSON', ['claude-code'], { '.mcp.json': '{ "mcpServers": ' }],
    ['a .vscode/mcp.json that is an array', ['vscode'], { '.vscode/mcp.json': '[]' }],
    ['a .claude/settings.json that is not JSON', ['claude-code'], { '.claude/settings.json': '{"hooks": {' }],
    [
      'a hooks entry that is not a list',
      ['claude-code'],
      { '.claude/settings.json': '{"hooks": {"Stop": {"command": "x"}}}' },
    ],
    ['a .codex/hooks.json that is an array', ['codex'], { '.codex/hooks.json': '[]' }],
    [
      'a Codex config with its own agentstate table',
      ['codex'],
      { '.codex/config.toml': '[mcp_servers.agentstate]\ncommand = "mine"\n' },
    ],
    ['a command that is not a JSON list', ['cursor', '--command', 'npx agentstate'], {}],
  ] as Array<[string, string[], Record<string, string>]>)(
    '%s with exit 2, writing nothing',
    ([, args, files]) => {
      const dir = project(files);
      const r = runCli(['--project', dir, 'setup', ...args]);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toMatch(/^agentstate: .+ \[INVALID_INPUT\]\n$/);
      for (const [f, text] of Object.entries(files)) expect(read(dir, f)).toBe(text);
      expect(existsSync(join(dir, '.agentstate'))).toBe(false);
      expect(existsSync(join(dir, 'CLAUDE.md')) || existsSync(join(dir, 'AGENTS.md'))).toBe(false);
    },
  );
});
