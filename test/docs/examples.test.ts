// The examples of README.md and docs/ run as written (issue 23, part 6): every fenced block marked runnable
// (CONTRIBUTING.md, "Examples that run") runs in order, per file, on a fresh instance in a temp HOME, and
// what it prints is compared with what the doc shows. A file's console and sh blocks run in one bash
// session with the built CLI as `agentstate`; its js/ts blocks form one program, run by node against the
// built package.
import { type ChildProcess, spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { transformSync } from 'esbuild';
import { afterAll, describe, expect, it } from 'vitest';
import { CLI, cleanEnv, ROOT } from '../helpers/cli.js';
import {
  type Bindings,
  type Block,
  fencedBlocks,
  matchOutput,
  outputLines,
  ShellSession,
  steps,
  substitute,
} from './runnable.js';

const FILES = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];
const base = mkdtempSync(join(tmpdir(), 'agentstate-docs-'));
const MARK = '@@agentstate-docs-block@@';
/** Where the programs are written: inside the repository (see Program). */
const PROGRAMS = join(ROOT, '.docs-examples');
afterAll(() => {
  rmSync(base, { recursive: true, force: true });
  for (const f of FILES) rmSync(join(PROGRAMS, `${slug(f)}-${process.pid}.mjs`), { force: true });
});

const slug = (file: string) => file.replace(/[^A-Za-z0-9]+/g, '-');

/** A fresh world for one file: its temp folder stands for /tmp, its home for ~. */
function world(file: string) {
  const t = join(base, slug(file));
  const home = join(t, 'home');
  const work = join(t, 'work');
  const bin = join(t, 'bin');
  for (const d of [home, work, bin]) mkdirSync(d, { recursive: true });
  // The CLI as a consumer runs it (and the package as a consumer imports it: see Program).
  writeFileSync(join(bin, 'agentstate'), `#!/bin/sh\nexec "${process.execPath}" "${CLI}" "$@"\n`);
  chmodSync(join(bin, 'agentstate'), 0o755);
  const env = cleanEnv({
    HOME: home,
    XDG_CONFIG_HOME: join(home, '.config'),
    PATH: `${bin}:${process.env.PATH}`,
    TZ: 'UTC',
    NO_COLOR: '1',
  });
  return {
    name: slug(file),
    t,
    work,
    env,
    /** A doc's /tmp/… is this world's folder. */
    toWorld: (text: string) => text.replace(/\/tmp(?=\/|\b)/g, t),
    /** What a command printed, as the doc shows it: ~ for the home, /tmp for the world's folder. */
    toDoc: (text: string) => text.split(home).join('~').split(t).join('/tmp'),
  };
}

type World = ReturnType<typeof world>;

function report(file: string, line: number, what: string, expected: string[], actual: string[]): string {
  return `${file}:${line}: ${what}\n--- the doc shows\n${expected.join('\n')}\n--- it printed\n${actual.join('\n')}`;
}

/**
 * A file's js/ts blocks as one program, run by node, paused between blocks: `next(i)` lets block i run and
 * resolves with what it printed, so the program and the shell session take turns in the file's order.
 */
class Program {
  readonly #child: ChildProcess;
  #out = '';
  #err = '';
  #exit: number | null = null;
  #wake: (() => void) | null = null;

  constructor(code: Block[], w: World) {
    const gate =
      "import { createInterface as __docsLines } from 'node:readline';\n" +
      'const __docsInput = __docsLines({ input: process.stdin })[Symbol.asyncIterator]();\n' +
      `const __docsGate = async (i) => { process.stdout.write('\\n${MARK} ' + i + '\\n'); await __docsInput.next(); };\n` +
      'await __docsGate(-1);\n';
    const source = code.map((b, i) => `${b.code}\n;await __docsGate(${i});\n`).join('\n');
    const js = transformSync(gate + w.toWorld(source), {
      loader: 'ts',
      format: 'esm',
      target: 'es2022',
    }).code;
    // In the repository (not under node_modules), so `@agentstate/store` is the package itself (its exports,
    // the built dist/) and the frameworks an adapter example imports resolve from its node_modules; it runs
    // in the world's folder.
    mkdirSync(PROGRAMS, { recursive: true });
    const path = join(PROGRAMS, `${w.name}-${process.pid}.mjs`);
    writeFileSync(path, js);
    this.#child = spawn(process.execPath, [path], { cwd: w.work, env: w.env });
    this.#child.stdout!.setEncoding('utf8').on('data', (d: string) => {
      this.#out += d;
      this.#wake?.();
    });
    this.#child.stderr!.setEncoding('utf8').on('data', (d: string) => {
      this.#err += d;
    });
    this.#child.on('exit', (code) => {
      this.#exit = code ?? -1;
      this.#wake?.();
    });
  }

  async #until(i: number): Promise<string> {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const at = this.#out.indexOf(`\n${MARK} ${i}\n`);
      if (at >= 0) {
        const printed = this.#out.slice(0, at);
        this.#out = this.#out.slice(at + `\n${MARK} ${i}\n`.length);
        return printed;
      }
      if (this.#exit !== null) throw new Error(this.#err || `node exited ${this.#exit}`);
      if (Date.now() > deadline) throw new Error(`block ${i} did not finish in 60 s`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, 1000);
        this.#wake = () => {
          clearTimeout(t);
          resolve();
        };
      });
      this.#wake = null;
    }
  }

  /** Runs block `i` (after the ones before it); resolves with what it printed. */
  async next(i: number): Promise<string> {
    if (i === 0) await this.#until(-1);
    this.#child.stdin!.write('go\n');
    return this.#until(i);
  }

  /** Lets the program end; resolves with its exit code and what it wrote on stderr. */
  async finish(): Promise<{ code: number; stderr: string }> {
    this.#child.stdin!.end();
    if (this.#exit === null) {
      await new Promise<void>((resolve) => {
        const t = setTimeout(() => {
          this.#child.kill();
          resolve();
        }, 10_000);
        this.#child.once('exit', () => {
          clearTimeout(t);
          resolve();
        });
      });
    }
    return { code: this.#exit ?? -1, stderr: this.#err };
  }
}

