// Whether a process is gone, and a command that leaves a process behind: for the tests (here and in test/cli/) that
// check that a worker's commands, and everything they started, end with their items.
import { existsSync, readFileSync } from 'node:fs';

/**
 * Whether the process `pid` has ended: `process.kill(pid, 0)` throws ESRCH, or it is a zombie (ended, not yet
 * reaped by whoever adopted it: a container's init may take a while).
 */
export function processGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
  const stat = `/proc/${pid}/stat`;
  try {
    // Field 3, after the parenthesised command name, is the state.
    return existsSync(stat) && /\)\s+Z/.test(readFileSync(stat, 'utf8'));
  } catch {
    return true;
  }
}

/** The pid written in `file`, or undefined while it is not (fully) there. */
export function pidIn(file: string): number | undefined {
  if (!existsSync(file)) return undefined;
  const n = Number(readFileSync(file, 'utf8').trim());
  return Number.isSafeInteger(n) && n > 0 ? n : undefined;
}

/** Kills what a test started and may have left behind (a test that failed), ignoring what is gone. */
export function killLeftovers(pids: Array<number | undefined>): void {
  for (const pid of pids) {
    if (pid === undefined) continue;
    try {
      process.kill(pid, 'SIGKILL');
    } catch {}
  }
}

/**
 * A shell command that ignores SIGTERM, writes its own pid (atomically) to `pidFile`, then runs until killed:
 * node, so it is one process whose pid is the one written.
 */
export function deafProcess(pidFile: string): string {
  const js = `process.on('SIGTERM',()=>{});const fs=require('fs');fs.writeFileSync(${JSON.stringify(`${pidFile}.tmp`)},String(process.pid));fs.renameSync(${JSON.stringify(`${pidFile}.tmp`)},${JSON.stringify(pidFile)});setInterval(()=>{},1000)`;
  return `"${process.execPath}" -e "${js.replaceAll('"', '\\"')}"`;
}
