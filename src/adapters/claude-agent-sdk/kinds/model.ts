// Body type of kind `claude-agent-sdk-session`: what its schema (./schema.ts) admits.

/** A subagent transcript (a subpath) of a session, as its control document keeps it. */
export interface SubpathControl {
  /** The subpath as the SDK gave it, e.g. `subagents/agent-1`. */
  name: string;
  /** Its entries at or before this event position are deleted (0: none). */
  deleted_after: number;
  /** False once deleted, until it is appended to again. */
  live: boolean;
}

/** A session's control document: what its entry events alone cannot say. */
export interface SessionControl {
  project_key: string;
  session_id: string;
  /** The main transcript has been written since the session was last deleted. */
  main: boolean;
  /** Storage time of the last append to the main transcript, integer epoch ms (0: none). */
  mtime: number;
  /** Entries of the main transcript and of every subpath at or before this event position are deleted. */
  deleted_after: number;
  /** The subpaths written, in the order they were first written. */
  subpaths: SubpathControl[];
  /** The SDK's SessionSummaryEntry as foldSessionSummary returned it, verbatim; null without one. */
  summary: Record<string, unknown> | null;
}
