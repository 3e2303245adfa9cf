// JSON Schema of kind `openai-agents-session`: a session's control document (the items themselves are
// events of the session's stream).

/** The control document: the session id, the position cleared after, the positions popped since. */
export const sessionSchema = {
  type: 'object',
  required: ['session_id', 'cleared_after', 'popped'],
  properties: {
    session_id: { type: 'string' },
    cleared_after: { type: 'integer', minimum: 0 },
    popped: { type: 'array', items: { type: 'integer' } },
  },
};
