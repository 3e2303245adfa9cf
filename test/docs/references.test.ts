// What README.md and docs/ name of the CLI is what it has (issue 38): every `agentstate <command> --flag` of
// an example or of inline code names a flag that `agentstate <command> --help` lists, and every local address
// of an example (`127.0.0.1:<port>`) is the default port of the server the example runs or a port the same
// example sets, so a scrape config or a URL cannot point where nothing listens.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Command, Option } from 'commander';
import { beforeAll, describe, expect, it } from 'vitest';
import { programFor } from '../../src/cli/program.js';
import { SERVE_PORT } from '../../src/http/serve.js';
import { OPERATIONS } from '../../src/service/table.js';
import { ROOT } from '../helpers/cli.js';
import { fencedBlocks } from './runnable.js';

const FILES = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

/** A piece of a doc read as one example: a fenced block, or a paragraph of prose. */
interface Example {
  /** `file:line` where it starts. */
  at: string;
  text: string;
  /** The fenced block's language; undefined for prose (whose commands are its inline code). */
  lang?: string;
}

/** A doc's examples: its fenced blocks, and its paragraphs (blank-line separated) outside them. */
function examplesOf(file: string, markdown: string): Example[] {
  const out: Example[] = [];
  const lines = markdown.split('\n');
  const inBlock = new Set<number>();
  for (const b of fencedBlocks(markdown)) {
    // The fences and the lines between them (1-based).
    for (let l = b.line; l <= b.line + b.code.split('\n').length + 1; l++) inBlock.add(l);
    out.push({ at: `${file}:${b.line + 1}`, text: b.code, lang: b.lang });
  }
  let start = -1;
  const end = (i: number) => {
    if (start >= 0) out.push({ at: `${file}:${start + 1}`, text: lines.slice(start, i).join('\n') });
    start = -1;
  };
  for (const [i, l] of lines.entries()) {
    if (inBlock.has(i + 1) || l.trim() === '') end(i);
    else if (start < 0) start = i;
  }
  end(lines.length);
  return out;
}

