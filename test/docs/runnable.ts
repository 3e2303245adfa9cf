// Runs the examples of README.md and docs/ that are marked runnable (CONTRIBUTING.md, "Examples that run"):
// the parser of fenced blocks, the matcher of what a command printed against what the doc shows, and a
// shell session in which a file's console and sh blocks run in order.
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';

/** A fenced block of a Markdown file. */
export interface Block {
  /** The info string's first word: console, sh, js, ts, text … */
  lang: string;
  /** Whether the info string carries the word `runnable`. */
  runnable: boolean;
  /** Whether the info string carries the word `output` (the output of the runnable code block before it). */
  output: boolean;
  /** 1-based line of the opening fence. */
  line: number;
  code: string;
}

const FENCE = /^(\s*)(`{3,}|~{3,})(.*)$/;

/** The fenced blocks of a Markdown text, in order. */
export function fencedBlocks(markdown: string): Block[] {
  const lines = markdown.split('\n');
  const out: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i]!);
    if (!open) continue;
    const [, indent, fence, info] = open as unknown as [string, string, string, string];
    const words = info.trim().split(/\s+/).filter(Boolean);
    const body: string[] = [];
    let j = i + 1;
    for (; j < lines.length; j++) {
      const l = lines[j]!;
      if (l.trimStart().startsWith(fence) && l.trim() === fence.charAt(0).repeat(l.trim().length)) break;
      body.push(indent.length > 0 && l.startsWith(indent) ? l.slice(indent.length) : l);
    }
    out.push({
      lang: words[0] ?? '',
      runnable: words.includes('runnable'),
      output: words.includes('output'),
      line: i + 1,
      code: body.join('\n'),
    });
    i = j;
  }
  return out;
}

/** One command of a console block and the output the doc shows for it. */
export interface Step {
  command: string;
  expected: string[];
  /** 1-based line of the command in the file. */
  line: number;
}

/**
 * The commands of a console block (`$ ` lines; a line ending in `\` continues on the next) and, after each,
 * the lines the doc shows as its output; a blank line followed by `# ` lines is a comment, up to the next
 * command. A sh block is commands only: every line (or continued line) that is
 * not blank or a comment.
 */
export function steps(block: Block): Step[] {
  const lines = block.code.split('\n');
  const out: Step[] = [];
  /** A blank line and then `# ` lines in a console block are a comment, up to the next command. */
  let comment = false;
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i]!;
    const isCommand = block.lang === 'console' ? l.startsWith('$ ') : l.trim() !== '' && !l.startsWith('#');
    if (isCommand) comment = false;
    else if (block.lang === 'console' && l.trim() === '' && lines[i + 1]?.startsWith('# ')) comment = true;
    if (!isCommand) {
      if (comment) continue;
      if (block.lang === 'console' && out.length > 0) out[out.length - 1]!.expected.push(l);
      else if (block.lang === 'console' && l.trim() !== '') {
        throw new Error(`line ${block.line + 1 + i}: output before any $ command`);
      }
      continue;
    }
    const line = block.line + 1 + i;
    let command = block.lang === 'console' ? l.slice(2) : l;
    while (command.endsWith('\\') && i + 1 < lines.length) command = `${command}\n${lines[++i]}`;
    out.push({ command, expected: [], line });
  }
  for (const s of out) {
    while (s.expected.length > 0 && s.expected[s.expected.length - 1]!.trim() === '') s.expected.pop();
  }
  return out;
}

/**
 * What varies between runs and is matched by shape, not by value. Ids and hashes are bound: the first
 * time a doc's `wi_…` id or 64-hex hash meets the real one, the doc's value stands for the real one in
 * later commands and expected lines of the same file. Times match any time of the same form.
 */
const VOLATILE: Array<{ re: RegExp; bind: boolean }> = [
  { re: /wi_[0-9A-Z]{26}/y, bind: true },
  { re: /[0-9a-f]{64}/y, bind: true },
  { re: /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{3})?Z/y, bind: false },
  { re: /\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z/y, bind: false },
  { re: /\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}/y, bind: false },
];
/** The wildcard: `…` inside a line matches any text; a line that is only `…` matches any lines. */
export const WILDCARD = '…';

const literally = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Doc value → real value, for one file. */
export type Bindings = Map<string, string>;

/** Rewrites the doc's ids and hashes in a command to the real ones bound so far. */
export function substitute(text: string, bindings: Bindings): string {
  let out = text;
  for (const [doc, real] of bindings) out = out.split(doc).join(real);
  return out;
}

