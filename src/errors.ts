// Typed errors with stable string codes; edges map them to exit codes, HTTP statuses and MCP errors.

/** Every stable error code agentstate can raise. */
export type ErrorCode =
  | 'STATE_CONFLICT'
  | 'LEASE_LOST'
  | 'NOT_FOUND'
  | 'VALIDATION_FAILED'
  | 'INVALID_TRANSITION'
  | 'PERMISSION_DENIED'
  | 'PROVENANCE_REQUIRED'
  | 'AMBIGUITY_UNRESOLVED'
  | 'INVALID_INPUT'
  | 'STORAGE_UNAVAILABLE'
  | 'LOCK_TIMEOUT'
  | 'INTEGRITY_VIOLATION'
  | 'STEP_MISMATCH'
  | 'UNAUTHENTICATED'
  | 'INTERNAL';

/** Base class of all agentstate errors. `code` is stable; `details` is JSON-safe extra data. */
export class AgentStateError extends Error {
  /** The stable code (`NOT_FOUND`, `STATE_CONFLICT`, …) edges map to exit codes and HTTP statuses. */
  readonly code: ErrorCode;
  /** JSON-safe data about the failure (e.g. `field`, `id`, `expected`, `actual`). */
  readonly details: Record<string, unknown>;

  constructor(
    code: ErrorCode,
    message: string,
    details: Record<string, unknown> = {},
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'AgentStateError';
    this.code = code;
    this.details = details;
  }

  /** The JSON shape used on stderr by workflows and `--json` output. */
  toJSON(): { code: ErrorCode; message: string } & Record<string, unknown> {
    return { code: this.code, message: this.message, ...this.details };
  }
}

/**
 * The base of a typed error of one code: its constructor takes the message, the details and the error
 * options, and its name is the subclass's (`NotFoundError`).
 */
function coded<D extends Record<string, unknown> = Record<string, unknown>>(code: ErrorCode) {
  return class extends AgentStateError {
    constructor(message: string, details: D = {} as D, options?: ErrorOptions) {
      super(code, message, details, options);
      this.name = new.target.name;
    }
  };
}

/** A compare-and-swap write found the record at another version than the caller read. */
export class StateConflictError extends coded<
  { expected?: unknown; actual?: unknown } & Record<string, unknown>
>('STATE_CONFLICT') {}

/**
 * The conflict of a write made against version `expected` of `kind/id` while it is at `actual`: the one
 * message every layer and backend gives it. `extra` goes into the details between the id and the versions.
 * @example throw versionConflict('task', 't1', 3, 2)  // "task/t1 is at version 3, not 2: read it again and retry"
 */
export function versionConflict(
  kind: string,
  id: string,
  actual: number,
  expected: number,
  extra: Record<string, unknown> = {},
): StateConflictError {
  return new StateConflictError(
    `${kind}/${id} is at version ${actual}, not ${expected}: read it again and retry`,
    {
      kind,
      id,
      ...extra,
      expected,
      actual,
    },
  );
}

/** The caller's lease on a work item expired or was taken over by another worker. */
export class LeaseLostError extends coded('LEASE_LOST') {}

/** No such work item, document, document version or file. */
export class NotFoundError extends coded('NOT_FOUND') {}

/** Bad input from the caller: malformed JSON, wrong types, unknown fields, oversize values, hostile names. */
export class InvalidInputError extends coded('INVALID_INPUT') {}

/** A document broke its kind's schema or logical rules; `pointer` names the field, `rule` the rule. */
export class ValidationFailedError extends coded<
  { pointer?: string; rule?: string } & Record<string, unknown>
>('VALIDATION_FAILED') {}

/**
 * A durable run's code no longer matches what the run recorded: the step (or sleep) called at a place of the
 * run is not the one recorded there by an earlier attempt. Replaying past it would return another call's
 * record, so the attempt fails instead; details name the place and both names.
 */
export class StepMismatchError extends coded<
  { id?: string; seq?: number; recorded?: unknown; called?: unknown } & Record<string, unknown>
>('STEP_MISMATCH') {}

/** A status change the state machine does not allow (e.g. resolving an item that is already done). */
export class InvalidTransitionError extends coded<{ from?: string; to?: string } & Record<string, unknown>>(
  'INVALID_TRANSITION',
) {}

/**
 * The caller may not do this: write a field its role may not, take a lock another holds, write as a
 * read-only principal, or (anyone but a human) decide what a document asked a human, ….
 */
export class PermissionDeniedError extends coded('PERMISSION_DENIED') {}

/** A write by a model (`actor_kind: 'model'`) without the provenance record it needs. */
export class ProvenanceRequiredError extends coded('PROVENANCE_REQUIRED') {}

/** A task still has open ambiguities: escalate them to a human rather than guess. */
export class AmbiguityUnresolvedError extends coded('AMBIGUITY_UNRESOLVED') {}

/** The database cannot be opened or reached (missing, corrupt, unreachable server). */
export class StorageUnavailableError extends coded('STORAGE_UNAVAILABLE') {}

/** A call on a store handle after its `close()`: STORAGE_UNAVAILABLE with `closed: true`. */
export function storeClosedError(): StorageUnavailableError {
  return new StorageUnavailableError(
    'this agentstate instance is closed: open it again (openInstance) to use it',
    {
      closed: true,
    },
  );
}

/** Another writer held the database lock longer than the busy timeout. */
export class LockTimeoutError extends coded('LOCK_TIMEOUT') {}