/**
 * Runs a file's runnable blocks in order: console and sh blocks in one shell session (console output
 * compared with the doc's), js/ts blocks as one program (an `output` block after one compared with what it
 * printed).
 */
async function runFile(file: string, w: World, failures: string[]): Promise<void> {
  const all = fencedBlocks(readFileSync(join(ROOT, file), 'utf8'));
  const code = all.filter((b) => b.runnable && (b.lang === 'js' || b.lang === 'ts'));
  let program: Program | null = null;
  try {
    if (code.length > 0) program = new Program(code, w);
  } catch (err) {
    // The blocks together are not one valid program (a name declared twice, a syntax error).
    failures.push(`${file}: its js/ts blocks do not form one program: ${(err as Error).message}`);
    return;
  }
  let shell: ShellSession | null = null;
  let bindings: Bindings = new Map();
  const threw = false;
  try {
    for (const [n, block] of all.entries()) {
      if (!block.runnable) continue;
      if (block.lang === 'js' || block.lang === 'ts') {
        let printed: string;
        try {
          printed = await program!.next(code.indexOf(block));
        } catch (err) {
          failures.push(
            `${file}:${block.line}: the JavaScript block threw\n${w.toDoc((err as Error).message)}`,
          );
          return;
        }
        const shown = all[n + 1];
        if (!shown?.output) continue;
        const expected = outputLines(shown.code);
        const actual = outputLines(w.toDoc(printed));
        const matched = matchOutput(expected, actual, bindings);
        if (matched) bindings = matched;
        else failures.push(report(file, shown.line, 'the output of the block above', expected, actual));
        continue;
      }
      shell ??= new ShellSession({
        cwd: w.work,
        env: w.env,
        // `npx agentstate` in a project that installed the package runs its bin.
        prelude:
          'npx() { if [ "$1" = agentstate ]; then shift; agentstate "$@"; else command npx "$@"; fi; }',
      });
      for (const step of steps(block)) {
        const command = w.toWorld(substitute(step.command, bindings));
        const { output, status } = await shell.run(command);
        const actual = outputLines(w.toDoc(output));
        if (block.lang === 'sh') {
          if (status !== 0)
            failures.push(report(file, step.line, `exit ${status}: ${step.command}`, [], actual));
          continue;
        }
        if (step.expected.length === 0) continue;
        const matched = matchOutput(step.expected, actual, bindings);
        if (matched) bindings = matched;
        else failures.push(report(file, step.line, `$ ${step.command}`, step.expected, actual));
      }
    }
  } finally {
    shell?.close();
    if (program) {
      const { code: exit, stderr } = await program.finish();
      if (exit !== 0 && !threw)
        failures.push(`${file}: the JavaScript program exited ${exit}\n${w.toDoc(stderr)}`);
    }
  }
}

describe.concurrent('the runnable examples of README.md and docs/', () => {
  const withExamples = FILES.filter((f) =>
    fencedBlocks(readFileSync(join(ROOT, f), 'utf8')).some((b) => b.runnable),
  );

  it('are marked in the files that have examples a reader can run here', () => {
    for (const f of ['README.md', 'docs/cli.md', 'docs/api.md', 'docs/documents.md', 'docs/state-files.md']) {
      expect(withExamples).toContain(f);
    }
  });

  it.for(withExamples)('%s', { timeout: 180_000 }, async (file) => {
    const blocks = fencedBlocks(readFileSync(join(ROOT, file), 'utf8')).filter((b) => b.runnable);
    for (const b of blocks) {
      expect(['console', 'sh', 'js', 'ts'], `${file}:${b.line}: a runnable ${b.lang} block`).toContain(
        b.lang,
      );
    }
    const failures: string[] = [];
    await runFile(file, world(file), failures);
    expect(failures.join('\n\n')).toBe('');
  });
});
