// Body type of kind `openai-agents-session`: what its schema (./schema.ts) admits.

/** A session's control document: which item events were popped, and where the session was last cleared. */
export interface SessionControl {
  session_id: string;
  /** Items at or before this event position are cleared. */
  cleared_after: number;
  /** The positions of the item events popped since. */
  popped: number[];
}
