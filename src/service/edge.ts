// The one way an edge runs an operation for a caller: access → attribution → trace context → validate → run.
// HTTP routes, the dashboard, MCP tools, the host hooks and the metrics all call `callOperation`; what stays
// theirs is parsing their transport and printing the result. The CLI and the library run as the machine's
// user, who owns the store: no principal, no writer, and their input's actor fields stand as given.
import { checkAccess, type Principal } from '../auth/access.js';
import { attribute, type Writer } from '../auth/attribution.js';
import { withRemoteParent } from '../core/tracing.js';
import type { Operation, RunContext } from './operation.js';
import { execute, type InstanceSource } from './run.js';

/** Who calls through an edge, and what the edge knows of the call beyond its input. */
export interface EdgeCall {
  /**
   * The principal a network edge authenticated, checked against the principal × operation matrix (a
   * read-only principal's write, a non-admin's admin operation: PERMISSION_DENIED). Absent: the machine's user.
   */
  principal?: Principal | undefined;
  /** Whose the writes are (auth/attribution.ts). Absent or null: the input's own actor fields stand. */
  writer?: Writer | null | undefined;
  /** The caller's W3C traceparent: the operation's span becomes a child of the caller's. */
  traceparent?: string | undefined;
  /**
   * What the edge fits to its own limits once the input is attributed, before it is checked (MCP: caps a page
   * at what one result can show). Called only for an object input.
   */
  fit?: (op: Operation, input: Record<string, unknown>) => void;
}

/**
 * Runs operation `name` for a caller: the access check, the writer's attribution, the caller's trace context,
 * then the one check of the input and the run. Anything refused throws a typed error before anything has run.
 * `inst` may be a function that opens the instance: it is called once the call is let in, attributed and
 * its input checked.
 * `name` is an operation's name in the table, or the operation itself.
 * @example await callOperation(inst, 'claim', { kind: 'triage' }, { principal, writer: principalWriter(principal) })
 */
export async function callOperation(
  inst: InstanceSource,
  name: string | Operation<never, unknown>,
  raw: unknown,
  call: EdgeCall = {},
  ctx: Omit<RunContext, 'prepared'> = {},
): Promise<unknown> {
  // By name through the table (loaded at the first such call), or the operation itself: an edge that runs a
  // few known operations in a short process (a host hook) loads only their groups.
  const op = (typeof name === 'string' ? (await import('./table.js')).getOperation(name) : name) as Operation;
  if (call.principal) checkAccess(call.principal, op);
  let input = raw;
  // Anything but a plain object is left for the operation's check to refuse.
  if (input !== null && typeof input === 'object' && !Array.isArray(input)) {
    const obj = input as Record<string, unknown>;
    // A copy: the edge's fit never changes the caller's object.
    const attributed = call.writer
      ? attribute(op.name, op.input.properties, obj, call.writer)
      : call.fit
        ? { ...obj }
        : obj;
    call.fit?.(op, attributed);
    input = attributed;
  }
  return withRemoteParent(call.traceparent, () => execute(op as Operation<never, unknown>, inst, input, ctx));
}
