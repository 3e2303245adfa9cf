// @agentstate/store/openai-agents: the OpenAI Agents SDK's Session on an agentstate instance, and its runs made
// durable inside a run of the store (durableAgent, durableModel, durableTools).
export { type DurableRun, ModelCallFailed, stepOf } from '../durable-steps.js';
export { type DurableAgentModelOptions, durableAgent, durableModel, durableTools } from './durable.js';
export { SESSION_KIND } from './kinds/kind.js';
export { AgentStateSession, type AgentStateSessionOptions, SESSION_ITEM_EVENT } from './session.js';