/** Matches one expected line against one actual line; returns the new bindings, or null. */
function matchLine(expected: string, actual: string, bindings: Bindings): Bindings | null {
  let pattern = '';
  /** For each capture group: the doc value it binds, or null for a shape matched without binding. */
  const groups: Array<string | null> = [];
  let literal = '';
  let i = 0;
  outer: while (i < expected.length) {
    if (expected.startsWith(WILDCARD, i)) {
      pattern += `${literally(literal)}[\\s\\S]*?`;
      literal = '';
      i += WILDCARD.length;
      continue;
    }
    for (const v of VOLATILE) {
      v.re.lastIndex = i;
      const m = v.re.exec(expected);
      if (!m) continue;
      const bound = v.bind ? bindings.get(m[0]) : undefined;
      pattern += literally(literal) + (bound === undefined ? `(${v.re.source})` : literally(bound));
      literal = '';
      if (bound === undefined) groups.push(v.bind ? m[0] : null);
      i += m[0].length;
      continue outer;
    }
    literal += expected[i];
    i++;
  }
  pattern += literally(literal);
  const m = new RegExp(`^${pattern}$`).exec(actual);
  if (!m) return null;
  const next = new Map(bindings);
  for (const [k, doc] of groups.entries()) {
    if (doc === null) continue;
    const real = m[k + 1]!;
    const already = next.get(doc);
    if (already !== undefined && already !== real) return null;
    // One real value for one doc value, and the other way round.
    for (const [d, r] of next) if (r === real && d !== doc) return null;
    next.set(doc, real);
  }
  return next;
}

/** Matches expected lines against actual ones (with `…` lines); returns the new bindings, or null. */
export function matchOutput(expected: string[], actual: string[], bindings: Bindings): Bindings | null {
  const go = (e: number, a: number, b: Bindings): Bindings | null => {
    if (e === expected.length) return a === actual.length ? b : null;
    if (expected[e]!.trim() === WILDCARD) {
      for (let k = a; k <= actual.length; k++) {
        const r = go(e + 1, k, b);
        if (r) return r;
      }
      return null;
    }
    if (a === actual.length) return null;
    const b2 = matchLine(expected[e]!.trimEnd(), actual[a]!.trimEnd(), b);
    return b2 ? go(e + 1, a + 1, b2) : null;
  };
  return go(0, 0, bindings);
}

/** The lines of a command's output as the doc would show them (trailing blank lines dropped). */
export function outputLines(text: string): string[] {
  const lines = text.replace(/\r\n/g, '\n').split('\n');
  while (lines.length > 0 && lines[lines.length - 1]!.trim() === '') lines.pop();
  return lines;
}

/**
 * A bash session: commands run one after another in the same shell (so `export` and `cd` carry over), each
 * with stdin from /dev/null (pipes inside the command still work) and stderr merged into stdout, in order.
 */
export class ShellSession {
  readonly #child: ChildProcessWithoutNullStreams;
  #buffer = '';
  #waiting: (() => void) | null = null;
  #n = 0;
  #closed = false;

  constructor(opts: { cwd: string; env: NodeJS.ProcessEnv; prelude?: string }) {
    this.#child = spawn('bash', ['--noprofile', '--norc'], { cwd: opts.cwd, env: opts.env });
    this.#child.stdout.setEncoding('utf8').on('data', (d: string) => {
      this.#buffer += d;
      this.#waiting?.();
    });
    this.#child.stderr.setEncoding('utf8').on('data', (d: string) => {
      this.#buffer += d;
      this.#waiting?.();
    });
    this.#child.on('close', () => {
      this.#closed = true;
      this.#waiting?.();
    });
    if (opts.prelude) this.#child.stdin.write(`${opts.prelude}\n`);
  }

  /** Runs `command`; resolves with what it printed (stdout and stderr, in order) and its exit status. */
  async run(command: string, timeoutMs = 60_000): Promise<{ output: string; status: number }> {
    const marker = `__agentstate_docs_${process.pid}_${++this.#n}__`;
    this.#buffer = '';
    this.#child.stdin.write(`{ ${command}\n} </dev/null 2>&1; printf '\\n${marker} %d\\n' $?\n`);
    const end = new RegExp(`\\n?${marker} (\\d+)\\n`);
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const m = end.exec(this.#buffer);
      if (m) return { output: this.#buffer.slice(0, m.index), status: Number(m[1]) };
      if (this.#closed) throw new Error(`the shell ended while running: ${command}\n${this.#buffer}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no end after ${timeoutMs} ms: ${command}\n${this.#buffer}`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.#waiting = () => {
          clearTimeout(t);
          resolve();
        };
      });
      this.#waiting = null;
    }
  }

  close(): void {
    if (!this.#closed) this.#child.stdin.end('exit\n');
  }
}