/** `agentstate` where a shell would run it: at the start, after `$ `, `npx [-y] [-p pkg]` or `;`, `&&`, `|`, `(`. */
const INVOCATION = /(?:^|\$ |[;&|(] *|npx (?:-y )?(?:-p \S+ )?)agentstate (.*)$/;

/**
 * The `agentstate …` command lines of an example (what follows `agentstate`, up to a pipe, a `;`, a comment or
 * a redirection): in a console block its `$ ` lines, in another block every line, in prose its inline code.
 */
function commandsOf(ex: Example): string[] {
  const lines =
    ex.lang === undefined
      ? [...ex.text.matchAll(/`([^`]+)`/g)].map((m) => m[1]!.replace(/\s+/g, ' '))
      : ex.text
          .replace(/\\\n\s*/g, ' ')
          .split('\n')
          .filter((l) => ex.lang !== 'console' || l.startsWith('$ '));
  const out: string[] = [];
  for (const l of lines) {
    const m = INVOCATION.exec(l.replace(/\s+/g, ' ').trim());
    if (m) out.push(m[1]!.split(/ [|;&>#] ?| # |&&|\|\|/)[0]!.trim());
  }
  return out;
}

/** The words of a command line as a shell splits them (a quoted string is one word, without its quotes). */
const words = (line: string): string[] =>
  [...line.matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)].map((m) => m[1] ?? m[2] ?? m[3]!);

let program: Command;
beforeAll(async () => {
  // `help` names no command, so every kind's operations are there too.
  program = await programFor(['help']);
});

const pathOf = (cmd: Command): string => {
  const names: string[] = [];
  for (let c: Command | null = cmd; c !== null; c = c.parent) names.unshift(c.name());
  return names.join(' ');
};

/** The flags `<cmd> --help` lists: its options and the global ones (and --help, --version). */
function listed(cmd: Command): Option[] {
  const help = cmd.createHelp();
  return [...help.visibleOptions(cmd), ...help.visibleGlobalOptions(cmd)];
}

/**
 * What is wrong with the flags of one `agentstate …` line, if anything. The command is found word by word
 * (global options and their values skipped); then each `--flag` must be one that its --help lists. `call
 * <operation>` takes the operation's fields as flags (`call <operation> --help` lists them); `hook` parses
 * its own flags and is left out. A placeholder (`<command>`, `[flags]`) where a command name would be ends
 * the check.
 */
function checkCommand(line: string): string | undefined {
  let cmd = program;
  let operation: string[] | undefined;
  const ws = words(line);
  for (let i = 0; i < ws.length; i++) {
    const raw = ws[i]!;
    const w = raw.replace(/^[[(]+|[\]),.:…]+$/g, '');
    if (cmd.name() === 'hook') return undefined;
    if (w.startsWith('-') && w.length > 1) {
      // Every command answers --help (`call <operation> --help` and `hook` their own way).
      if (w === '--help') continue;
      const flag = w.split('=')[0]!;
      if (operation?.includes(flag)) {
        if (!w.includes('=') && ws[i + 1] !== undefined && !ws[i + 1]!.startsWith('--')) i++;
        continue;
      }
      const option = listed(cmd).find((o) => o.long === flag || o.short === flag);
      if (!option) return `${pathOf(cmd)} --help lists no ${flag}`;
      if ((option.required || option.optional) && !w.includes('=')) i++;
      continue;
    }
    if (cmd.name() === 'call' && operation === undefined && cmd.parent === program) {
      const op = OPERATIONS.find((o) => o.name === w);
      if (op) {
        operation = Object.keys(op.input.properties ?? {}).map((f) => `--${f.replaceAll('_', '-')}`);
        continue;
      }
    }
    if (cmd.commands.length === 0) continue;
    if (/^[[<{]/.test(raw) || !/^[a-z][a-zA-Z0-9-]*$/.test(w) || w === 'help') return undefined;
    const sub = cmd.commands.find((c) => c.name() === w || c.aliases().includes(w));
    if (!sub) return `${pathOf(cmd)} has no command ${w}`;
    cmd = sub;
  }
  return undefined;
}

/** The port `<command> --help` names as its --port default (`[default: 8780]`). */
function defaultPort(command: string): number {
  const cmd = program.commands.find((c) => c.name() === command)!;
  const port = cmd.options.find((o) => o.long === '--port')!;
  return Number(/\[default: (\d+)\]/.exec(port.description)![1]);
}

/**
 * What is wrong with the local addresses of one example, if anything: each `127.0.0.1:<port>` (or localhost,
 * [::1]) is the default port of the server it runs (`mcp --http`'s when it runs that, serve's when it runs
 * serve or no server: a scrape config), a port
 * the example sets (`--port`, `--metrics-port`), or one of a database URL of the example (`postgres://…`).
 */
function checkPorts(ex: Example): string[] {
  const commands = commandsOf(ex).map(words);
  const mcp = commands.some((w) => w.includes('mcp') && w.includes('--http'));
  const serve = commands.some((w) => w.includes('serve'));
  const defaults = [...(serve || !mcp ? [defaultPort('serve')] : []), ...(mcp ? [defaultPort('mcp')] : [])];
  const set = [...ex.text.matchAll(/--(?:metrics-)?port[ =](\d+)/g)].map((m) => Number(m[1]));
  const databases = [...ex.text.matchAll(/postgres(?:ql)?:\/\/[^\s'"`]*?:(\d+)\//g)].map((m) => Number(m[1]));
  const allowed = new Set([...defaults, ...set, ...databases]);
  return [...ex.text.matchAll(/(?:127\.0\.0\.1|localhost|\[::1\]):(\d+)/g)]
    .filter((m) => !allowed.has(Number(m[1])))
    .map(
      (m) =>
        `${ex.at}: ${m[0]} is neither the default port (${defaults.join(', ')}) nor one the example sets (${[...set, ...databases].join(', ') || 'none'})`,
    );
}

function all(): Example[] {
  return FILES.flatMap((f) => examplesOf(f, readFileSync(join(ROOT, f), 'utf8')));
}

describe('the checks', () => {
  it('find a flag, a command or a port the CLI does not have', () => {
    expect(checkCommand('--dir /tmp/x state diff json plan 1 2 --json')).toBeUndefined();
    expect(checkCommand('serve --port 9000 --metrics-port 9464')).toBeUndefined();
    expect(checkCommand('call enqueue --title fetch --not-before 5m --json')).toBeUndefined();
    expect(checkCommand('serve --metrics 9464')).toBe('agentstate serve --help lists no --metrics');
    expect(checkCommand('--name p state commit x y --expected 2')).toBe(
      'agentstate state commit --help lists no --expected',
    );
    expect(checkCommand('call enqueue --titel x')).toBe('agentstate call --help lists no --titel');
    expect(checkCommand('stat get x y')).toBe('agentstate has no command stat');
    expect(
      commandsOf({
        at: 'x:1',
        lang: 'console',
        text: '$ agentstate list --bogus | head\nagentstate list --x',
      }),
    ).toEqual(['list --bogus']);
    expect(
      commandsOf({ at: 'x:1', text: 'Run `agentstate serve --port 1` or `npx agentstate init`.' }),
    ).toEqual(['serve --port 1', 'init']);
    const scrape = "static_configs: [{ targets: ['127.0.0.1:8787'] }]";
    expect(checkPorts({ at: 'x:1', lang: 'yaml', text: scrape })).toHaveLength(1);
    expect(checkPorts({ at: 'x:1', lang: 'yaml', text: scrape.replace('8787', String(SERVE_PORT)) })).toEqual(
      [],
    );
    expect(checkPorts({ at: 'x:1', lang: 'sh', text: `agentstate serve --port 8787\n${scrape}` })).toEqual(
      [],
    );
  });

  it('read serve’s default port from its help, which is the one it listens on', () => {
    expect(defaultPort('serve')).toBe(SERVE_PORT);
  });
});

describe('README.md and docs/ name what the CLI has', () => {
  it('every `agentstate <command> --flag` names a flag that `<command> --help` lists', () => {
    const examples = all();
    const wrong = examples.flatMap((ex) =>
      commandsOf(ex).flatMap((c) => {
        const why = checkCommand(c);
        return why === undefined ? [] : [`${ex.at}: agentstate ${c}\n  ${why}`];
      }),
    );
    expect(examples.flatMap(commandsOf).length).toBeGreaterThan(100);
    expect(wrong).toEqual([]);
  });

  it('every local address of an example is the server’s default port or one the example sets', () => {
    expect(all().flatMap(checkPorts)).toEqual([]);
  });
});
