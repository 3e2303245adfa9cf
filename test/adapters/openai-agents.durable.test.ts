// The OpenAI Agents SDK adapter in-process: durableAgent / durableModel / durableTools around the SDK's own
// test model (ScriptedModel, from @openai/agents/testing) and its real run(). A later attempt of the item
// replays the recorded model responses and tool outcomes: the model is not called again for the turns done,
// completed tools are not invoked again. (The same through a SIGKILL, on both backends:
// durable-agents.crash.test.ts.)
import { Agent, run, tool, Usage } from '@openai/agents';
import {
  assistantMessage,
  functionCall,
  modelError,
  modelResponse,
  ScriptedModel,
} from '@openai/agents/testing';
import { describe, expect, it } from 'vitest';
import {
  durableAgent,
  durableModel,
  durableTools,
  ModelCallFailed,
  stepOf,
} from '../../src/adapters/openai-agents/index.js';
import { isAgentStateError } from '../../src/errors.js';
import { agentOf, lookupTool, runAgent, scriptedModel } from '../fixtures/openai-agent.js';
import { backendsForThisFile } from '../helpers/backends.js';
import { durableWorld, until } from '../helpers/durable-world.js';

const [sqlite] = await backendsForThisFile();
const forever = () => new Promise<never>(() => {});

const world = () => durableWorld(sqlite!);

