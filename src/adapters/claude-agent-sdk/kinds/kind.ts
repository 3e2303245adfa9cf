// Kind `claude-agent-sdk-session`: the control document of a Claude Agent SDK session
// (AgentStateSessionStore), assembled from its schema (./schema.ts) and rules (./rules.ts); body: ./model.ts.
import { type KindDefinition, registerKind } from '../../../index.js';
import { check } from './rules.js';
import { sessionStoreSchema } from './schema.js';

/** The kind of a session's control document: deletions, subpaths, mtime and the SDK's summary. */
export const SESSION_STORE_KIND = 'claude-agent-sdk-session';

const sessionStoreKind: KindDefinition = {
  name: SESSION_STORE_KIND,
  description:
    'A Claude Agent SDK session (AgentStateSessionStore): deletions, subpaths, mtime, summary; entries are events.',
  emits: ['claude_session_deleted'],
  schema: sessionStoreSchema,
  check,
};

let registered = false;

/** Registers the kind (once per process); AgentStateSessionStore calls it when constructed. */
export function registerSessionStoreKind(): void {
  if (!registered) registerKind(sessionStoreKind);
  registered = true;
}
