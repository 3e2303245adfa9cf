// @agentstate/store/claude-agent-sdk: the Claude Agent SDK's SessionStore on an agentstate instance.
export { SESSION_STORE_KIND } from './kinds/kind.js';
export {
  AgentStateSessionStore,
  type AgentStateSessionStoreOptions,
  type FoldSessionSummary,
  SESSION_ENTRY_EVENT,
  SESSION_LISTED_EVENT,
  type SessionKey,
  type SessionStoreEntry,
  type SessionSummaryEntry,
} from './session-store.js';
