// execHandler, the handler of `agentstate work --exec`: each command runs in a process group of its own, and
// the whole group is ended (SIGTERM, then SIGKILL) when the item's signal fires (a lost lease, a stop's grace
// run out) and when the command exits leaving processes behind; stdout is bounded while it is read. Each wait
// is for a condition (a pid file, a process gone), never for a length of time.
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { WorkItem } from '../../src/core/types.js';
import { execChildrenEnded, execHandler } from '../../src/worker/exec.js';
import type { HandlerContext } from '../../src/worker/worker.js';
import { tempDir } from '../helpers/tmp.js';
import { deafProcess, killLeftovers, pidIn, processGone } from './processes.js';

const root = tempDir('agentstate-exec-');
let n = 0;
const started: Array<number | undefined> = [];
afterEach(() => killLeftovers(started.splice(0)));

function run(command: string, signal = new AbortController().signal) {
  const item = { id: `wi_${++n}`, kind: 'sh', payload: null } as unknown as WorkItem;
  const ctx = { item, attempt: 1, signal } as HandlerContext;
  return execHandler({ command, killAfterMs: 200 })(item, ctx) as Promise<unknown>;
}

/** Waits for the pid in `file` (written by the command under test), and remembers it for the clean-up. */
async function pidOf(file: string): Promise<number> {
  await expect.poll(() => pidIn(file), { timeout: 30_000 }).toBeDefined();
  const pid = pidIn(file)!;
  started.push(pid);
  return pid;
}

describe('execHandler: process groups', () => {
  it("the item's signal ends the command's whole group: a shell that traps TERM and a child that ignores it", async () => {
    const dir = join(root, `t${++n}`);
    const shell = join(dir, 'shell.pid');
    const child = join(dir, 'child.pid');
    // The shell survives SIGTERM (its trap), its child ignores it and keeps the shell's stdout open.
    const command = `mkdir -p "${dir}" && trap 'echo got TERM >&2' TERM; echo $$ > "${shell}.tmp" && mv "${shell}.tmp" "${shell}"; ${deafProcess(child)} & while :; do sleep 0.05; done`;
    const abort = new AbortController();
    const outcome = run(command, abort.signal);
    const [shellPid, childPid] = [await pidOf(shell), await pidOf(child)];
    abort.abort(new Error('lease lost'));
    await expect(outcome).rejects.toThrow(/killed by SIGKILL/);
    await execChildrenEnded();
    await expect.poll(() => processGone(shellPid), { timeout: 30_000 }).toBe(true);
    await expect.poll(() => processGone(childPid), { timeout: 30_000 }).toBe(true);
  });

  it('a command that exits leaving a process behind: its result stands, and what it left is ended', async () => {
    const dir = join(root, `t${++n}`);
    const child = join(dir, 'child.pid');
    const command = `mkdir -p "${dir}" && { ${deafProcess(child)} > /dev/null 2>&1 & } && while [ ! -f "${child}" ]; do sleep 0.05; done; echo '{"ok":true}'`;
    const outcome = run(command);
    const childPid = await pidOf(child);
    expect(await outcome).toEqual({ ok: true });
    await execChildrenEnded();
    await expect.poll(() => processGone(childPid), { timeout: 30_000 }).toBe(true);
  });

  it('stdout past the limit fails the item and stops the command, without reading the rest', async () => {
    const dir = join(root, `t${++n}`);
    const pid = join(dir, 'writer.pid');
    // 50 MB of valid JSON, written by a process that ignores SIGTERM (SIGPIPE or SIGKILL ends it).
    const js = `process.on('SIGTERM',()=>{});require('fs').writeFileSync(${JSON.stringify(pid)},String(process.pid));const s='1,'.repeat(1<<20);process.stdout.write('[');for(let i=0;i<25;i++)process.stdout.write(s);process.stdout.write('1]')`;
    const command = `mkdir -p "${dir}" && "${process.execPath}" -e "${js.replaceAll('"', '\\"')}"`;
    await expect(run(command)).rejects.toMatchObject({
      name: 'FailNow',
      message: expect.stringMatching(
        /^result refused: stdout is larger than the 4194304 byte limit .*at most 1048576 bytes of JSON/,
      ),
    });
    const writer = await pidOf(pid);
    await execChildrenEnded();
    await expect.poll(() => processGone(writer), { timeout: 30_000 }).toBe(true);
  });

  it('refuses a kill delay that is no whole number of ms with INVALID_INPUT', () => {
    for (const killAfterMs of [-1, 1.5, Number.NaN]) {
      expect(() => execHandler({ command: 'true', killAfterMs })).toThrow(
        expect.objectContaining({ code: 'INVALID_INPUT', details: { field: 'killAfterMs' } }),
      );
    }
  });
});
