// Typed errors with stable string codes; edges map them to exit codes, HTTP statuses and MCP errors.
import type { IntegrityProblem } from './core/types.js';

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
  | 'INTERNAL';

/** Base class of all agentstate errors. `code` is stable; `details` is JSON-safe extra data. */
export class AgentStateError extends Error {
  readonly code: ErrorCode;
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

/** A compare-and-swap write found the record at another version than the caller read. */
export class StateConflictError extends AgentStateError {
  constructor(
    message: string,
    details: { expected?: unknown; actual?: unknown } & Record<string, unknown> = {},
  ) {
    super('STATE_CONFLICT', message, details);
    this.name = 'StateConflictError';
  }
}

/** The caller's lease on a work item expired or was taken over by another worker. */
export class LeaseLostError extends AgentStateError {
  constructor(message: string, details: Record<string, unknown> = {}) {
    super('LEASE_LOST', message, details);
    this.name = 'LeaseLostError';
  }
}

export class NotFoundError extends AgentStateError {
  constructor(message: string, details: Record<string, unknown> = {}) {
    super('NOT_FOUND', message, details);
    this.name = 'NotFoundError';
  }
}

/** Bad input from the caller: malformed JSON, wrong types, unknown fields, oversize values, hostile names. */
export class InvalidInputError extends AgentStateError {
  constructor(message: string, details: Record<string, unknown> = {}) {
    super('INVALID_INPUT', message, details);
    this.name = 'InvalidInputError';
  }
}

/** A document broke its kind's schema or logical rules; `pointer` names the field, `rule` the rule. */
export class ValidationFailedError extends AgentStateError {
  constructor(message: string, details: { pointer?: string; rule?: string } & Record<string, unknown> = {}) {
    super('VALIDATION_FAILED', message, details);
    this.name = 'ValidationFailedError';
  }
}

/** A status change the state machine does not allow (e.g. resolving an item that is already done). */
export class InvalidTransitionError extends AgentStateError {
  constructor(message: string, details: { from?: string; to?: string } & Record<string, unknown> = {}) {
    super('INVALID_TRANSITION', message, details);
    this.name = 'InvalidTransitionError';
  }
}

export class PermissionDeniedError extends AgentStateError {
  constructor(message: string, details: Record<string, unknown> = {}) {
    super('PERMISSION_DENIED', message, details);
    this.name = 'PermissionDeniedError';
  }
}

export class ProvenanceRequiredError extends AgentStateError {
  constructor(message: string, details: Record<string, unknown> = {}) {
    super('PROVENANCE_REQUIRED', message, details);
    this.name = 'ProvenanceRequiredError';
  }
}

export class AmbiguityUnresolvedError extends AgentStateError {
  constructor(message: string, details: Record<string, unknown> = {}) {
    super('AMBIGUITY_UNRESOLVED', message, details);
    this.name = 'AmbiguityUnresolvedError';
  }
}

/** The database cannot be opened or reached (missing, corrupt, unreachable server). */
export class StorageUnavailableError extends AgentStateError {
  constructor(message: string, details: Record<string, unknown> = {}, options?: ErrorOptions) {
    super('STORAGE_UNAVAILABLE', message, details, options);
    this.name = 'StorageUnavailableError';
  }
}

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
export class LockTimeoutError extends AgentStateError {
  constructor(message: string, details: Record<string, unknown> = {}, options?: ErrorOptions) {
    super('LOCK_TIMEOUT', message, details, options);
    this.name = 'LockTimeoutError';
  }
}

/** Rows disagree with the event log, or the log with a head seen earlier: tampering, or a corrupt dump. */
export class IntegrityError extends AgentStateError {
  constructor(
    message: string,
    details: { problems: IntegrityProblem[]; problem_count: number } & Record<string, unknown>,
  ) {
    super('INTEGRITY_VIOLATION', message, details);
    this.name = 'IntegrityError';
  }
}

export class InternalError extends AgentStateError {
  constructor(message: string, details: Record<string, unknown> = {}, options?: ErrorOptions) {
    super('INTERNAL', message, details, options);
    this.name = 'InternalError';
  }
}

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

/** CLI exit code for each error code (DESIGN.md): 1 not found, 2 input, 3 conflict or tampering, 4 refused, 5 storage. */
export const EXIT_CODES: Record<ErrorCode, number> = {
  NOT_FOUND: 1,
  INVALID_INPUT: 2,
  VALIDATION_FAILED: 2,
  STATE_CONFLICT: 3,
  LEASE_LOST: 3,
  INVALID_TRANSITION: 3,
  PERMISSION_DENIED: 4,
  PROVENANCE_REQUIRED: 4,
  AMBIGUITY_UNRESOLVED: 4,
  STORAGE_UNAVAILABLE: 5,
  LOCK_TIMEOUT: 5,
  INTEGRITY_VIOLATION: 3,
  INTERNAL: 10,
};

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
