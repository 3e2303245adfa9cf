// @agentstate/store/ai-sdk: an AI SDK agent loop (generateText, streamText) made durable inside a run. The
// model's calls and the tools' executions are steps of the run: a later attempt of the item (after a crash,
// a lost lease, a retry) gets what they returned from the record, and neither calls the model again for the
// turns already done nor runs a tool whose outcome was recorded. Loads nothing of the AI SDK: it wraps what
// the caller hands it.
import type { LanguageModelMiddleware, ToolSet } from 'ai';
import { checkRecordName } from '../../core/runs/inputs.js';
import type { StepOptions } from '../../core/runs/types.js';
import { InvalidInputError } from '../../errors.js';
import { checkRun, type DurableRun, modelStep, toolStep, withStep } from '../durable-steps.js';

export { type DurableRun, fromRecord, ModelCallFailed, stepOf, toRecord } from '../durable-steps.js';

/** What `durableModel` needs of a language model: the AI SDK's LanguageModelV2, V3 and V4 all have it. */
export interface LanguageModelLike {
  readonly specificationVersion: string;
  readonly provider: string;
  readonly modelId: string;
  readonly supportedUrls: unknown;
  // biome-ignore lint/suspicious/noExplicitAny: each specification version has call options of its own
  doGenerate(options: any): PromiseLike<unknown>;
  // biome-ignore lint/suspicious/noExplicitAny: as above
  doStream(options: any): PromiseLike<{ stream: ReadableStream<any> }>;
}

/** How a durable model names and retries its steps. */
export interface DurableModelOptions extends StepOptions {
  /**
   * The steps' name: the n-th model call of an attempt is the step `<name> <n>` (`model 1`, `model 2`, …).
   * Give each model of one run a name of its own when several take turns. @default 'model'
   */
  name?: string;
}

interface Part {
  type?: unknown;
  toolCallId?: unknown;
  providerExecuted?: unknown;
}

/** The ids of the tool calls the client executes, in the order the model asked for them. */
function toolCallIds(parts: unknown): string[] {
  if (!Array.isArray(parts)) return [];
  return (parts as Part[])
    .filter((p) => p?.type === 'tool-call' && typeof p.toolCallId === 'string' && p.providerExecuted !== true)
    .map((p) => p.toolCallId as string);
}

/** The request and response bodies are for telemetry and debugging: not recorded (they hold the whole prompt). */
function withoutBodies<T extends { request?: unknown; response?: unknown }>(r: T): T {
  const out = { ...r };
  if (r.request !== null && typeof r.request === 'object') {
    const { body: _body, ...request } = r.request as Record<string, unknown>;
    out.request = request;
  }
  if (r.response !== null && typeof r.response === 'object') {
    const { body: _body, ...response } = r.response as Record<string, unknown>;
    out.response = response;
  }
  return out;
}

function generateStep(
  run: DurableRun,
  name: string,
  options: StepOptions,
  call: () => PromiseLike<unknown>,
): Promise<unknown> {
  return modelStep(
    run,
    name,
    async () => withoutBodies((await call()) as Record<string, unknown>),
    (r) => toolCallIds((r as { content?: unknown }).content),
    options,
  );
}

/**
 * A stream call: the model's whole stream is read and recorded before it is handed on (so the first run of a
 * call streams once the model is done), and every later attempt replays the recorded parts.
 */
async function streamStep(
  run: DurableRun,
  name: string,
  options: StepOptions,
  call: () => PromiseLike<{ stream: ReadableStream<unknown> }>,
): Promise<{ stream: ReadableStream<unknown> }> {
  const recorded = (await modelStep(
    run,
    name,
    async () => {
      const { stream, ...rest } = await call();
      const parts: unknown[] = [];
      const reader = stream.getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        parts.push(value);
      }
      return { ...withoutBodies(rest), parts };
    },
    (r) => toolCallIds((r as { parts?: unknown }).parts),
    options,
  )) as { parts: unknown[] };
  const { parts, ...rest } = recorded;
  return {
    ...rest,
    stream: new ReadableStream({
      start(controller) {
        for (const p of parts) controller.enqueue(p);
        controller.close();
      },
    }),
  };
}

function modelOptions(op: string, options: DurableModelOptions | undefined): [string, StepOptions] {
  const { name = 'model', ...step } = options ?? {};
  return [checkRecordName(op, name, 150), step];
}

