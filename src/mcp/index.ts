// @agentstate/store/mcp: the MCP server of an instance, for embedding (the `agentstate mcp` command uses the
// same functions). Loading it loads the MCP SDK; the core library never does.
export { type CallOrigin, provenance } from './attribution.js';
export {
  DEFAULT_MAX_RESULT_CHARS,
  type FitRequest,
  type FittedResult,
  fitResult,
  MIN_MAX_RESULT_CHARS,
  parseBudget,
  resultChars,
} from './budget.js';
export {
  type HttpOptions,
  isLoopback,
  type McpEndpoint,
  mcpEndpoint,
  serveMcpHttp,
  serveMcpStdio,
} from './serve.js';
export {
  type AgentStateMcp,
  type AgentStateMcpOptions,
  createAgentStateMcp,
  documentUri,
  parseDocumentUri,
} from './server.js';
export { textOf } from './text.js';
export {
  DEFAULT_TOOLS,
  EDGE_OWNED,
  MAX_TOOLS,
  selectTools,
  TOOLSETS,
  type ToolDefinition,
  toolDefinition,
} from './tools.js';
