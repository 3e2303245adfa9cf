// The official LangGraph checkpointer contract (@langchain/langgraph-checkpoint-validation, all of it,
// plus its opt-in delta-channel tests) against AgentStateSaver on every backend.
import { deltaChannelHistoryTests, validate } from '@langchain/langgraph-checkpoint-validation';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { AgentStateSaver } from '../../src/adapters/langgraph/index.js';
import { backendsForThisFile } from '../helpers/backends.js';

// The suite calls Vitest's globals (its README assumes `globals: true`); hand them over for this file.
Object.assign(globalThis, { describe, it, expect, beforeAll, afterAll, beforeEach, afterEach });

for (const backend of await backendsForThisFile()) {
  const initializer = {
    checkpointerName: `AgentStateSaver (${backend.name})`,
    async createCheckpointer() {
      return new AgentStateSaver(await backend.open());
    },
    async destroyCheckpointer(saver: AgentStateSaver) {
      await saver.instance.close();
    },
  };
  validate(initializer);
  deltaChannelHistoryTests(initializer);
}
