// `agentstate mcp --http --port 0` as a child process for the tests that drive it with a real client: started
// with the given arguments, resolved with its URL once it listens, stopped (SIGTERM, then awaited) by `stop`.
import { type ChildProcess, spawn } from 'node:child_process';
import { CLI, cleanEnv } from './cli.js';

/** A running `agentstate mcp --http`: its URL and how to stop it. */
export interface McpHttpProcess {
  url: string;
  stop(): Promise<void>;
}

/** Starts `agentstate <args> --http --port 0` (args include `mcp`); rejects with its stderr if it exits first. */
export function startMcpHttp(args: string[]): Promise<McpHttpProcess> {
  return new Promise<McpHttpProcess>((resolve, reject) => {
    const proc: ChildProcess = spawn(process.execPath, [CLI, ...args, '--http', '--port', '0'], {
      env: cleanEnv(),
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const stop = async () => {
      proc.kill('SIGTERM');
      if (proc.exitCode === null) await new Promise((r) => proc.once('exit', r));
    };
    let err = '';
    proc.stderr!.on('data', (d) => {
      err += d;
      const m = /tools at (http:\/\/\S+)/.exec(err);
      if (m) resolve({ url: m[1]!, stop });
    });
    proc.once('exit', (code) => reject(new Error(`agentstate mcp --http exited ${code}: ${err}`)));
  });
}
