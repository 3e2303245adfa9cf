// The agent's model: the AI SDK's MockLanguageModelV3 (ai/test), scripted so every run is the same. It
// answers by how many times it has already answered in the conversation (the assistant messages in the
// prompt): first a call of tool A (lookUpOrder), then a call of tool B (refundOrder), then the final text.
// Each call appends `model <n>` to EFFECTS_FILE, so the test can count the model calls too.
//
// DurableAgent calls the model inside a step (doStreamStep), and passes it the model as a function: the
// function must cross the step boundary, so it is itself a 'use step' function (serialized by reference,
// run in the step's process), the pattern of @workflow/ai's own providers and of its mockSequenceModel.
import { appendFileSync } from 'node:fs';
import type { LanguageModelV3StreamPart } from '@ai-sdk/provider';
import { MockLanguageModelV3 } from 'ai/test';

/** The text the model ends with; the test expects it as the run's output. */
export const FINAL_TEXT = 'Order 42 was refunded: 19.99 EUR are on their way back to the card.';

type Prompt = { role: string }[];

function parts(answer: number): LanguageModelV3StreamPart[] {
  const head: LanguageModelV3StreamPart[] = [
    { type: 'stream-start', warnings: [] },
    { type: 'response-metadata', id: `response-${answer}`, modelId: 'scripted-mock', timestamp: new Date(0) },
  ];
  const usage = {
    inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 },
    outputTokens: { total: 5, text: 5, reasoning: 0 },
  };
  if (answer === 1 || answer === 2) {
    const [toolName, input] =
      answer === 1 ? ['lookUpOrder', { orderId: '42' }] : ['refundOrder', { orderId: '42', amount: 19.99 }];
    return [
      ...head,
      { type: 'tool-call', toolCallId: `call-${answer}`, toolName, input: JSON.stringify(input) },
      { type: 'finish', finishReason: { unified: 'tool-calls', raw: 'tool_calls' }, usage },
    ];
  }
  return [
    ...head,
    { type: 'text-start', id: 'text-1' },
    { type: 'text-delta', id: 'text-1', delta: FINAL_TEXT },
    { type: 'text-end', id: 'text-1' },
    { type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage },
  ];
}

/** Makes the scripted mock model (a plain function: the SWC plugin wants `new` outside the step body). */
export function makeScriptedModel(): MockLanguageModelV3 {
  return new MockLanguageModelV3({
    provider: 'agentstate-example',
    modelId: 'scripted-mock',
    doStream: async (options) => {
      const answer = (options.prompt as Prompt).filter((m) => m.role === 'assistant').length + 1;
      appendFileSync(process.env.EFFECTS_FILE as string, `model ${answer}\n`);
      const script = parts(answer);
      return {
        stream: new ReadableStream<LanguageModelV3StreamPart>({
          start(controller) {
            for (const part of script) controller.enqueue(part);
            controller.close();
          },
        }),
      };
    },
  });
}

/** The model DurableAgent takes: a step function that makes it (in the step that calls the model). */
export async function scriptedModel(): Promise<MockLanguageModelV3> {
  'use step';
  return makeScriptedModel();
}
