// @agentstate/store/openai-agents: the OpenAI Agents SDK's Session on an agentstate instance.
export {
  AgentStateSession,
  type AgentStateSessionOptions,
  SESSION_ITEM_EVENT,
  SESSION_KIND,
} from './session.js';
