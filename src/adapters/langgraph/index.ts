// @agentstate/store/langgraph: LangGraph's checkpointer and store on an agentstate instance.
export { LANGGRAPH_KINDS, RUNS_KIND, registerLangGraphKinds } from './kinds/kind.js';
export { AgentStateSaver, type AgentStateSaverOptions, ThreadConflictError } from './saver.js';
export { AgentStateStore, type AgentStateStoreOptions, storeItemId } from './store.js';
export {
  type MultitaskStrategy,
  type RunOnThreadOptions,
  ThreadBusyError,
} from './thread-runs.js';
