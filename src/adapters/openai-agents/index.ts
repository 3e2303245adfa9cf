// @agentstate/store/openai-agents: the OpenAI Agents SDK's Session on an agentstate instance.
export { SESSION_KIND } from './kinds/kind.js';
export { AgentStateSession, type AgentStateSessionOptions, SESSION_ITEM_EVENT } from './session.js';
