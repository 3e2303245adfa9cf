// A process extending a LangGraph thread is SIGKILLed between put and putWrites (and anywhere else): every
// checkpoint and every pending write it was told were stored is there afterwards, intact, and the thread
// is a single chain.
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { AgentStateSaver } from '../../src/adapters/langgraph/index.js';
import { backendsForThisFile } from '../helpers/backends.js';

const WRITER = new URL('../fixtures/langgraph-crash-writer.mjs', import.meta.url).pathname;

/** Runs the writer and kills it once it has acknowledged `after` lines; returns what it acknowledged. */
function runAndKill(args: string[], after: number): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [WRITER, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stderr.on('data', (d) => {
      err += d;
    });
    child.stdout.on('data', (d) => {
      out += d;
      if (out.split('\n').length > after) child.kill('SIGKILL');
    });
    child.on('exit', (_code, signal) => {
      if (signal !== 'SIGKILL') reject(new Error(`writer ended without being killed: ${err}`));
      // Only complete lines were acknowledged.
      else resolve(out.split('\n').slice(0, -1));
    });
  });
}

for (const backend of await backendsForThisFile()) {
  describe(`AgentStateSaver on ${backend.name}`, () => {
    it('loses nothing acknowledged when the process is killed between put and putWrites', async () => {
      const key = `crash-${backend.name}`;
      const args = backend.cliArgs(key);
      // Killed at an odd line count: right after a put was acknowledged, before its writes were.
      const acked = await runAndKill([args[1]!, ...(args[3] ? [args[3]] : [])], 61);
      const inst = await backend.open(key);
      try {
        const saver = new AgentStateSaver(inst);
        const puts = acked.filter((l) => l.startsWith('put ')).map((l) => l.split(' '));
        const writes = new Set(acked.filter((l) => l.startsWith('writes ')).map((l) => l.split(' ')[1]));
        expect(puts.length).toBeGreaterThanOrEqual(30);
        for (const [, id, step] of puts) {
          const t = await saver.getTuple({
            configurable: { thread_id: 'crash', checkpoint_ns: '', checkpoint_id: id },
          });
          expect(t, `checkpoint ${id}`).toBeDefined();
          expect(t!.checkpoint.channel_values).toEqual({
            count: Number(step),
            text: 'x'.repeat(Number(step) % 50),
          });
          if (writes.has(id)) expect(t!.pendingWrites).toEqual([[`task-${step}`, 'count', Number(step) + 1]]);
        }
        // One chain, newest first, each the parent of the one before.
        const chain = [];
        for await (const t of saver.list({ configurable: { thread_id: 'crash', checkpoint_ns: '' } }))
          chain.push(t);
        for (let i = 0; i + 1 < chain.length; i++) {
          expect(chain[i]!.parentConfig?.configurable?.checkpoint_id).toBe(chain[i + 1]!.checkpoint.id);
        }
        expect((await inst.events.verify()).ok).toBe(true);
      } finally {
        await inst.close();
      }
    });
  });
}
