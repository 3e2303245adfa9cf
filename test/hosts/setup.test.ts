// `agentstate setup <host>` for Claude Code, Codex, Cursor and VS Code, through the built CLI: on an empty
// project, on a project with the user's own configuration (kept byte for byte, and given back exactly by
// --remove), twice (nothing changes), as a dry run (nothing written), on hostile files (refused, nothing
// written), and the written MCP entry started the way the host starts it and initialized with the official
// MCP client.
import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { parse as parseToml } from 'smol-toml';
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

describe('agentstate setup never writes through a link that leaves the project (issue 38)', () => {
  /** A project, and a folder beside it (outside the project) holding `outside` files. */
  function linked(outside: Record<string, string> = {}): { dir: string; away: string } {
    const dir = project();
    const away = `${dir}-away`;
    mkdirSync(away, { recursive: true });
    for (const [f, text] of Object.entries(outside)) writeFileSync(join(away, f), text);
    return { dir, away };
  }
  /** Every file under `dir` with its bytes (links as `-> target`), to see that nothing changed. */
  function snapshot(dir: string): Record<string, string> {
    const out: Record<string, string> = {};
    for (const e of readdirSync(dir, { recursive: true, withFileTypes: true })) {
      const p = join(e.parentPath, e.name);
      if (e.isSymbolicLink()) out[p] = `-> ${readlinkSync(p)}`;
      else if (e.isFile()) out[p] = readFileSync(p, 'utf8');
      else out[p] = '<dir>';
    }
    return out;
  }

  it.for([
    {
      name: '.claude/settings.json linked to a file elsewhere',
      host: 'claude-code',
      outside: { 'settings.json': '{\n  "model": "opus"\n}\n' },
      link: ['.claude/settings.json', 'settings.json'],
      names: '.claude/settings.json',
    },
    {
      name: 'a .claude folder linked elsewhere',
      host: 'claude-code',
      outside: {},
      link: ['.claude', '.'],
      names: '.claude',
    },
    {
      name: 'CLAUDE.md linked to a file elsewhere',
      host: 'claude-code',
      outside: { 'CLAUDE.md': '# theirs\n' },
      link: ['CLAUDE.md', 'CLAUDE.md'],
      names: 'CLAUDE.md',
    },
    {
      name: 'a .mcp.json linked to a missing file elsewhere (the write would create it)',
      host: 'claude-code',
      outside: {},
      link: ['.mcp.json', 'missing.json'],
      names: '.mcp.json',
    },
    {
      name: '.codex/config.toml linked to a file elsewhere',
      host: 'codex',
      outside: { 'config.toml': 'model = "o4"\n' },
      link: ['.codex/config.toml', 'config.toml'],
      names: '.codex/config.toml',
    },
    {
      name: 'a .agentstate store folder linked elsewhere',
      host: 'cursor',
      outside: {},
      link: ['.agentstate', '.'],
      names: '.agentstate',
      // --remove leaves the store alone, so it has nothing to refuse.
      removes: false,
    },
  ] as Array<{
    name: string;
    host: string;
    outside: Record<string, string>;
    link: [string, string];
    names: string;
    removes?: boolean;
  }>)('$name: exit 2 naming the link, nothing written (also --dry-run and --remove)', (c) => {
    const { dir, away } = linked(c.outside);
    const [at, to] = c.link;
    mkdirSync(dirname(join(dir, at)), { recursive: true });
    symlinkSync(join(away, to), join(dir, at));
    const before = { dir: snapshot(dir), away: snapshot(away) };
    for (const extra of [[], ['--dry-run'], ...(c.removes === false ? [] : [['--remove']])]) {
      const r = setup(dir, c.host, ...extra);
      expect(r.code, `${extra.join(' ')}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toContain(`agentstate: ${c.names} `);
      expect(r.stderr).toMatch(/symlink .+ \[INVALID_INPUT\]\n$/);
      // Nothing half-written: not the other files of the run, not the store, not the link's target.
      expect({ dir: snapshot(dir), away: snapshot(away) }).toEqual(before);
    }
  });

  it('a link that stays inside the project is followed, and stays a link; --remove gives the files back', () => {
    const dir = project({ 'docs/AI.md': '# Shared notes\n', 'config/claude/.keep': '' });
    symlinkSync('docs/AI.md', join(dir, 'CLAUDE.md'));
    symlinkSync(join(dir, 'config', 'claude'), join(dir, '.claude'));
    const r = setup(dir, 'claude-code');
    expect(r.code, r.stderr).toBe(0);
    expect(lstatSync(join(dir, 'CLAUDE.md')).isSymbolicLink()).toBe(true);
    expect(lstatSync(join(dir, '.claude')).isSymbolicLink()).toBe(true);
    expect(readFileSync(join(dir, 'docs', 'AI.md'), 'utf8')).toContain('agentstate:begin');
    expect(JSON.parse(readFileSync(join(dir, 'config', 'claude', 'settings.json'), 'utf8'))).toHaveProperty(
      'hooks.Stop',
    );
    const off = setup(dir, 'claude-code', '--remove');
    expect(off.code, off.stderr).toBe(0);
    expect(readFileSync(join(dir, 'docs', 'AI.md'), 'utf8')).toBe('# Shared notes\n');
    expect(lstatSync(join(dir, 'CLAUDE.md')).isSymbolicLink()).toBe(true);
    // The file setup made is gone; the linked folder and the link stay.
    expect(existsSync(join(dir, 'config', 'claude', 'settings.json'))).toBe(false);
    expect(lstatSync(join(dir, '.claude')).isSymbolicLink()).toBe(true);
    expect(existsSync(join(dir, 'config', 'claude', '.keep'))).toBe(true);
  });

  it('a file setup rewrites keeps its permissions', () => {
    const dir = project({ '.claude/settings.json': '{\n  "model": "opus"\n}\n' });
    chmodSync(join(dir, '.claude', 'settings.json'), 0o600);
    expect(setup(dir, 'claude-code').code).toBe(0);
    expect(statSync(join(dir, '.claude', 'settings.json')).mode & 0o777).toBe(0o600);
  });
});

describe('agentstate setup refuses a target that is not a regular file (issue 38)', () => {
  it.for([
    {
      name: '.claude/settings.json a folder',
      host: 'claude-code',
      make: '.claude/settings.json/',
      why: 'is a directory, not a regular file',
    },
    {
      name: 'CLAUDE.md a folder',
      host: 'claude-code',
      make: 'CLAUDE.md/',
      why: 'is a directory, not a regular file',
    },
    { name: '.vscode a file', host: 'vscode', make: '.vscode', why: 'is a regular file, not a folder' },
    {
      name: '.codex/hooks.json a FIFO',
      host: 'codex',
      make: '.codex/hooks.json|',
      why: 'is a FIFO (named pipe), not a regular file',
    },
    {
      name: '.agentstate a file',
      host: 'cursor',
      make: '.agentstate',
      why: 'is a regular file, not a folder',
    },
  ])('$name: exit 2, nothing written', (c) => {
    const dir = project();
    const path = join(dir, c.make.replace(/[/|]$/, ''));
    mkdirSync(dirname(path), { recursive: true });
    if (c.make.endsWith('/')) mkdirSync(path);
    else if (c.make.endsWith('|')) expect(spawnSync('mkfifo', [path]).status).toBe(0);
    else writeFileSync(path, 'mine\n');
    const before = readdirSync(dir, { recursive: true }).sort();
    const r = setup(dir, c.host);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toBe(
      `agentstate: ${c.make.replace(/[/|]$/, '')} ${c.why}; nothing was written [INVALID_INPUT]\n`,
    );
    expect(readdirSync(dir, { recursive: true }).sort()).toEqual(before);
  });
});

describe('agentstate setup codex decides with a TOML parser (issue 38)', () => {
  const config = (dir: string) => read(dir, '.codex/config.toml')!;
  it.for([
    ['a quoted table name', '[mcp_servers."agentstate"]\ncommand = "mine"\n'],
    ['a dotted key', 'mcp_servers.agentstate.command = "mine"\n'],
    ['an inline table', 'mcp_servers = { agentstate = { command = "mine" } }\n'],
    ['a table of mcp_servers', '[mcp_servers]\nagentstate = { command = "mine" }\n'],
  ] as Array<[string, string]>)('its own agentstate server as %s: exit 2, nothing written', ([, toml]) => {
    const dir = project({ '.codex/config.toml': toml });
    const r = setup(dir, 'codex');
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(
      /already has an mcp_servers\.agentstate server of its own.+\[INVALID_INPUT\]\n$/,
    );
    expect(config(dir)).toBe(toml);
    expect(existsSync(join(dir, '.codex', 'hooks.json'))).toBe(false);
    expect(existsSync(join(dir, 'AGENTS.md'))).toBe(false);
  });

  it.for([
    ['a config that does not parse', 'model = \n', /\.codex\/config\.toml is not valid TOML \(line 1/],
    [
      'servers in an inline table (ours cannot be added to it)',
      'mcp_servers = { search = { command = "s" } }\n',
      /would not read back as written/,
    ],
    ['servers as an array of tables', '[[mcp_servers]]\nname = "s"\n', /would not read back as written/],
  ] as Array<[string, string, RegExp]>)('%s: exit 2, nothing written (also --remove)', ([, toml, why]) => {
    const dir = project({ '.codex/config.toml': toml });
    for (const extra of [[], ['--remove']]) {
      const r = setup(dir, 'codex', ...extra);
      if (extra.length > 0 && !toml.startsWith('model')) {
        // Nothing of ours to take out of a file that parses: unchanged.
        expect(r.code, r.stderr).toBe(0);
        continue;
      }
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toMatch(why);
      expect(config(dir)).toBe(toml);
      expect(existsSync(join(dir, 'AGENTS.md'))).toBe(false);
    }
  });

  it.for([
    ['a dotted key', 'features.web_search = true\nmodel = "o4"\n'],
    ['an inline table', 'features = { web_search = true }\n'],
    ['a [features] table', '[features]\nweb_search = true\n'],
    ['a quoted ["features"] table', '["features"]\ncodex_hooks = true\n'],
  ] as Array<[string, string]>)(
    "the user's own features as %s: left to them, and the result parses",
    ([, toml]) => {
      const dir = project({ '.codex/config.toml': toml });
      const r = setup(dir, 'codex');
      expect(r.code, r.stderr).toBe(0);
      const parsed = parseToml(config(dir)) as {
        mcp_servers: { agentstate: { command: string } };
        features: Record<string, unknown>;
      };
      expect(parsed.mcp_servers.agentstate.command).toBe(process.execPath);
      expect(parsed.features).toEqual(parseToml(toml).features);
      expect(setup(dir, 'codex', '--remove').code).toBe(0);
      expect(config(dir)).toBe(toml);
    },
  );

  it('every Codex config setup writes parses, with codex_hooks on when the user has no features', () => {
    const dir = project({
      '.codex/config.toml': '# mine\nmodel = "o4"\n[mcp_servers.search]\ncommand = "s"\n',
    });
    expect(setup(dir, 'codex').code).toBe(0);
    expect(parseToml(config(dir))).toMatchObject({
      model: 'o4',
      mcp_servers: { search: { command: 's' }, agentstate: { command: process.execPath } },
      features: { codex_hooks: true },
    });
  });
});

describe('agentstate setup reads JSON files with a byte-order mark (issue 38)', () => {
  const BOM = '\uFEFF';
  it.for([
    ['claude-code', '.mcp.json', '{\n  "mcpServers": {\n    "search": { "command": "s" }\n  }\n}\n'],
    ['claude-code', '.claude/settings.json', '{\n  "model": "opus"\n}\n'],
    ['codex', '.codex/hooks.json', '{\n  "mine": 1\n}\n'],
    [
      'cursor',
      '.cursor/mcp.json',
      '{\n\t"mcpServers": {\n\t\t"db": { "url": "http://localhost:9" }\n\t}\n}\n',
    ],
    [
      'vscode',
      '.vscode/mcp.json',
      '{\n  "servers": {\n    "gh": { "type": "http", "url": "https://example.com/mcp" }\n  }\n}\n',
    ],
  ])('%s: %s keeps its BOM; --remove gives it back byte for byte', ([host, file, text]) => {
    const dir = project({ [file!]: BOM + text });
    const r = setup(dir, host!);
    expect(r.code, r.stderr).toBe(0);
    const now = read(dir, file!)!;
    expect(now.startsWith(BOM)).toBe(true);
    expect(now.slice(1)).toMatch(/"agentstate"|hook session-start/);
    expect(() => JSON.parse(now.slice(1))).not.toThrow();
    expect(setup(dir, host!).stdout).toMatch(/^(unchanged .+\n)+$/);
    expect(setup(dir, host!, '--remove').code).toBe(0);
    expect(read(dir, file!)).toBe(BOM + text);
  });

  it('a JSON file that gives a key twice (ours would be lost) is refused, nothing written', () => {
    const text = '{"mcpServers": {"a": {"command": "a"}}, "mcpServers": {"b": {"command": "b"}}}\n';
    const dir = project({ '.mcp.json': text });
    const r = setup(dir, 'claude-code');
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(
      /^agentstate: \.mcp\.json: setup's edit would not read back as written.+\[INVALID_INPUT\]\n$/,
    );
    expect(read(dir, '.mcp.json')).toBe(text);
    expect(existsSync(join(dir, 'CLAUDE.md'))).toBe(false);
  });
});
