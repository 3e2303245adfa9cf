// The check of kind `claude-agent-sdk-session`: a commit that deletes the session or one of its subpaths
// records it as an event in the same transaction, so the log says when each transcript was deleted.
import type { CommitEffects, JsonObject } from '../../../index.js';
import type { SessionControl } from './model.js';

/** Deleting the session records claude_session_deleted; deleting a subpath, the same with its subpath. */
export function check(nextBody: JsonObject, prevBody: JsonObject | null): CommitEffects {
  const next = nextBody as unknown as SessionControl;
  const prev = prevBody as unknown as SessionControl | null;
  const ids = { project_key: next.project_key, session_id: next.session_id };
  if (next.deleted_after !== (prev?.deleted_after ?? 0)) {
    return { events: [{ type: 'claude_session_deleted', data: { ...ids, after: next.deleted_after } }] };
  }
  const before = new Map((prev?.subpaths ?? []).map((s) => [s.name, s]));
  return {
    events: next.subpaths
      .filter((s) => !s.live && before.get(s.name)?.live === true)
      .map((s) => ({
        type: 'claude_session_deleted',
        data: { ...ids, subpath: s.name, after: s.deleted_after },
      })),
  };
}
