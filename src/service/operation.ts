// What an operation of the service table is: the one description every edge (CLI, workflows, MCP tools,
// HTTP routes, OpenAPI) is generated from. Its shape is the core's (`ServiceOperation`, which kinds declare
// theirs with too); here it runs on an open `Instance`.
import type { ServiceOperation } from '../core/kind.js';
import type { Instance } from '../instance/instance.js';

export type { OperationGroup, Progress, RunContext } from '../core/kind.js';

/**
 * One operation of the service table, running on an open `Instance`: its name, description, group, input and
 * output JSON Schemas, whether it writes, what instance it needs, and `run`. Every edge (CLI, workflows, MCP,
 * HTTP, OpenAPI) is generated from these.
 */
export type Operation<I = Record<string, unknown>, O = unknown> = ServiceOperation<Instance, I, O>;

/** Identity helper that keeps an operation's input type for `run`. */
export function operation<I, O>(op: Operation<I, O>): Operation<I, O> {
  return op;
}
