// Durable agents through a SIGKILL, on every backend: a worker process runs an agent loop of four tool calls
// (the AI SDK's generateText with its MockLanguageModelV4, or the OpenAI Agents SDK's run with its
// ScriptedModel), made durable by the adapter, and is killed right after its second tool step committed.
// A worker started on a clock past the dead one's lease finishes the run: the model is not called again for
// the turns recorded, the tools that completed do not run again, and the answer is an uncrashed run's.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { agentTools, mockModel, runAgent } from '../fixtures/ai-sdk-agent.js';
import { agentOf, runAgent as runOpenAIAgent } from '../fixtures/openai-agent.js';
import { backendsForThisFile } from '../helpers/backends.js';
import { runWorker as run } from '../helpers/kill-worker.js';
import { tempDir } from '../helpers/tmp.js';

const WORKER = new URL('../fixtures/durable-agent-worker.ts', import.meta.url).pathname;
const backends = await backendsForThisFile();
const root = tempDir();

/** The real calls counted in `file` for item `id`: `[what, k, attempt]`. */
function counts(file: string, id: string): Array<[string, number, number]> {
  return readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .filter((l) => l.startsWith(`${id} `))
    .map((l) => {
      const [, what, k, attempt] = l.split(' ');
      return [what!, Number(k), Number(attempt)];
    });
}

const frameworks = [
  {
    name: 'AI SDK',
    env: 'ai-sdk',
    uncrashed: () => runAgent({ model: mockModel(), tools: agentTools() }),
    toolStep: (k: number) => `tool lookup call-${k}`,
  },
  {
    name: 'OpenAI Agents SDK',
    env: 'openai-agents',
    uncrashed: () => runOpenAIAgent(agentOf()),
    toolStep: (k: number) => `tool lookup call-${k}`,
  },
] as const;

describe.each(backends)('$name: a durable agent through a SIGKILL', (b) => {
  for (const f of frameworks) {
    it(`${f.name}: killed after its second tool committed, the restarted run calls the model only for the turns not recorded, runs no completed tool again, and answers as an uncrashed run`, async () => {
      const key = `agent-${b.name}-${f.env}`;
      const seed = await b.open(key);
      const item = await seed.work.enqueue({ title: 'four lookups', max_attempts: 3 });
      await seed.close();
      const [, dir, , url] = b.cliArgs(key);
      const args = url ? [dir!, url] : [dir!];
      const file = join(root, `${key}.counts`);
      writeFileSync(file, '');
      const env = { COUNTS_FILE: file, FRAMEWORK: f.env };

      // The fixture is TypeScript: node runs it through tsx.
      const first = await run(
        WORKER,
        args,
        { ...env, HANG_AFTER_TOOLS: '2' },
        `committed ${item.id} ${f.toolStep(2)}`,
        ['--import', 'tsx'],
      );
      expect(first.filter((l) => l.startsWith('committed '))).toEqual([
        `committed ${item.id} ${f.toolStep(1)}`,
        `committed ${item.id} ${f.toolStep(2)}`,
      ]);
      // Two hours later on the store's clock: the dead worker's lease (60 s) has run out.
      const second = await run(
        WORKER,
        args,
        { ...env, CLOCK_OFFSET_MS: String(2 * 3_600_000), DRAIN: '1' },
        undefined,
        ['--import', 'tsx'],
      );
      expect(second).toContain(`resolved ${item.id} done`);

      // The first attempt made turns 1 and 2; the second only 3, 4 and the answer (5): the model was not
      // called again for the turns recorded, and the tools that completed did not run again.
      expect(counts(file, item.id)).toEqual([
        ['model', 1, 1],
        ['tool', 1, 1],
        ['model', 2, 1],
        ['tool', 2, 1],
        ['model', 3, 2],
        ['tool', 3, 2],
        ['model', 4, 2],
        ['tool', 4, 2],
        ['model', 5, 2],
      ]);
      const inst = await b.open(key);
      try {
        const done = await inst.work.get(item.id);
        expect(done.status).toBe('done');
        expect(done.result).toBe(await f.uncrashed());
        expect((await inst.work.steps(item.id)).map((r) => r.type === 'step' && [r.name, r.attempt])).toEqual(
          [
            ['model 1', 1],
            [f.toolStep(1), 1],
            ['model 2', 1],
            [f.toolStep(2), 1],
            ['model 3', 2],
            [f.toolStep(3), 2],
            ['model 4', 2],
            [f.toolStep(4), 2],
            ['model 5', 2],
          ],
        );
        expect((await inst.events.verify()).ok).toBe(true);
      } finally {
        await inst.close();
      }
    });
  }
});