describe('durableAgent (OpenAI Agents SDK, run)', () => {
  it('after a crash mid-run, the next attempt calls the model only for the turns not recorded and invokes only the tools not recorded; the answer is an uncrashed run’s', async () => {
    const uncrashed = await runAgent(agentOf());
    const w = await world();
    const model: Array<[number, number]> = [];
    const tools: Array<[number, number]> = [];
    const run1 = await w.attempt();
    void runAgent(
      durableAgent(
        run1,
        agentOf(
          (k) => {
            model.push([1, k]);
            if (k === 3) return forever();
          },
          (k) => tools.push([1, k]),
        ),
      ),
    );
    await until(() => model.length === 3);
    expect(await w.steps()).toEqual([
      'model 1 completed',
      'tool lookup call-1 completed',
      'model 2 completed',
      'tool lookup call-2 completed',
    ]);
    const run2 = await w.attempt();
    const answer = await runAgent(
      durableAgent(
        run2,
        agentOf(
          (k) => model.push([2, k]),
          (k) => tools.push([2, k]),
        ),
      ),
    );
    expect(answer).toBe(uncrashed);
    expect(model).toEqual([
      [1, 1],
      [1, 2],
      [1, 3],
      [2, 3],
      [2, 4],
      [2, 5],
    ]);
    expect(tools).toEqual([
      [1, 1],
      [1, 2],
      [2, 3],
      [2, 4],
    ]);
    await w.inst.close();
  });

  it('replay returns the recorded responses (usage a Usage again), not what the model would say now', async () => {
    const w = await world();
    const first = await run(durableAgent(await w.attempt(), agentOf()), 'Look up four numbers.');
    const silent = new ScriptedModel([]);
    const replayed = new Agent({
      name: 'looker',
      model: silent,
      tools: [
        lookupTool(() => {
          throw new Error('a tool ran on replay');
        }),
      ],
    });
    const second = await run(durableAgent(await w.attempt(), replayed), 'Look up four numbers.');
    expect(silent.calls).toHaveLength(0);
    expect(second.finalOutput).toBe(first.finalOutput);
    expect(second.rawResponses.map((r) => r.output)).toEqual(first.rawResponses.map((r) => r.output));
    expect(second.rawResponses[0]!.usage).toBeInstanceOf(Usage);
    expect(second.rawResponses.map((r) => [r.responseId, r.usage.totalTokens])).toEqual(
      first.rawResponses.map((r) => [r.responseId, r.usage.totalTokens]),
    );
    expect(second.state.usage.totalTokens).toBe(first.state.usage.totalTokens);
    await w.inst.close();
  });

  it('a streamed run is recorded and replayed the same way', async () => {
    const w = await world();
    const calls: number[] = [];
    const ran: number[] = [];
    const go = async () =>
      runAgent(
        durableAgent(
          await w.attempt(),
          agentOf(
            (k) => calls.push(k),
            (k) => ran.push(k),
          ),
        ),
        true,
      );
    const first = await go();
    expect(await go()).toBe(first);
    expect(first).toBe(await runAgent(agentOf(), true));
    expect(calls).toEqual([1, 2, 3, 4, 5]);
    expect(ran).toEqual([1, 2, 3, 4]);
    await w.inst.close();
  });

  it('parallel function calls in one response are steps of their own, by call id', async () => {
    const w = await world();
    let invoked = 0;
    const agent = () =>
      new Agent({
        name: 'two',
        model: new ScriptedModel([
          modelResponse([
            functionCall('lookup', { k: 2 }, { callId: 'call-b' }),
            functionCall('lookup', { k: 1 }, { callId: 'call-a' }),
          ]),
          modelResponse([assistantMessage('both')]),
        ]),
        tools: [lookupTool(() => invoked++)],
      });
    const first = await run(durableAgent(await w.attempt(), agent()), 'two at once');
    expect(await w.steps()).toEqual([
      'model 1 completed',
      'tool lookup call-b completed',
      'tool lookup call-a completed',
      'model 2 completed',
    ]);
    const second = await run(durableAgent(await w.attempt(), agent()), 'two at once');
    expect(invoked).toBe(2);
    const outputs = (r: typeof first) =>
      r.newItems.filter((i) => i.type === 'tool_call_output_item').map((i) => [i.rawItem, i.output]);
    expect(outputs(second)).toEqual(outputs(first));
    await w.inst.close();
  });

  it('a tool whose error the SDK hands the model: the model saw it once, and replay gives it the same without invoking the tool', async () => {
    const w = await world();
    let invoked = 0;
    const agent = () =>
      new Agent({
        name: 'pay',
        model: new ScriptedModel([
          modelResponse([functionCall('charge', {}, { callId: 'c1' })]),
          modelResponse([assistantMessage('declined')]),
        ]),
        tools: [
          tool({
            name: 'charge',
            description: 'Charges',
            parameters: { type: 'object', properties: {}, required: [], additionalProperties: false },
            strict: true,
            execute: async (): Promise<string> => {
              invoked++;
              throw new Error('card declined');
            },
          }),
        ],
      });
    const first = await run(durableAgent(await w.attempt(), agent()), 'pay');
    const second = await run(durableAgent(await w.attempt(), agent()), 'pay');
    expect(invoked).toBe(1);
    const output = (r: typeof first) => r.newItems.find((i) => i.type === 'tool_call_output_item')?.output;
    // The SDK's default errorFunction turns the error into what the model reads; that is the recorded outcome.
    expect(String(output(first))).toContain('An error occurred while running the tool');
    expect(output(second)).toEqual(output(first));
    await w.inst.close();
  });

  it('the crash window: a tool whose result was never committed is invoked again with the same idempotency key (stepOf(details).key)', async () => {
    const w = await world();
    const keys: Array<[number, string]> = [];
    const agent = (attempt: number) =>
      new Agent({
        name: 'looker',
        model: scriptedModel(),
        tools: [
          tool({
            name: 'lookup',
            description: 'Looks a number up',
            parameters: {
              type: 'object',
              properties: { k: { type: 'number' } },
              required: ['k'],
              additionalProperties: false,
            },
            strict: true,
            execute: async (input, _context, details) => {
              const { k } = input as { k: number };
              keys.push([k, stepOf(details)?.key ?? 'none']);
              if (attempt === 1 && k === 2) await forever();
              return String(k);
            },
          }),
        ],
      });
    void runAgent(durableAgent(await w.attempt(), agent(1)));
    await until(() => keys.length === 2);
    await runAgent(durableAgent(await w.attempt(), agent(2)));
    expect(keys.map(([k]) => k)).toEqual([1, 2, 2, 3, 4]);
    expect(keys[1]![1]).toMatch(/^as1_[A-Za-z0-9_-]{39}$/);
    expect(keys[2]![1]).toBe(keys[1]![1]);
    expect(new Set(keys.map(([, key]) => key)).size).toBe(4);
    await w.inst.close();
  });

  it('a failed model call ends the attempt with ModelCallFailed; the next attempt makes that call again', async () => {
    const w = await world();
    const agent = (model: ScriptedModel) => new Agent({ name: 'a', model, tools: [lookupTool()] });
    const failing = new ScriptedModel([modelError(new Error('overloaded'))]);
    const err = await run(durableAgent(await w.attempt(), agent(failing)), 'hi').catch((e) => e);
    expect(err).toBeInstanceOf(ModelCallFailed);
    expect((err as ModelCallFailed).message).toContain('overloaded');
    expect(await w.steps()).toEqual(['model 1 failed']);
    const ok = new ScriptedModel([modelResponse([assistantMessage('fine')])]);
    const second = await run(durableAgent(await w.attempt(), agent(ok)), 'hi');
    expect(second.finalOutput).toBe('fine');
    expect(await w.steps()).toEqual(['model 1 failed', 'model 1 completed']);
    await w.inst.close();
  });

  it('refuses what it cannot wrap with INVALID_INPUT saying what to pass', async () => {
    const w = await world();
    const r = await w.attempt();
    const refused = (f: () => unknown, what: string) => {
      let err: unknown;
      try {
        f();
      } catch (e) {
        err = e;
      }
      expect(isAgentStateError(err, 'INVALID_INPUT'), String(err)).toBe(true);
      expect((err as Error).message).toContain(what);
    };
    refused(() => durableAgent(r, new Agent({ name: 'named', model: 'gpt-5' })), 'provider.getModel(name)');
    refused(() => durableModel(r, 'gpt-5' as never), 'a model name such as "gpt-5"');
    refused(() => durableModel({ steps: 1 } as never, scriptedModel()), 'worker handler');
    refused(() => durableModel(r, scriptedModel(), { name: '' }), 'must not be empty');
    refused(() => durableTools(r, {} as never), 'array of tools');
    refused(() => durableAgent(r, {} as never), 'Agents SDK Agent');
    await w.inst.close();
  });
});