/**
 * The AI SDK model `model`, with each call a step of `run` (a worker handler's `ctx`, or a `Run`): the n-th
 * call of the attempt is the step `model <n>`, which runs the model once and records what it returned (its
 * Dates, bytes and undefined fields come back as they were; the request and response bodies are left out).
 * A later attempt of the item gets the recorded result without calling the model. Pass it to `generateText`
 * or `streamText` with `durableTools(run, tools)`. A failed call fails the attempt (ModelCallFailed, which the
 * AI SDK does not retry; `attempts` retries it inside the step). Streams are recorded whole before they are
 * handed on.
 * @example
 * const { text } = await generateText({ model: durableModel(ctx, openai('gpt-5')), tools: durableTools(ctx, tools), prompt });
 */
export function durableModel<M extends LanguageModelLike>(
  run: DurableRun,
  model: M,
  options?: DurableModelOptions,
): M {
  const r = checkRun('durableModel', run);
  if (typeof model !== 'object' || model === null || typeof model.doGenerate !== 'function') {
    throw new InvalidInputError(
      `durableModel: model must be a language model object${typeof model === 'string' ? ` (resolve the id ${JSON.stringify(model)} with its provider first: openai('gpt-5'), gateway('…'))` : ''}`,
      { field: 'model' },
    );
  }
  const [name, step] = modelOptions('durableModel', options);
  const wrapped = {
    specificationVersion: model.specificationVersion,
    provider: model.provider,
    modelId: model.modelId,
    get supportedUrls() {
      return model.supportedUrls;
    },
    doGenerate: (o: unknown) => generateStep(r, name, step, () => model.doGenerate(o)),
    doStream: (o: unknown) => streamStep(r, name, step, () => model.doStream(o)),
  };
  return wrapped as unknown as M;
}

/**
 * The same as middleware, for `wrapLanguageModel({ model, middleware: durableMiddleware(ctx) })` (with
 * other middleware: put it last, next to the model, so what it records is what the model said).
 */
export function durableMiddleware(run: DurableRun, options?: DurableModelOptions): LanguageModelMiddleware {
  const r = checkRun('durableMiddleware', run);
  const [name, step] = modelOptions('durableMiddleware', options);
  return {
    specificationVersion: 'v4',
    wrapGenerate: ({ doGenerate }) =>
      generateStep(r, name, step, doGenerate) as ReturnType<typeof doGenerate>,
    wrapStream: ({ doStream }) =>
      streamStep(
        r,
        name,
        step,
        doStream as () => PromiseLike<{ stream: ReadableStream<unknown> }>,
      ) as ReturnType<typeof doStream>,
  } as LanguageModelMiddleware;
}

/**
 * `tools` with each `execute` a step of `run` named `tool <name> <toolCallId>`: it runs once and its outcome
 * is recorded — what it returned, or the error it threw (which the AI SDK shows the model) — and a later
 * attempt gets the record without running it (the error thrown again). `stepOf(options)` in `execute` gives
 * the step, whose `key` is the idempotency key for an outside call. A streaming tool's preliminary results
 * are not recorded: its last value is. Tools without `execute` are left as they are. Use it with
 * `durableModel`, whose recorded calls give the tool calls the same ids on every attempt.
 */
export function durableTools<T extends ToolSet>(run: DurableRun, tools: T): T {
  const r = checkRun('durableTools', run);
  if (typeof tools !== 'object' || tools === null || Array.isArray(tools)) {
    throw new InvalidInputError(
      'durableTools: tools must be an object of tools by name, as generateText takes',
      {
        field: 'tools',
      },
    );
  }
  const out: Record<string, unknown> = {};
  for (const [name, tool] of Object.entries(tools)) {
    const execute = (tool as { execute?: unknown } | null)?.execute;
    if (typeof execute !== 'function') {
      out[name] = tool;
      continue;
    }
    // A copy of the tool (its prototype and every property kept) whose execute is the step.
    const copy = Object.create(Object.getPrototypeOf(tool), Object.getOwnPropertyDescriptors(tool));
    copy.execute = (input: unknown, o: { toolCallId?: unknown; abortSignal?: AbortSignal } | undefined) => {
      const id = o?.toolCallId;
      if (typeof id !== 'string' || id === '') {
        throw new InvalidInputError(
          `durableTools: tool ${JSON.stringify(name)} was called without a toolCallId`,
          {
            field: 'toolCallId',
          },
        );
      }
      return toolStep(
        r,
        name,
        id,
        async (s) => lastValue(await execute.call(tool, input, withStep(o, s))),
        o?.abortSignal,
      );
    };
    out[name] = copy;
  }
  return out as T;
}

/** A streaming tool's result (an async iterable) is its last value; any other result is itself. */
async function lastValue(result: unknown): Promise<unknown> {
  if (result === null || typeof result !== 'object' || !(Symbol.asyncIterator in result)) return result;
  let last: unknown;
  for await (const v of result as AsyncIterable<unknown>) last = v;
  return last;
}
