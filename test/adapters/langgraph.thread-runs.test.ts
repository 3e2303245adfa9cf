// One run at a time on a thread (AgentStateSaver.runOnThread): multitask "enqueue" runs wait their turn in
// the order they came and the thread stays one line; "reject" refuses a second run at once and it writes
// nothing; a run whose process stopped renewing gives the thread up when its lease ends.
import { Annotation, END, START, StateGraph } from '@langchain/langgraph';
import { describe, expect, it } from 'vitest';
import { AgentStateSaver, RUNS_KIND, ThreadBusyError } from '../../src/adapters/langgraph/index.js';
import { ThreadRun } from '../../src/adapters/langgraph/thread-runs.js';
import { type Instance, isAgentStateError } from '../../src/index.js';
import { backendsForThisFile } from '../helpers/backends.js';
import { forks, history } from '../helpers/langgraph.js';

const State = Annotation.Root({
  log: Annotation<string[]>({ reducer: (a, b) => a.concat(b), default: () => [] }),
});

/** A graph of two nodes; `gate` holds the first node until the test lets it go. */
function graphOf(saver: AgentStateSaver, label: string, gate: () => Promise<void> = async () => {}) {
  return new StateGraph(State)
    .addNode('first', async () => {
      await gate();
      return { log: [`${label}:1`] };
    })
    .addNode('second', async () => ({ log: [`${label}:2`] }))
    .addEdge(START, 'first')
    .addEdge('first', 'second')
    .addEdge('second', END)
    .compile({ checkpointer: saver });
}

function gate(): { wait: () => Promise<void>; open: () => void; reached: Promise<void> } {
  let open!: () => void;
  let reached!: () => void;
  const opened = new Promise<void>((r) => {
    open = r;
  });
  const reachedP = new Promise<void>((r) => {
    reached = r;
  });
  return {
    wait: async () => {
      reached();
      await opened;
    },
    open,
    reached: reachedP,
  };
}

async function runsDoc(inst: Instance, thread: string) {
  const doc = await inst.backend.docs.get(RUNS_KIND, thread);
  return doc?.body as { holder: { run: string } | null; waiting: Array<{ run: string }> } | undefined;
}

