// What an operation of the service table is: the one description every edge (CLI, workflows, MCP tools,
// HTTP routes, OpenAPI) is generated from.
import type { Instance } from '../instance/instance.js';
import type { JsonSchema, ObjectSchema } from './json-schema.js';

/** The area an operation belongs to, for grouping in help, tool lists and routes. */
export type OperationGroup = 'work' | 'events' | 'documents' | 'files' | 'reports' | 'instance';

export interface Operation<I = Record<string, unknown>, O = unknown> {
  /** snake_case, unique: the MCP tool name, the HTTP route `/api/v1/<name>`, the table key. */
  name: string;
  group: OperationGroup;
  /** One line, for help output and tool lists (models read it: keep it short and exact). */
  description: string;
  /** JSON Schema of the input object (validated before `run`; unknown fields are refused). */
  input: ObjectSchema;
  /** JSON Schema of the result. */
  output: JsonSchema;
  /** Whether it changes the store or files (HTTP POST and MCP annotations follow it). */
  writes: boolean;
  /** A repeated identical call changes nothing more (MCP's idempotentHint). */
  idempotent?: boolean;
  /**
   * What the operation needs of an instance: `required` (default) an existing one; `create` opens or creates
   * it (init, import); `optional` runs without one when none is named (gates, resume); `none` never opens
   * one (validating a file). `run` gets null for an instance it did not need.
   */
  instance?: 'required' | 'create' | 'optional' | 'none';
  /**
   * Reads paths the caller names on the local filesystem (state files, dumps): offered by the CLI and the
   * library, never by a network edge (MCP over HTTP, the HTTP API), whose callers do not own this machine.
   */
  local?: boolean;
  /**
   * A stream, not one result: `run` returns an `EventWatch`-like object whose async iterable yields results
   * until `ctx.signal` aborts (tailing the log). Offered by the edges that stream — the CLI's `--follow`,
   * Server-Sent Events, MCP notifications — and by no edge that answers once (HTTP routes, tools, workflows).
   */
  streams?: boolean;
  /** Work done before the instance is opened (e.g. checking a dump), so a refusal creates nothing. */
  prepare?(input: I, ctx: Pick<RunContext, 'progress'>): Promise<unknown>;
  /** Runs on an open instance (null only for `optional` / `none`) with an input that passed `input`. */
  run(inst: Instance, input: I, ctx: RunContext): Promise<O>;
}

/** A running count of long work, and the step it is in (e.g. `checking the dump: events`). */
export type Progress = (done: number, phase?: string) => void;

/** What an edge hands an operation besides its input. */
export interface RunContext {
  /** What `prepare` returned. */
  prepared?: unknown;
  /**
   * Called with a running count during long work (verify, export, import), for edges that show progress;
   * `phase` names what is being counted when the work has more than one step.
   */
  progress?: Progress;
  /** Ends a streaming operation (and any long wait); the edge aborts it when its client goes away. */
  signal?: AbortSignal;
  /** How often a streaming operation looks for more when its backend cannot push, ms (the edge's setting). */
  pollMs?: number;
}

/** Identity helper that keeps an operation's input type for `run`. */
export function operation<I, O>(op: Operation<I, O>): Operation<I, O> {
  return op;
}
