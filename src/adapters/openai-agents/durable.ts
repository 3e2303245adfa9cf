// An OpenAI Agents SDK run made durable inside a run of the store: the agent's model calls and its function
// tools' invocations are steps, so a later attempt of the item (after a crash, a lost lease, a retry) gets
// what they returned from the record and neither calls the model again for the turns done nor invokes a
// tool whose outcome was recorded. Loads nothing of the SDK until a replayed response needs its Usage class.
import type {
  Agent,
  AgentOutputType,
  FunctionTool,
  Model,
  ModelRequest,
  ModelResponse,
  StreamEvent,
  Tool,
} from '@openai/agents';
import { checkRecordName } from '../../core/runs/inputs.js';
import type { StepOptions } from '../../core/runs/types.js';
import { InvalidInputError } from '../../errors.js';
import { checkRun, type DurableRun, modelStep, toolStep, withStep } from '../durable-steps.js';

/** How a durable model names and retries its steps. */
export interface DurableAgentModelOptions extends StepOptions {
  /**
   * The steps' name: the n-th model call of an attempt is the step `<name> <n>` (`model 1`, `model 2`, …).
   * Give each model of one run a name of its own when several take turns. @default 'model'
   */
  name?: string;
}

/** The call ids of the function calls in a model's output, in order. */
function callIds(output: unknown): string[] {
  if (!Array.isArray(output)) return [];
  return output
    .filter((o) => o?.type === 'function_call' && typeof o.callId === 'string')
    .map((o) => o.callId as string);
}

/** The response as the SDK takes it: its usage a Usage again (the record keeps its fields). */
async function withUsage(response: ModelResponse): Promise<ModelResponse> {
  const { Usage } = await import('@openai/agents');
  return { ...response, usage: new Usage(response.usage as ConstructorParameters<typeof Usage>[0]) };
}

function options(op: string, o: DurableAgentModelOptions | undefined): [string, StepOptions] {
  const { name = 'model', ...step } = o ?? {};
  return [checkRecordName(op, name, 150), step];
}

/**
 * The Agents SDK model `model`, with each call a step of `run` (a worker handler's `ctx`, or a `Run`): the
 * n-th call of the attempt is the step `model <n>`, which calls the model once and records its response; a
 * later attempt of the item gets the recorded response without calling the model. A streamed call is read
 * whole and recorded before its events are handed on. A failed call fails the attempt (ModelCallFailed; the
 * model's own client retries inside the call still apply, `attempts` retries it inside the step).
 */
export function durableModel(run: DurableRun, model: Model, o?: DurableAgentModelOptions): Model {
  const r = checkRun('durableModel', run);
  if (typeof model !== 'object' || model === null || typeof model.getResponse !== 'function') {
    throw new InvalidInputError(
      `durableModel: model must be an Agents SDK Model object${typeof model === 'string' ? ` (a model name such as ${JSON.stringify(model)} is resolved by the runner's provider: pass durableModel(ctx, await provider.getModel(name)))` : ''}`,
      { field: 'model' },
    );
  }
  const [name, step] = options('durableModel', o);
  const wrapped: Model = {
    getResponse: async (request: ModelRequest) =>
      withUsage(
        await modelStep(
          r,
          name,
          () => model.getResponse(request),
          (res) => callIds(res.output),
          step,
        ),
      ),
    getStreamedResponse: (request: ModelRequest) => replay(r, name, step, model, request),
  };
  if (model.supportsPromptModelSelection !== undefined) {
    Object.defineProperty(wrapped, 'supportsPromptModelSelection', {
      value: model.supportsPromptModelSelection,
    });
  }
  if (typeof model.getRetryAdvice === 'function') wrapped.getRetryAdvice = model.getRetryAdvice.bind(model);
  return wrapped;
}

async function* replay(
  run: DurableRun,
  name: string,
  step: StepOptions,
  model: Model,
  request: ModelRequest,
): AsyncIterable<StreamEvent> {
  const events = await modelStep(
    run,
    name,
    async () => {
      const out: StreamEvent[] = [];
      for await (const e of model.getStreamedResponse(request)) out.push(e);
      return out;
    },
    (es) => callIds(es.flatMap((e) => (e.type === 'response_done' ? e.response.output : []))),
    step,
  );
  yield* events;
}

/**
 * `tools` with each function tool's invocation a step of `run` named `tool <name> <callId>`: it runs once
 * and its outcome is recorded — what it returned, or the error it threw — and a later attempt gets the record
 * without invoking it (the error thrown again). `stepOf(details)` in a tool's `execute(input, context,
 * details)` gives the step, whose `key` is the idempotency key for an outside call. Other tools (hosted, computer, shell) are left as they are.
 * Use it with `durableModel`, whose recorded calls give the function calls the same ids on every attempt.
 */
export function durableTools<T extends readonly Tool<never>[]>(run: DurableRun, tools: T): T {
  const r = checkRun('durableTools', run);
  if (!Array.isArray(tools)) {
    throw new InvalidInputError('durableTools: tools must be an array of tools, as an Agent takes', {
      field: 'tools',
    });
  }
  return (tools as readonly unknown[]).map((t) => {
    const f = t as FunctionTool;
    if (f?.type !== 'function' || typeof f.invoke !== 'function') return t;
    const invoke = f.invoke;
    // A copy of the tool (its prototype and every property kept) whose invoke is the step.
    const copy = Object.create(Object.getPrototypeOf(f), Object.getOwnPropertyDescriptors(f)) as FunctionTool;
    copy.invoke = (context, input, details) => {
      const id = details?.toolCall?.callId;
      if (typeof id !== 'string' || id === '') {
        throw new InvalidInputError(
          `durableTools: tool ${JSON.stringify(f.name)} was invoked without a call id`,
          {
            field: 'callId',
          },
        );
      }
      return toolStep(
        r,
        f.name,
        id,
        (s) => invoke.call(f, context, input, withStep(details, s)),
        details?.signal,
      );
    };
    return copy;
  }) as unknown as T;
}

/**
 * A clone of `agent` whose model (a Model object) and function tools make their calls as steps of `run`:
 * `run(durableAgent(ctx, agent), input)`. The agents it hands off to are not changed: wrap them too.
 */
export function durableAgent<TContext, TOutput extends AgentOutputType>(
  run: DurableRun,
  agent: Agent<TContext, TOutput>,
  o?: DurableAgentModelOptions,
): Agent<TContext, TOutput> {
  if (typeof agent !== 'object' || agent === null || typeof agent.clone !== 'function') {
    throw new InvalidInputError('durableAgent: agent must be an Agents SDK Agent', { field: 'agent' });
  }
  return agent.clone({
    model: durableModel(run, agent.model as Model, o),
    tools: durableTools(run, agent.tools),
  });
}
