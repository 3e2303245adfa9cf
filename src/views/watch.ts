// `agentstate watch`: keeps a view file and the store in step both ways — edits to the file are
// imported (CAS) once the file has settled, new versions in the store are exported — and never writes over
// what a person saved that it could not import. Polling is the truth; fs events only wake it.
import { watch as fsWatch } from 'node:fs';
import { dirname } from 'node:path';
import { canonicalJson } from '../core/json.js';
import type { Clock } from '../core/time.js';
import { AgentStateError, ERROR_TABLE, InvalidInputError } from '../errors.js';
import type { Instance } from '../instance/instance.js';
import { parseView, readViewState, unreadableReason, type ViewTarget, writeViewFile } from './files.js';
import { exportView, type ImportOptions, importView } from './sync.js';

/** One thing `watchView` did or refused, as `onEvent` reports it. */
export interface WatchEvent {
  /**
   * `exported` / `imported`: a version went to the file / from it. `conflict` / `invalid`: an edit that
   * settled was refused (stale, or breaking the kind's rules); the file is left as written. `held`: the
   * store has a new version that is not exported because the file holds such an edit.
   */
  action: 'exported' | 'imported' | 'conflict' | 'invalid' | 'held';
  path: string;
  version?: number;
  message?: string;
}

/** How `watchView` polls and reports, and who its imports commit as (`ImportOptions`). */
export interface WatchOptions extends Omit<ImportOptions, 'text'> {
  /** Stops the watch. Without it, the watch runs until the process exits. */
  signal?: AbortSignal;
  /** Poll interval, ms. @default 500 */
  pollMs?: number;
  /**
   * How long a changed file must read the same before it is imported, ms: an editor or a shell (`>`)
   * truncates and then writes, so a file read mid-save is half written. Measured on `clock`.
   * @default pollMs
   */
  settleMs?: number;
  /** The clock `settleMs` is measured on. @default the instance's clock */
  clock?: Clock;
  /**
   * Waits between two polls (at most `ms`). The default sleeps, woken early by file-system events in the
   * file's folder and by `signal`; tests pass their own to step the loop one poll at a time.
   */
  pause?: (ms: number) => Promise<void>;
  /** Called with each export, import and refusal. @default none */
  onEvent?: (e: WatchEvent) => void;
}

/** A read of the file (readViewState: text, null when missing, NUL + reason when unreadable). */
type FileState = string | null;

/**
 * Whether `text` is an export of a version the store holds (of `version`, if given), unedited, so replacing
 * it loses nothing: its stamp names this document and a version whose body equals the file's.
 */
async function isUneditedExport(
  inst: Instance,
  t: ViewTarget,
  text: string,
  version?: number,
): Promise<boolean> {
  try {
    const { body, stamp } = parseView(t, text);
    if (!stamp || stamp.kind !== t.kind.name || stamp.id !== t.id) return false;
    if (version !== undefined && stamp.version !== version) return false;
    const stored = await inst.docs.get({ kind: t.kind.name, id: t.id, version: stamp.version });
    return canonicalJson(stored.body) === canonicalJson(body);
  } catch {
    // Unparsable, or a version the store does not have (any more): whatever it holds is the person's.
    return false;
  }
}

/**
 * Runs until `signal` aborts. A change to the file is imported once it has read the same for `settleMs`;
 * if it is refused, the file is left exactly as written (with a copy in `<file>.rejected`), and the store's
 * new versions are not exported over it until the person saves a version that imports, or deletes the file
 * (which brings the store's version back). A file that already holds an edit when watch starts is imported
 * the same way, never overwritten.
 */