/**
 * Rows disagree with the event log, or the log with a head seen earlier: tampering, or a corrupt dump.
 * `problems` are what verify found (`IntegrityProblem`s of core/integrity/types.ts; errors.ts, the bottom of
 * the tree, names no type above it).
 */
export class IntegrityError extends AgentStateError {
  constructor(
    message: string,
    details: { problems: readonly object[]; problem_count: number } & Record<string, unknown>,
  ) {
    super('INTEGRITY_VIOLATION', message, details);
    this.name = 'IntegrityError';
  }
}

/** A network edge was called without its token, or with a wrong one (HTTP 401). */
export class UnauthenticatedError extends coded('UNAUTHENTICATED') {}

/** Anything unexpected: a bug, not the caller's mistake (with AGENTSTATE_DEBUG=1 the CLI prints the stack). */
export class InternalError extends coded('INTERNAL') {}

/**
 * Structural check that works across copies of the package (no `instanceof` across realms).
 * @example if (isAgentStateError(err, 'STATE_CONFLICT')) retry();
 */
export function isAgentStateError(err: unknown, code?: ErrorCode): err is AgentStateError {
  if (typeof err !== 'object' || err === null) return false;
  const c = (err as { code?: unknown }).code;
  if (typeof c !== 'string' || !(c in EXIT_CODES)) return false;
  return code === undefined || c === code;
}

/**
 * The one error table: what each stable code means at every edge. `exit` is the CLI and workflow exit code
 * (DESIGN.md), `http` the HTTP API's status, `retry` whether the same call may succeed later unchanged
 * (a held lock, an unreachable server) — a conflict needs a fresh read first, so it is not a retry. MCP
 * reports every code the same way: a tool result with `isError: true` carrying the code (`toolError`);
 * protocol errors stay protocol errors.
 */
export const ERROR_TABLE: Record<ErrorCode, { exit: number; http: number; retry: boolean }> = {
  NOT_FOUND: { exit: 1, http: 404, retry: false },
  INVALID_INPUT: { exit: 2, http: 400, retry: false },
  VALIDATION_FAILED: { exit: 2, http: 422, retry: false },
  STATE_CONFLICT: { exit: 3, http: 409, retry: false },
  LEASE_LOST: { exit: 3, http: 409, retry: false },
  INVALID_TRANSITION: { exit: 3, http: 409, retry: false },
  INTEGRITY_VIOLATION: { exit: 3, http: 409, retry: false },
  STEP_MISMATCH: { exit: 3, http: 409, retry: false },
  PERMISSION_DENIED: { exit: 4, http: 403, retry: false },
  PROVENANCE_REQUIRED: { exit: 4, http: 403, retry: false },
  AMBIGUITY_UNRESOLVED: { exit: 4, http: 409, retry: false },
  UNAUTHENTICATED: { exit: 4, http: 401, retry: false },
  STORAGE_UNAVAILABLE: { exit: 5, http: 503, retry: true },
  LOCK_TIMEOUT: { exit: 5, http: 503, retry: true },
  INTERNAL: { exit: 10, http: 500, retry: false },
};

/** CLI exit code for each error code (DESIGN.md): 1 not found, 2 input, 3 conflict, 4 refused, 5 storage. */
export const EXIT_CODES: Record<ErrorCode, number> = Object.fromEntries(
  Object.entries(ERROR_TABLE).map(([code, e]) => [code, e.exit]),
) as Record<ErrorCode, number>;

/** The JSON error body every edge sends: `{ error: { code, message, …details } }`. */
export function errorBody(err: unknown): { error: ReturnType<AgentStateError['toJSON']> } {
  return { error: toAgentStateError(err).toJSON() };
}

/**
 * An MCP tool result for a refusal: `isError: true` and one text the model reads — the code, the message and
 * the details as JSON on a second line (field, expected and actual versions…), so the model can correct
 * itself. No `structuredContent`: it would have to match the tool's `outputSchema`, which describes the
 * result, and the official 1.x client validates it on error results too and throws on a mismatch.
 * @example toolError(new NotFoundError('work item wi_1 not found', { id: 'wi_1' }))
 * // { isError: true, content: [{ type: 'text', text: 'NOT_FOUND: work item wi_1 not found\n{"id":"wi_1"}' }] }
 */
export function toolError(
  err: unknown,
  maxChars = Number.POSITIVE_INFINITY,
): {
  isError: true;
  content: Array<{ type: 'text'; text: string }>;
} {
  const e = toAgentStateError(err);
  const details = Object.keys(e.details).length > 0 ? JSON.stringify(e.details) : '';
  let text = `${e.code}: ${e.message}${details ? `\n${details}` : ''}`;
  // Within a result budget (the MCP edge's): the details go first, whole, then the message is shortened.
  if (text.length > maxChars)
    text = `${e.code}: ${e.message}${details ? `\n(details left out: ${details.length} characters)` : ''}`;
  if (text.length > maxChars) text = `${text.slice(0, Math.max(0, maxChars - 40))}… (message shortened)`;
  return { isError: true, content: [{ type: 'text', text }] };
}

/** Wraps anything thrown into an AgentStateError (unknown errors become INTERNAL). */
export function toAgentStateError(err: unknown): AgentStateError {
  if (err instanceof AgentStateError) return err;
  if (isAgentStateError(err)) {
    const e = err as AgentStateError;
    return new AgentStateError(e.code, e.message, e.details ?? {});
  }
  const message = err instanceof Error ? err.message : String(err);
  return new InternalError(`internal error: ${message}`, {}, { cause: err });
}
