// JSON Schema of kind `claude-agent-sdk-session`: a session's control document (the transcript entries
// themselves are events of one stream per transcript).

/** The control document: the session's ids, what is deleted, the subpaths, mtime and the SDK's summary. */
export const sessionStoreSchema = {
  type: 'object',
  required: ['project_key', 'session_id', 'main', 'mtime', 'deleted_after', 'subpaths', 'summary'],
  additionalProperties: false,
  properties: {
    project_key: { type: 'string' },
    session_id: { type: 'string' },
    main: { type: 'boolean' },
    mtime: { type: 'integer', minimum: 0 },
    deleted_after: { type: 'integer', minimum: 0 },
    subpaths: {
      type: 'array',
      items: {
        type: 'object',
        required: ['name', 'deleted_after', 'live'],
        additionalProperties: false,
        properties: {
          name: { type: 'string', minLength: 1 },
          deleted_after: { type: 'integer', minimum: 0 },
          live: { type: 'boolean' },
        },
      },
    },
    summary: { type: ['object', 'null'] },
  },
};
