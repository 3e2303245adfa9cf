// The AI SDK adapter in-process: durableModel and durableTools around the AI SDK's own mock model
// (MockLanguageModelV4, from ai/test) and its real generateText / streamText. A later attempt of the item
// replays the recorded model calls and tool outcomes: the model is not called again for the turns done, and
// completed tools do not run again. (The same through a SIGKILL, on both backends: ai-sdk.crash.test.ts.)
import { APICallError, generateText, jsonSchema, stepCountIs, tool } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { describe, expect, it } from 'vitest';
import {
  durableMiddleware,
  durableModel,
  durableTools,
  fromRecord,
  ModelCallFailed,
  stepOf,
  toRecord,
} from '../../src/adapters/ai-sdk/index.js';
import { isAgentStateError } from '../../src/errors.js';
import { agentTools, mockModel, mockStreamingModel, reply, runAgent } from '../fixtures/ai-sdk-agent.js';
import { backendsForThisFile } from '../helpers/backends.js';
import { durableWorld, until } from '../helpers/durable-world.js';

const [sqlite] = await backendsForThisFile();
const forever = () => new Promise<never>(() => {});

const world = () => durableWorld(sqlite!);

describe('durableModel and durableTools (AI SDK 7, generateText)', () => {
  it('after a crash mid-loop, the next attempt calls the model only for the turns not recorded and runs only the tools not recorded; the answer is an uncrashed run’s', async () => {
    const uncrashed = await runAgent({ model: mockModel(), tools: agentTools() });
    const w = await world();
    const model: Array<[number, number]> = [];
    const tools: Array<[number, number]> = [];
    // Attempt 1 dies while the model's third call runs (it never returns): turns 1 and 2 were recorded.
    const run1 = await w.attempt();
    void runAgent({
      model: durableModel(
        run1,
        mockModel((k) => {
          model.push([1, k]);
          if (k === 3) return forever() as never;
        }),
      ),
      tools: durableTools(
        run1,
        agentTools((k) => tools.push([1, k])),
      ),
    });
    await until(() => model.length === 3);
    expect(await w.steps()).toEqual([
      'model 1 completed',
      'tool lookup call-1 completed',
      'model 2 completed',
      'tool lookup call-2 completed',
    ]);
    const run2 = await w.attempt();
    const text = await runAgent({
      model: durableModel(
        run2,
        mockModel((k) => model.push([2, k])),
      ),
      tools: durableTools(
        run2,
        agentTools((k) => tools.push([2, k])),
      ),
    });
    expect(text).toBe(uncrashed);
    // The third call's result was never recorded: it is made again, and only it and what follows.
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
    expect((await w.inst.work.steps(w.item.id)).map((r) => r.type === 'step' && [r.name, r.attempt])).toEqual(
      [
        ['model 1', 1],
        ['tool lookup call-1', 1],
        ['model 2', 1],
        ['tool lookup call-2', 1],
        ['model 3', 2],
        ['tool lookup call-3', 2],
        ['model 4', 2],
        ['tool lookup call-4', 2],
        ['model 5', 2],
      ],
    );
    await w.inst.close();
  });

  it('replay returns the recorded model output, not what the model would say now, and the SDK’s result is the same', async () => {
    const w = await world();
    const run1 = await w.attempt();
    const first = await generateText({
      model: durableModel(run1, mockModel()),
      tools: durableTools(run1, agentTools()),
      prompt: 'Look up four numbers.',
      stopWhen: stepCountIs(10),
    });
    const run2 = await w.attempt();
    // A model that would answer something else, and tools that would too: neither is called.
    const other = new MockLanguageModelV4({
      doGenerate: async () => {
        throw new Error('the model was called on replay');
      },
    });
    const second = await generateText({
      model: durableModel(run2, other),
      tools: durableTools(
        run2,
        agentTools(() => {
          throw new Error('a tool ran on replay');
        }),
      ),
      prompt: 'Look up four numbers.',
      stopWhen: stepCountIs(10),
    });
    expect(other.doGenerateCalls).toHaveLength(0);
    expect(second.text).toBe(first.text);
    const view = (r: typeof first) =>
      r.steps.map((s) => ({
        content: s.content,
        finishReason: s.finishReason,
        usage: s.usage,
        response: { id: s.response.id, timestamp: s.response.timestamp, modelId: s.response.modelId },
      }));
    expect(view(second)).toEqual(view(first));
    expect(second.steps[0]!.response.timestamp).toBeInstanceOf(Date);
    await w.inst.close();
  });

  it('a model result with Dates, bytes and undefined fields comes back as the SDK took it the first time', async () => {
    const bytes = new Uint8Array([0, 1, 2, 250, 255]);
    const result = {
      content: [
        {
          type: 'reasoning',
          text: 'thinking',
          providerMetadata: { mock: { signature: 'sig', empty: null } },
        },
        { type: 'file', mediaType: 'image/png', data: { type: 'data', data: bytes } },
        { type: 'text', text: 'a NUL \u0000 and a lone \ud800 survive' },
      ],
      finishReason: { unified: 'stop', raw: undefined },
      usage: {
        inputTokens: { total: 3, noCache: undefined, cacheRead: 0, cacheWrite: undefined },
        outputTokens: { total: 2, text: undefined, reasoning: 1 },
      },
      providerMetadata: { mock: { $as: 'not a tag', constructor: 'a key the store refuses' } },
      request: { body: { huge: 'the whole prompt' } },
      response: {
        id: 'r1',
        timestamp: new Date('2026-02-03T04:05:06.789Z'),
        modelId: 'mock',
        headers: { 'x-a': '1' },
        body: 'raw',
      },
      warnings: [],
    };
    const w = await world();
    const call = async (model: MockLanguageModelV4) => {
      const run = await w.attempt();
      return generateText({ model: durableModel(run, model), prompt: 'draw' });
    };
    const live = new MockLanguageModelV4({ doGenerate: async () => result as never });
    const first = await call(live);
    const replay = new MockLanguageModelV4({ doGenerate: async () => reply([]) as never });
    const second = await call(replay);
    expect(replay.doGenerateCalls).toHaveLength(0);
    expect(second.files[0]!.uint8Array).toEqual(bytes);
    expect(second.files[0]!.uint8Array).toBeInstanceOf(Uint8Array);
    expect(second.response.timestamp).toEqual(new Date('2026-02-03T04:05:06.789Z'));
    expect(second.text).toBe('a NUL \u0000 and a lone \ud800 survive');
    expect(second.rawFinishReason).toBeUndefined();
    expect(second.usage).toEqual(first.usage);
    expect(second.providerMetadata).toEqual(first.providerMetadata);
    expect(Object.keys(second.providerMetadata!.mock!)).toEqual(['$as', 'constructor']);
    expect(second.reasoning).toEqual(first.reasoning);
    expect(second.response.headers).toEqual({ 'x-a': '1' });
    // The bodies are for telemetry: not recorded (the first run gets what is recorded, as every step does).
    expect(first.response.body).toBeUndefined();
    expect(second.response.body).toBeUndefined();
    expect(second.request.body).toBeUndefined();
    await w.inst.close();
  });

  it('tool call ids keep tool steps apart: parallel calls of one tool, started in another order, take their places in the model’s order', async () => {
    const model = () =>
      new MockLanguageModelV4({
        doGenerate: async ({ prompt }) => {
          const done = prompt.some((m) => m.role === 'tool');
          if (done) return { ...reply([]), content: [{ type: 'text', text: 'both looked up' }] } as never;
          return {
            ...reply([]),
            content: [
              { type: 'tool-call', toolCallId: 'call-b', toolName: 'lookup', input: '{"k":2}' },
              { type: 'tool-call', toolCallId: 'call-a', toolName: 'lookup', input: '{"k":1}' },
            ],
          } as never;
        },
      });
    const ran: number[] = [];
    /** One attempt, where the tool call `slow` starts a few microtasks after the other. */
    const attempt = async (
      run: Awaited<ReturnType<Awaited<ReturnType<typeof world>>['attempt']>>,
      slow: string,
    ) =>
      generateText({
        model: durableModel(run, model()),
        tools: durableTools(
          run,
          agentTools((k) => ran.push(k)),
        ),
        prompt: 'two at once',
        stopWhen: stepCountIs(5),
        onToolExecutionStart: async (e) => {
          if (e.toolCall.toolCallId === slow) for (let i = 0; i < 20; i++) await Promise.resolve();
        },
      });
    const w = await world();
    const first = await attempt(await w.attempt(), 'call-b');
    expect(await w.steps()).toEqual([
      'model 1 completed',
      'tool lookup call-b completed',
      'tool lookup call-a completed',
      'model 2 completed',
    ]);
    // The other tool call is the slow one now: the replay still finds each record in its place.
    const second = await attempt(await w.attempt(), 'call-a');
    expect(ran.sort()).toEqual([1, 2]);
    const outputs = (r: typeof first) => r.steps[0]!.toolResults.map((t) => [t.toolCallId, t.output]);
    expect(outputs(second)).toEqual([
      ['call-b', { k: 2, square: 4 }],
      ['call-a', { k: 1, square: 1 }],
    ]);
    expect(outputs(second)).toEqual(outputs(first));
    await w.inst.close();
  });

  it('the crash window: a tool whose result was never committed runs again with the same idempotency key (stepOf(options).key)', async () => {
    const w = await world();
    const keys: Array<[number, string]> = [];
    const go = async (attempt: number) => {
      const run = await w.attempt();
      return generateText({
        model: durableModel(run, mockModel()),
        tools: durableTools(run, {
          lookup: tool({
            inputSchema: jsonSchema<{ k: number }>({ type: 'object' }),
            execute: async ({ k }, options) => {
              keys.push([k, stepOf(options)?.key ?? 'none']);
              // The outside call happened; the process dies before the step commits.
              if (attempt === 1 && k === 2) await forever();
              return { k };
            },
          }),
        }),
        prompt: 'x',
        stopWhen: stepCountIs(10),
      });
    };
    void go(1);
    await until(() => keys.length === 2);
    await go(2);
    expect(keys.map(([k]) => k)).toEqual([1, 2, 2, 3, 4]);
    expect(keys[1]![1]).toMatch(/^as1_[A-Za-z0-9_-]{39}$/);
    expect(keys[2]![1]).toBe(keys[1]![1]);
    expect(new Set(keys.map(([, key]) => key)).size).toBe(4);
    await w.inst.close();
  });

  it('a tool that throws: its error is recorded, shown to the model, and thrown again on replay without running it', async () => {
    let runs = 0;
    const tools = (run: Parameters<typeof durableTools>[0]) =>
      durableTools(run, {
        charge: tool({
          inputSchema: jsonSchema<{ k: number }>({ type: 'object', properties: { k: { type: 'number' } } }),
          execute: async (): Promise<string> => {
            runs++;
            throw Object.assign(new Error('card declined'), { status: 402 });
          },
        }),
      });
    const model = () =>
      new MockLanguageModelV4({
        doGenerate: async ({ prompt }) => {
          const err = prompt
            .filter((m) => m.role === 'tool')
            .flatMap((m) => m.content)
            .find((p) => p.type === 'tool-result');
          if (err)
            return { ...reply([]), content: [{ type: 'text', text: JSON.stringify(err.output) }] } as never;
          return {
            ...reply([]),
            content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 'charge', input: '{"k":1}' }],
          } as never;
        },
      });
    const w = await world();
    const go = async () => {
      const run = await w.attempt();
      return generateText({
        model: durableModel(run, model()),
        tools: tools(run),
        prompt: 'pay',
        stopWhen: stepCountIs(5),
      });
    };
    const first = await go();
    const second = await go();
    expect(runs).toBe(1);
    expect(first.text).toContain('card declined');
    expect(second.text).toBe(first.text);
    const error = second.steps[0]!.content.find((c) => c.type === 'tool-error') as {
      error: Error & { status: number };
    };
    expect(error.error).toBeInstanceOf(Error);
    expect([error.error.message, error.error.status]).toEqual(['card declined', 402]);
    await w.inst.close();
  });

  it('a failed model call ends the attempt with ModelCallFailed, which the SDK does not retry; the next attempt makes that call again', async () => {
    const w = await world();
    let calls = 0;
    const flaky = new MockLanguageModelV4({
      doGenerate: async () => {
        calls++;
        if (calls === 1) {
          throw new APICallError({
            message: 'overloaded',
            url: 'http://model.invalid',
            requestBodyValues: {},
            statusCode: 529,
            isRetryable: true,
          });
        }
        return reply([]) as never;
      },
    });
    const run1 = await w.attempt();
    const err = await generateText({ model: durableModel(run1, flaky), prompt: 'hi', maxRetries: 2 }).catch(
      (e) => e,
    );
    expect(err).toBeInstanceOf(ModelCallFailed);
    expect((err as ModelCallFailed).cause).toBeInstanceOf(APICallError);
    // Not retried by the SDK inside the attempt: once more would take another place of the run.
    expect(calls).toBe(1);
    expect(await w.steps()).toEqual(['model 1 failed']);
    const run2 = await w.attempt();
    const ok = await generateText({ model: durableModel(run2, flaky), prompt: 'hi' });
    expect(calls).toBe(2);
    expect(ok.toolCalls.map((c) => c.toolCallId)).toEqual(['call-1']);
    expect(await w.steps()).toEqual(['model 1 failed', 'model 1 completed']);
    await w.inst.close();
  });

  it('attempts retries a failed model call inside its step, in the same place', async () => {
    const w = await world();
    let calls = 0;
    const flaky = new MockLanguageModelV4({
      doGenerate: async () => {
        if (++calls === 1) throw new Error('overloaded');
        return reply([]) as never;
      },
    });
    const run = await w.attempt();
    const r = await generateText({
      model: durableModel(run, flaky, { attempts: 2, backoffMs: 0 }),
      prompt: 'hi',
    });
    expect(r.toolCalls.map((c) => c.toolCallId)).toEqual(['call-1']);
    expect(calls).toBe(2);
    const [step] = await w.inst.work.steps(w.item.id);
    expect(step).toMatchObject({ name: 'model 1', status: 'completed', tries: 2 });
    await w.inst.close();
  });

  it('streamText: the recorded stream is replayed part for part', async () => {
    const w = await world();
    const calls: number[] = [];
    const ran: number[] = [];
    const go = async () => {
      const run = await w.attempt();
      return runAgent({
        model: durableModel(
          run,
          mockStreamingModel((k) => calls.push(k)),
        ),
        tools: durableTools(
          run,
          agentTools((k) => ran.push(k)),
        ),
        stream: true,
      });
    };
    const uncrashed = await runAgent({ model: mockStreamingModel(), tools: agentTools(), stream: true });
    const first = await go();
    const second = await go();
    expect(first).toBe(uncrashed);
    expect(second).toBe(first);
    expect(calls).toEqual([1, 2, 3, 4, 5]);
    expect(ran).toEqual([1, 2, 3, 4]);
    await w.inst.close();
  });

  it('durableMiddleware records the calls of a model wrapped with wrapLanguageModel the same way', async () => {
    const { wrapLanguageModel } = await import('ai');
    const w = await world();
    const calls: number[] = [];
    const go = async () => {
      const run = await w.attempt();
      return runAgent({
        model: wrapLanguageModel({
          model: mockModel((k) => calls.push(k)),
          middleware: durableMiddleware(run, { name: 'planner' }),
        }),
        tools: durableTools(run, agentTools()),
      });
    };
    const first = await go();
    expect(await go()).toBe(first);
    expect(calls).toEqual([1, 2, 3, 4, 5]);
    expect((await w.steps())[0]).toBe('planner 1 completed');
    await w.inst.close();
  });

  it('a tool result no record keeps fails the attempt (INVALID_INPUT at the tool, ModelCallFailed after it), recording nothing for it', async () => {
    const w = await world();
    const run = await w.attempt();
    const err = await generateText({
      model: durableModel(run, mockModel()),
      tools: durableTools(run, {
        lookup: tool({
          inputSchema: jsonSchema<{ k: number }>({ type: 'object' }),
          execute: async () => new Map([['a', 1]]),
        }),
      }),
      prompt: 'x',
      stopWhen: stepCountIs(5),
    }).catch((e) => e);
    expect(err).toBeInstanceOf(ModelCallFailed);
    expect((err as Error).message).toContain('a Map');
    expect(await w.steps()).toEqual(['model 1 completed']);
    await w.inst.close();
  });

  it('refuses what it cannot wrap with INVALID_INPUT saying what to pass', async () => {
    const w = await world();
    const run = await w.attempt();
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
    refused(() => durableModel(run, 'openai/gpt-5' as never), 'resolve the id "openai/gpt-5"');
    refused(() => durableModel({} as never, mockModel()), 'worker handler');
    refused(() => durableModel(run, mockModel(), { name: 'a\nb' }), 'control characters');
    refused(() => durableModel(run, mockModel(), { name: 'x'.repeat(151) }), 'longer than 150');
    refused(() => durableTools(run, [] as never), 'object of tools');
    refused(() => durableMiddleware(null as never), 'worker handler');
    await w.inst.close();
  });

  it('long or odd tool names and ids give step names that fit, the same on every attempt', async () => {
    const w = await world();
    const name = `t${'o'.repeat(150)}l`;
    const id = `id-${'9'.repeat(100)}\u0001`;
    const model = () =>
      new MockLanguageModelV4({
        doGenerate: async ({ prompt }) =>
          (prompt.some((m) => m.role === 'tool')
            ? { ...reply([]), content: [{ type: 'text', text: 'ok' }] }
            : {
                ...reply([]),
                content: [{ type: 'tool-call', toolCallId: id, toolName: name, input: '{}' }],
              }) as never,
      });
    let runs = 0;
    const go = async () => {
      const run = await w.attempt();
      return generateText({
        model: durableModel(run, model()),
        tools: durableTools(run, {
          [name]: tool({ inputSchema: jsonSchema({ type: 'object' }), execute: async () => ++runs }),
        }),
        prompt: 'x',
        stopWhen: stepCountIs(5),
      });
    };
    await go();
    await go();
    expect(runs).toBe(1);
    const steps = await w.steps();
    expect(steps[1]).toMatch(/^tool #[0-9a-f]{32} completed$/);
    await w.inst.close();
  });
});