async function until(check: () => Promise<boolean>, what: string, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

for (const backend of await backendsForThisFile()) {
  describe(`AgentStateSaver.runOnThread on ${backend.name}`, () => {
    it('enqueue: three runs from three handles run one after another, in the order they came, on one line', async () => {
      const handles = [await backend.open('q'), await backend.open('q'), await backend.open('q')];
      try {
        const savers = handles.map((h) => new AgentStateSaver(h));
        const config = { configurable: { thread_id: 'queued' } };
        const g = gate();
        const a = savers[0]!.runOnThread(
          config,
          () => graphOf(savers[0]!, 'A', g.wait).invoke({ log: [] }, config),
          {
            multitaskStrategy: 'enqueue',
          },
        );
        await g.reached;
        const b = savers[1]!.runOnThread(config, () => graphOf(savers[1]!, 'B').invoke({ log: [] }, config), {
          multitaskStrategy: 'enqueue',
        });
        await until(async () => (await runsDoc(handles[0]!, 'queued'))?.waiting.length === 1, 'B to queue');
        const c = savers[2]!.runOnThread(config, () => graphOf(savers[2]!, 'C').invoke({ log: [] }, config), {
          multitaskStrategy: 'enqueue',
        });
        await until(async () => (await runsDoc(handles[0]!, 'queued'))?.waiting.length === 2, 'C to queue');
        g.open();
        const [ra, rb, rc] = await Promise.all([a, b, c]);
        // Each run started from the one before it: nothing lost, nothing forked.
        expect(ra.log).toEqual(['A:1', 'A:2']);
        expect(rb.log).toEqual(['A:1', 'A:2', 'B:1', 'B:2']);
        expect(rc.log).toEqual(['A:1', 'A:2', 'B:1', 'B:2', 'C:1', 'C:2']);
        expect(forks(await history(savers[0]!, 'queued'))).toEqual([]);
        const doc = await runsDoc(handles[0]!, 'queued');
        expect(doc).toMatchObject({ holder: null, waiting: [] });
        // The audit names each run's start and end, in order.
        const events = await handles[0]!.events.read({
          type: ['langgraph_run_started', 'langgraph_run_ended'],
        });
        expect(events.map((e) => e.type)).toEqual([
          'langgraph_run_started',
          'langgraph_run_ended',
          'langgraph_run_started',
          'langgraph_run_ended',
          'langgraph_run_started',
          'langgraph_run_ended',
        ]);
        expect(new Set(events.map((e) => (e.data as { run: string }).run)).size).toBe(3);
      } finally {
        for (const h of handles) await h.close();
      }
    });

    it('reject: a second run while one holds the thread is refused at once and writes nothing', async () => {
      const one = await backend.open('r');
      const two = await backend.open('r');
      try {
        const sa = new AgentStateSaver(one);
        const sb = new AgentStateSaver(two);
        const config = { configurable: { thread_id: 'busy' } };
        const g = gate();
        const a = sa.runOnThread(config, () => graphOf(sa, 'A', g.wait).invoke({ log: [] }, config));
        await g.reached;
        const before = await runsDoc(one, 'busy');
        let started = false;
        const err = await sb
          .runOnThread(config, async () => {
            started = true;
          })
          .catch((e: unknown) => e);
        expect(started).toBe(false);
        expect(err).toBeInstanceOf(ThreadBusyError);
        expect(isAgentStateError(err, 'STATE_CONFLICT')).toBe(true);
        expect((err as ThreadBusyError).details).toMatchObject({
          thread_id: 'busy',
          holder_run: before?.holder?.run,
          rule: 'one-run-per-thread',
        });
        expect(await runsDoc(one, 'busy')).toEqual(before);
        g.open();
        expect((await a).log).toEqual(['A:1', 'A:2']);
        // Once A has ended, a rejecting run gets the thread.
        const after = await sb.runOnThread(config, () => graphOf(sb, 'B').invoke({ log: [] }, config));
        expect(after.log).toEqual(['A:1', 'A:2', 'B:1', 'B:2']);
      } finally {
        await one.close();
        await two.close();
      }
    });

    it('a run whose process stopped renewing frees the thread when its lease ends', async () => {
      const inst = await backend.open();
      try {
        // A run that took the thread and then died: it never renews nor releases.
        const dead = new ThreadRun(inst, { actor: 'dead', actorKind: 'system' }, 'orphan', '', 300);
        await dead.acquire('enqueue', 1000);
        const saver = new AgentStateSaver(inst);
        const config = { configurable: { thread_id: 'orphan' } };
        await expect(saver.runOnThread(config, async () => 'no')).rejects.toBeInstanceOf(ThreadBusyError);
        const out = await saver.runOnThread(
          config,
          () => graphOf(saver, 'next').invoke({ log: [] }, config),
          {
            multitaskStrategy: 'enqueue',
            timeoutMs: 20_000,
          },
        );
        expect(out.log).toEqual(['next:1', 'next:2']);
        const started = await inst.events.read({ type: ['langgraph_run_started'] });
        expect(started.map((e) => (e.data as { previous_run: string | null }).previous_run)).toEqual([
          null,
          dead.run,
        ]);
        expect(await dead.renew()).toBe(false);
      } finally {
        await inst.close();
      }
    });

    it('enqueue gives up after timeoutMs with LOCK_TIMEOUT and leaves the queue', async () => {
      const inst = await backend.open();
      try {
        const holder = new ThreadRun(inst, { actor: 'holder', actorKind: 'system' }, 'held', '', 60_000);
        await holder.acquire('reject', 1000);
        const saver = new AgentStateSaver(inst);
        const config = { configurable: { thread_id: 'held' } };
        const err = await saver
          .runOnThread(config, async () => 'never', { multitaskStrategy: 'enqueue', timeoutMs: 300 })
          .catch((e: unknown) => e);
        expect(isAgentStateError(err, 'LOCK_TIMEOUT')).toBe(true);
        expect(await runsDoc(inst, 'held')).toMatchObject({ holder: { run: holder.run }, waiting: [] });
        await holder.release();
        expect(await runsDoc(inst, 'held')).toMatchObject({ holder: null });
      } finally {
        await inst.close();
      }
    });

    it('an aborted wait leaves the queue; a failing run gives the thread up and its own error is thrown', async () => {
      const inst = await backend.open();
      try {
        const holder = new ThreadRun(inst, { actor: 'holder', actorKind: 'system' }, 'abort', '', 60_000);
        await holder.acquire('reject', 1000);
        const saver = new AgentStateSaver(inst);
        const config = { configurable: { thread_id: 'abort' } };
        const ac = new AbortController();
        const waiting = saver
          .runOnThread(config, async () => 'never', { multitaskStrategy: 'enqueue', signal: ac.signal })
          .catch((e: unknown) => e);
        await until(async () => (await runsDoc(inst, 'abort'))?.waiting.length === 1, 'the run to queue');
        ac.abort(new Error('stop waiting'));
        expect(((await waiting) as Error).message).toBe('stop waiting');
        expect(await runsDoc(inst, 'abort')).toMatchObject({ holder: { run: holder.run }, waiting: [] });
        await holder.release();
        const boom = await saver
          .runOnThread(config, async () => {
            throw new Error('the graph failed');
          })
          .catch((e: unknown) => e);
        expect((boom as Error).message).toBe('the graph failed');
        expect(await runsDoc(inst, 'abort')).toMatchObject({ holder: null, waiting: [] });
      } finally {
        await inst.close();
      }
    });

    it('refuses bad options and configs with INVALID_INPUT, writing nothing', async () => {
      const inst = await backend.open();
      try {
        const saver = new AgentStateSaver(inst);
        const config = { configurable: { thread_id: 'x' } };
        const bad: unknown[] = [
          { multitaskStrategy: 'interrupt' },
          { leaseMs: -1 },
          { leaseMs: Number.NaN },
          { timeoutMs: '5' },
        ];
        for (const options of bad) {
          const err = await saver
            .runOnThread(config, async () => 1, options as never)
            .catch((e: unknown) => e);
          expect(isAgentStateError(err, 'INVALID_INPUT')).toBe(true);
        }
        const err = await saver.runOnThread({ configurable: {} }, async () => 1).catch((e: unknown) => e);
        expect(isAgentStateError(err, 'INVALID_INPUT')).toBe(true);
        expect(await runsDoc(inst, 'x')).toBeUndefined();
      } finally {
        await inst.close();
      }
    });
  });
}
