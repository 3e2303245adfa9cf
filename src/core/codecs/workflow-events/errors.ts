// The errors a Workflow SDK World throws. The SDK recognises them with `X.is(err)`, a check of `err.name`
// only (the runtime crosses `vm` realms, so it never uses instanceof), so each class here sets exactly the
// name, and carries the fields, of its namesake in @workflow/errors — without depending on that package.

/** Options of a {@link WorkflowWorldError}: what the SDK reads off a World's failure. */
export interface WorkflowWorldErrorOptions {
  /** An HTTP-like status. The runtime reads 400 as "the request was invalid; retrying will not help". */
  status?: number;
  /** A machine-readable code (the SDK's transport codes, e.g. `TIMEOUT`). */
  code?: string;
  /** Seconds after which the operation may succeed (a 425 or 429). */
  retryAfter?: number;
  /** The underlying error. */
  cause?: unknown;
}

/** The base of every Workflow SDK error (`name` `WorkflowError`). */
export class WorkflowError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'WorkflowError';
  }
}

/** A World operation failed: the catch-all of a storage backend, with an optional HTTP-like `status`. */
export class WorkflowWorldError extends WorkflowError {
  /** The HTTP-like status, when there is one (400 for an invalid request). */
  readonly status: number | undefined;
  /** A machine-readable code, when there is one. */
  readonly code: string | undefined;
  /** Seconds after which a retry may succeed, when known. */
  readonly retryAfter: number | undefined;

  constructor(message: string, options?: WorkflowWorldErrorOptions) {
    super(message, { cause: options?.cause });
    this.name = 'WorkflowWorldError';
    this.status = options?.status;
    this.code = options?.code;
    this.retryAfter = options?.retryAfter;
  }
}

/**
 * The request conflicts with the entity's state: it exists already, is terminal, or was already disposed or
 * completed. The runtime treats it as "someone else did this first" and carries on.
 */
export class EntityConflictError extends WorkflowWorldError {
  constructor(message: string) {
    super(message);
    this.name = 'EntityConflictError';
  }
}

/** The run is over (terminal): the runtime stops working on it without retrying. */
export class RunExpiredError extends WorkflowWorldError {
  constructor(message: string) {
    super(message);
    this.name = 'RunExpiredError';
  }
}

/** Too early: a step's `retryAfter` has not come yet. `retryAfter` is the wait in whole seconds. */
export class TooEarlyError extends WorkflowWorldError {
  constructor(message: string, options?: { retryAfter?: number }) {
    super(message, { retryAfter: options?.retryAfter });
    this.name = 'TooEarlyError';
  }
}

/** No run has this id. */
export class WorkflowRunNotFoundError extends WorkflowError {
  /** The id looked for. */
  readonly runId: string;

  constructor(runId: string) {
    super(`Workflow run "${runId}" not found`);
    this.name = 'WorkflowRunNotFoundError';
    this.runId = runId;
  }
}

/** No live hook has this id (or token): never created, disposed, or released when its run ended. */
export class HookNotFoundError extends WorkflowError {
  /** The hook id or token looked for (the SDK names the field `token` for both). */
  readonly token: string;

  constructor(token: string) {
    super('Hook not found');
    this.name = 'HookNotFoundError';
    this.token = token;
  }
}

/** The run was made by a newer SDK than this World speaks (its spec version is above the World's). */
export class RunNotSupportedError extends WorkflowError {
  /** The run's spec version. */
  readonly runSpecVersion: number;
  /** The highest spec version this World speaks. */
  readonly worldSpecVersion: number;

  constructor(runSpecVersion: number, worldSpecVersion: number) {
    super(`The run has spec version ${runSpecVersion}; this World speaks at most ${worldSpecVersion}`);
    this.name = 'RunNotSupportedError';
    this.runSpecVersion = runSpecVersion;
    this.worldSpecVersion = worldSpecVersion;
  }
}
