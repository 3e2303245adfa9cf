// The durable agent: DurableAgent (@workflow/ai) with two tools, each a step whose body records its side
// effect by appending a line to EFFECTS_FILE (`A <orderId>`, `B <orderId> <amount>`). The workflow's state
// is the run's event log in agentstate's World: after a crash, a new process replays it, and what already
// happened (model calls, tool A) is read back from the log, not done again.
import { appendFileSync } from 'node:fs';
import { DurableAgent } from '@workflow/ai/agent';
import type { UIMessageChunk } from 'ai';
import { getStepMetadata, getWritable } from 'workflow';
import { z } from 'zod';
import { scriptedModel } from './model';

function say(line: string): void {
  process.stdout.write(`${line}\n`);
}

/** Tool A: looks the order up (its side effect: the line `A 42`). */
async function lookUpOrder({ orderId }: { orderId: string }) {
  'use step';
  const { attempt } = getStepMetadata();
  say(`tool A start attempt=${attempt}`);
  appendFileSync(process.env.EFFECTS_FILE as string, `A ${orderId}\n`);
  say('tool A done');
  return { orderId, total: 19.99, currency: 'EUR', paid: true };
}

/**
 * Tool B: refunds the order (its side effect: the line `B 42 19.99`). With HANG_IN_TOOL_B=1 its first
 * attempt stops before the side effect and waits forever, printing `tool B hanging`: the test kills the
 * process there.
 */
async function refundOrder({ orderId, amount }: { orderId: string; amount: number }) {
  'use step';
  const { attempt } = getStepMetadata();
  say(`tool B start attempt=${attempt}`);
  if (process.env.HANG_IN_TOOL_B === '1') {
    say('tool B hanging');
    await new Promise(() => {});
  }
  appendFileSync(process.env.EFFECTS_FILE as string, `B ${orderId} ${amount}\n`);
  say('tool B done');
  return { orderId, refunded: amount };
}

/** The workflow: one agent turn on the user's question; its output is the agent's final text. */
export async function supportAgent(question: string) {
  'use workflow';
  const agent = new DurableAgent({
    model: scriptedModel,
    instructions: 'You are a support agent. Look the order up before refunding it.',
    tools: {
      lookUpOrder: {
        description: 'Look an order up by its id',
        inputSchema: z.object({ orderId: z.string() }),
        execute: lookUpOrder,
      },
      refundOrder: {
        description: 'Refund an order',
        inputSchema: z.object({ orderId: z.string(), amount: z.number() }),
        execute: refundOrder,
      },
    },
  });
  const result = await agent.stream({
    messages: [{ role: 'user', content: question }],
    writable: getWritable<UIMessageChunk>(),
    maxSteps: 5,
  });
  return {
    text: result.steps.at(-1)?.text ?? '',
    toolCalls: result.steps.flatMap((s) => s.toolCalls.map((c) => c.toolName)),
    steps: result.steps.length,
  };
}
