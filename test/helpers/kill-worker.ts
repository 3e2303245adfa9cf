// A worker process for the crash tests: run to its end, or SIGKILLed the moment it prints a given line.
import { spawn } from 'node:child_process';

/**
 * Runs `node [...nodeArgs] script ...args` with `env` added; resolves to the lines it printed. With `killOn`,
 * SIGKILLs it as soon as it prints that exact line (and expects that end); without, expects exit code 0.
 */
export function runWorker(
  script: string,
  args: string[],
  env: Record<string, string>,
  killOn?: string,
  nodeArgs: string[] = [],
): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...nodeArgs, script, ...args], {
      env: { ...process.env, ...env },
    });
    const lines: string[] = [];
    let buf = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => {
      buf += d.toString();
      const parts = buf.split('\n');
      buf = parts.pop()!;
      for (const l of parts) {
        lines.push(l);
        if (l === killOn) child.kill('SIGKILL');
      }
    });
    child.stderr.on('data', (d) => (err += d));
    child.on('close', (code, signal) => {
      if (killOn ? signal === 'SIGKILL' : code === 0) resolve(lines);
      else reject(new Error(`worker ended with ${signal ?? code}: ${err}`));
    });
  });
}
