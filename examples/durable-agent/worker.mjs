// A worker whose handler is an AI SDK agent loop made durable: each model call and each tool execution is a
// step of the item's run. The model is the AI SDK's mock (offline, deterministic): it asks for the forecast
// of each city in turn, then writes the report. With CRASH=1 the process dies during the third model call.
// Usage: node worker.mjs <dir>
import { createWorker, openInstance } from '@agentstate/store';
import { durableModel, durableTools } from '@agentstate/store/ai-sdk';
import { generateText, jsonSchema, stepCountIs, tool } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';

const [dir] = process.argv.slice(2);
const CITIES = ['Lisbon', 'Oslo', 'Rome', 'Tunis'];
const usage = { inputTokens: { total: 10 }, outputTokens: { total: 5 } };

// What the model says depends on its prompt: the forecasts it has, the next city to ask about, the report.
const model = new MockLanguageModelV4({
  doGenerate: async ({ prompt }) => {
    const forecasts = prompt
      .flatMap((m) => (m.role === 'tool' ? m.content : []))
      .map((part) => part.output.value);
    const call = forecasts.length + 1;
    console.log(`  model call ${call}`);
    if (call === 3 && process.env.CRASH === '1') {
      console.log('  -- the process dies here --');
      process.kill(process.pid, 'SIGKILL');
    }
    const city = CITIES[forecasts.length];
    if (city) {
      const input = JSON.stringify({ city });
      return {
        content: [{ type: 'tool-call', toolCallId: `call-${call}`, toolName: 'forecast', input }],
        finishReason: { unified: 'tool-calls', raw: undefined },
        usage,
        warnings: [],
      };
    }
    const text = forecasts.map((f) => `${f.city} ${f.high}°C`).join(', ');
    return {
      content: [{ type: 'text', text }],
      finishReason: { unified: 'stop', raw: 'stop' },
      usage,
      warnings: [],
    };
  },
});

const tools = {
  forecast: tool({
    description: "Tomorrow's forecast for a city",
    inputSchema: jsonSchema({ type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }),
    // An outside call: on a restart, a forecast already recorded is not fetched again.
    execute: async ({ city }) => {
      console.log(`  tool forecast(${city})`);
      return { city, high: 10 + city.length * 2 };
    },
  }),
};

const inst = await openInstance({ dir, worker: `worker-${process.pid}` });
const worker = createWorker({
  instance: inst,
  leaseMs: 2000, // a dead worker's item is claimable again 2 s after its last heartbeat
  pollIntervalMs: 100,
  handlers: {
    report: async (_item, ctx) => {
      const { text } = await generateText({
        model: durableModel(ctx, model),
        tools: durableTools(ctx, tools),
        prompt: `Write tomorrow's weather report for ${CITIES.join(', ')}.`,
        stopWhen: stepCountIs(10),
      });
      return text;
    },
  },
});
worker.on('resolved', (item) => {
  console.log(`  resolved: ${item.status}`);
  void worker.stop();
});
await worker.start();
await inst.close();