describe('the record codec', () => {
  it('carries what JSON loses, and back', () => {
    const err = Object.assign(new Error('boom'), { code: 'E1', fn: () => 1 });
    const value = {
      date: new Date('2026-01-01T00:00:00.000Z'),
      bad: new Date(Number.NaN),
      bytes: new Uint8Array([1, 2, 3]),
      buf: Buffer.from('hi'),
      url: new URL('https://example.com/a?b=1'),
      nul: 'a\u0000b',
      lone: '\udc00',
      numbers: [Number.NaN, Number.POSITIVE_INFINITY, -0, 1.5, undefined],
      big: 12345678901234567890n,
      skipped: undefined,
      method() {},
      err,
      $as: 'mine',
      ['__proto__' as string]: 'kept as a key',
      nested: { '\u0000key': 1 },
    };
    Object.defineProperty(value, '__proto__', { value: 'own', enumerable: true });
    const record = toRecord(value);
    // What is stored is JSON the store's rule keeps.
    expect(JSON.parse(JSON.stringify(record))).toEqual(record);
    expect(JSON.stringify(record)).not.toContain('\\u0000');
    const back = fromRecord(record) as typeof value;
    expect(back.date).toEqual(value.date);
    expect(Number.isNaN(back.bad.getTime())).toBe(true);
    expect(back.bytes).toEqual(new Uint8Array([1, 2, 3]));
    expect(back.buf).toEqual(new Uint8Array(Buffer.from('hi')));
    expect(back.url.href).toBe('https://example.com/a?b=1');
    expect([back.nul, back.lone]).toEqual(['a\u0000b', '\udc00']);
    expect(Object.is(back.numbers[2], -0)).toBe(true);
    expect(back.numbers).toEqual([Number.NaN, Number.POSITIVE_INFINITY, -0, 1.5, undefined]);
    expect(back.big).toBe(12345678901234567890n);
    expect('skipped' in back || 'method' in back).toBe(false);
    expect(back.err).toBeInstanceOf(Error);
    expect([back.err.name, back.err.message, (back.err as typeof err).code]).toEqual(['Error', 'boom', 'E1']);
    expect(back.$as).toBe('mine');
    expect(Object.getOwnPropertyDescriptor(back, '__proto__')?.value).toBe('own');
    expect(Object.getPrototypeOf(back)).toBe(Object.prototype);
    expect(back.nested).toEqual({ '\u0000key': 1 });
  });

  it('refuses a Map, a Set, a typed array other than bytes, a symbol, with INVALID_INPUT naming where', () => {
    for (const [v, what, at] of [
      [{ a: new Map() }, 'a Map', '/a'],
      [[new Set()], 'a Set', '/0'],
      [{ f: new Float32Array(2) }, 'a Float32Array', '/f'],
      [Symbol('s'), 'a symbol', ''],
    ] as const) {
      let err: unknown;
      try {
        toRecord(v);
      } catch (e) {
        err = e;
      }
      expect(isAgentStateError(err, 'INVALID_INPUT')).toBe(true);
      expect((err as Error).message).toContain(what);
      if (at) expect((err as Error).message).toContain(` at ${at}`);
    }
  });
});
