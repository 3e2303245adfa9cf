// @agentstate/store/server: the HTTP API, event stream, MCP endpoint and dashboard of `agentstate serve`, for
// embedding (the command uses the same functions). Loading it loads Hono; the core library never does.
export { createServeApp, MAX_BODY_BYTES } from './app.js';
export { dirTokenFile, loadOrCreateToken, type ServeToken, TOKEN_FILE } from './auth.js';
export type { AppContext, Caller, ServeAppOptions } from './context.js';
export { InstanceRegistry, type ServeTarget } from './instances.js';
export { openApiDocument } from './openapi.js';
export { INSTANCE_PARAM, OPERATION_ROUTES, type OperationRoute, operationRoutes } from './routes.js';
export { type RunningServer, type ServeOptions, startServer } from './serve.js';
