// The ESM entry of @agentstate/store/langgraph (package.json `exports`, "import"): loads the adapter, and when
// LangGraph, an optional peer dependency, is not installed, says which packages to install instead of a bare
// ERR_MODULE_NOT_FOUND from deep inside. A static re-export would fail while linking, before any code here
// ran, hence the dynamic import (and top-level await; `require()` gets the CommonJS entry in dist/cjs/).
import { missingPeerError } from '../peers.js';
import type * as Adapter from './index.js';

let adapter: typeof Adapter;
try {
  adapter = await import('./index.js');
} catch (err) {
  throw missingPeerError('langgraph', err) ?? err;
}

// Every runtime export of index.ts (test/package/consumer.test.ts checks the two lists agree).
export const {
  AgentStateSaver,
  AgentStateStore,
  LANGGRAPH_KINDS,
  RUNS_KIND,
  registerLangGraphKinds,
  storeItemId,
  ThreadBusyError,
  ThreadConflictError,
} = adapter;