export async function watchView(inst: Instance, t: ViewTarget, opts: WatchOptions = {}): Promise<void> {
  const emit = opts.onEvent ?? (() => {});
  const pollMs = opts.pollMs ?? 500;
  const settleMs = opts.settleMs ?? pollMs;
  const clock = opts.clock ?? inst.clock;
  const importOpts: ImportOptions = {
    ...(opts.actor === undefined ? {} : { actor: opts.actor }),
    ...(opts.actor_kind === undefined ? {} : { actor_kind: opts.actor_kind }),
    ...(opts.role === undefined ? {} : { role: opts.role }),
    ...(opts.expected_version === undefined ? {} : { expected_version: opts.expected_version }),
  };
  const read = (): FileState => readViewState(t);

  /** What the file held after the last export or import: replacing that loses nothing. undefined: unknown. */
  let synced: FileState | undefined;
  /** The store version the file shows (-1: none yet, so the first poll exports and reports). */
  let syncedVersion = -1;
  /** A change seen and the time it was first seen, waiting to settle. */
  let pending: { state: FileState; since: number } | null = null;
  /** An edit that settled and was refused: the file is kept as it is while it holds it. */
  let held: { state: FileState; version: number } | null = null;
  let started = false;

  /**
   * What the file holds after watch wrote (or left) version `version` there, given it held `before`: that,
   * or undefined when someone saved over it in between (their save is then a change to import).
   */
  const afterWrite = async (before: FileState, version: number): Promise<FileState | undefined> => {
    const now = read();
    if (now === before) return now;
    return now !== null && (await isUneditedExport(inst, t, now, version)) ? now : undefined;
  };

  const exported = async (doc: { version: number } | null, expected: FileState) => {
    if (!doc) return;
    const r = await exportView(inst, t, { ifFileIs: expected });
    // Saved again between the read and the write: the next poll sees the change.
    if (r.kept) return;
    if (r.written || syncedVersion === -1) emit({ action: 'exported', path: t.path, version: r.version });
    synced = await afterWrite(expected, r.version);
    syncedVersion = r.version;
  };

  const judge = async (state: FileState, doc: { version: number } | null) => {
    if (state === null) {
      // Deleted: the store's version comes back, if there is one.
      synced = null;
      syncedVersion = -1;
      held = null;
      await exported(doc, null);
      return;
    }
    try {
      const unreadable = unreadableReason(state);
      if (unreadable !== null) throw new InvalidInputError(unreadable, { path: t.path });
      const r = await importView(inst, t, { ...importOpts, text: state });
      emit({ action: 'imported', path: t.path, version: r.version });
      synced = await afterWrite(state, r.version);
      syncedVersion = r.version;
      held = null;
    } catch (err) {
      // The store or the lock failing is no verdict on the edit: watch stops (the file is left as it is).
      if (!(err instanceof AgentStateError) || ERROR_TABLE[err.code].retry || err.code === 'INTERNAL')
        throw err;
      // Read again before judging: saved again meanwhile, it is that save that counts.
      const now = read();
      if (now !== state) {
        pending = { state: now, since: clock() };
        return;
      }
      held = { state, version: doc?.version ?? 0 };
      const readable = unreadableReason(state) === null;
      const kept = `${t.path}.rejected`;
      if (readable) writeViewFile(t.root, kept, state);
      const conflict = err.code === 'STATE_CONFLICT';
      const copy = readable ? ` (a copy is in ${kept})` : '';
      emit({
        action: conflict ? 'conflict' : 'invalid',
        path: t.path,
        message: [
          err.message,
          `${t.path} is left as you wrote it${copy}: the store's versions are not exported over it. ${
            conflict
              ? "Delete it to get the store's version back, then redo your edit on it."
              : "Fix it and save to import it, or delete it to get the store's version back."
          }`,
        ].join('\n'),
      });
    }
  };

  const poll = async () => {
    const doc = await inst.docs.find(t.kind.name, t.id);
    const state = read();
    if (!started) {
      started = true;
      // A file that shows a version of the store may be replaced; one holding an edit is imported first.
      if (state === null || (doc && (await isUneditedExport(inst, t, state)))) synced = state;
    }
    if (state === synced) {
      pending = null;
      held = null;
      if (doc && doc.version !== syncedVersion) await exported(doc, state);
      return;
    }
    if (held && state === held.state) {
      pending = null;
      if (doc && doc.version !== held.version) {
        held.version = doc.version;
        emit({
          action: 'held',
          path: t.path,
          version: doc.version,
          message: `not exported: ${t.path} holds an edit that was not imported (fix it and save, or delete the file)`,
        });
      }
      return;
    }
    // The file changed: act once it has read the same for settleMs.
    const now = clock();
    if (pending === null || pending.state !== state) {
      pending = { state, since: now };
      if (settleMs > 0) return;
    }
    if (now - pending.since < settleMs) return;
    pending = null;
    await judge(state, doc);
  };

  let wake: (() => void) | null = null;
  const watcher =
    opts.pause === undefined
      ? (() => {
          try {
            return fsWatch(dirname(t.path), () => wake?.());
          } catch {
            return null;
          }
        })()
      : null;
  const pause =
    opts.pause ??
    ((ms: number) =>
      new Promise<void>((resolve) => {
        const timer = setTimeout(done, ms);
        wake = done;
        opts.signal?.addEventListener('abort', done, { once: true });
        function done() {
          clearTimeout(timer);
          wake = null;
          opts.signal?.removeEventListener('abort', done);
          resolve();
        }
      }));
  try {
    while (!opts.signal?.aborted) {
      await poll();
      if (opts.signal?.aborted) break;
      // While a change settles, look again when it would have settled.
      const settling = pending as { since: number } | null;
      await pause(settling ? Math.max(0, Math.min(pollMs, settleMs - (clock() - settling.since))) : pollMs);
    }
  } finally {
    watcher?.close();
  }
}
