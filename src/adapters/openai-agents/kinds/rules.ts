// The check of kind `openai-agents-session`: each commit of a session's control document records what it
// did, a clear or the items it popped, as events in the same transaction.
import type { CommitEffects, JsonObject } from '../../../index.js';
import type { SessionControl } from './model.js';

/** A clear records session_cleared; otherwise each newly popped position records session_item_popped. */
export function check(nextBody: JsonObject, prevBody: JsonObject | null): CommitEffects {
  const next = nextBody as unknown as SessionControl;
  const prev = prevBody as unknown as SessionControl | null;
  if (next.cleared_after !== (prev?.cleared_after ?? 0)) {
    return {
      events: [
        {
          type: 'session_cleared',
          data: { session_id: next.session_id ?? null, after: next.cleared_after ?? 0 },
        },
      ],
    };
  }
  const before = new Set(prev?.popped ?? []);
  return {
    events: next.popped
      .filter((p) => !before.has(p))
      .map((p) => ({
        type: 'session_item_popped',
        data: { session_id: next.session_id ?? null, position: p },
      })),
  };
}
