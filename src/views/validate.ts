// `agentstate validate <file>`: parse and check a view file against its kind, touching no store.
import { prepareCommit } from '../core/documents/rules.js';
import { AgentStateError } from '../errors.js';
import { getKind, validateSchema } from '../kinds/registry.js';

const registry = { get: getKind, validateSchema };

import { checkViewName, readViewFile, type ViewTarget } from './files.js';

/** What `validateView` found: `ok`, or the first error (with its JSON pointer and rule when it has them). */
export interface ValidateResult {
  path: string;
  kind: string;
  id: string;
  ok: boolean;
  /** The version the file is stamped with, if any. */
  version: number | null;
  error?: { code: string; message: string; pointer?: string; rule?: string };
}

/** Checks the file on its own: format, schema and the kind's rules for a document seen for the first time. */
export async function validateView(
  t: ViewTarget,
  opts: { role?: string; actor?: string; now?: number } = {},
): Promise<ValidateResult> {
  const base = { path: t.path, kind: t.kind.name, id: t.id };
  let version: number | null = null;
  try {
    const { body, stamp } = t.kind.file.parse(readViewFile(t.path));
    version = stamp?.version ?? null;
    checkViewName(t, body);
    // The same checks as a commit (size, schema, rules), for a document this store has never seen.
    await prepareCommit(registry, t.kind, structuredClone(body), null, (version ?? 0) + 1, () => ({
      kind: t.kind.name,
      id: t.id,
      fromVersion: 0,
      toVersion: 1,
      actor: opts.actor ?? 'validate',
      actor_kind: 'human',
      role: opts.role ?? null,
      provenance: null,
      override: null,
      reason: null,
      now: opts.now ?? Date.now(),
      read: async () => null,
      // A file checked on its own has no store behind it: no document and no event exists.
      missingEvents: async (positions) => [...positions],
    }));
    return { ...base, ok: true, version };
  } catch (err) {
    if (!(err instanceof AgentStateError)) throw err;
    const d = err.details as { pointer?: string; rule?: string };
    return {
      ...base,
      ok: false,
      version,
      error: {
        code: err.code,
        message: err.message,
        ...(d.pointer ? { pointer: d.pointer } : {}),
        ...(d.rule ? { rule: d.rule } : {}),
      },
    };
  }
}
