// Kind `openai-agents-session`: what was popped from or cleared in an OpenAI Agents session
// (AgentStateSession), assembled from its schema (./schema.ts) and rules (./rules.ts); body type: ./model.ts.
import { type KindDefinition, registerKind } from '../../../index.js';
import { check } from './rules.js';
import { sessionSchema } from './schema.js';

/** The kind of a session's control document: which items were popped, where it was last cleared. */
export const SESSION_KIND = 'openai-agents-session';

const sessionKind: KindDefinition = {
  name: SESSION_KIND,
  description:
    'What was popped from or cleared in an OpenAI Agents session (AgentStateSession); items are events.',
  emits: ['session_cleared', 'session_item_popped'],
  schema: sessionSchema,
  check,
};

let registered = false;

/** Registers the session kind (once per process); AgentStateSession calls it when constructed. */
export function registerSessionKind(): void {
  if (!registered) registerKind(sessionKind);
  registered = true;
}
