// `agentstate watch`: keeps a view file and the store in step both ways — edits to the file are
// imported (CAS), new versions in the store are exported. Polling is the truth; fs events only wake it.
import { existsSync, watch as fsWatch, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { AgentStateError } from '../errors.js';
import { writeFileAtomic } from '../instance/files.js';
import type { Instance } from '../instance/instance.js';
import type { ViewTarget } from './files.js';
import { exportView, type ImportOptions, importView } from './sync.js';

export interface WatchEvent {
  action: 'exported' | 'imported' | 'conflict' | 'invalid';
  path: string;
  version?: number;
  message?: string;
}

export interface WatchOptions extends ImportOptions {
  signal?: AbortSignal;
  /** Poll interval, ms. @default 500 */
  pollMs?: number;
  onEvent?: (e: WatchEvent) => void;
}

/** Runs until `signal` aborts. */
export async function watchView(inst: Instance, t: ViewTarget, opts: WatchOptions = {}): Promise<void> {
  const emit = opts.onEvent ?? (() => {});
  const pollMs = opts.pollMs ?? 500;
  let lastText: string | null = null;
  let lastVersion = -1;
  let wake: (() => void) | null = null;
  const watcher = (() => {
    try {
      return fsWatch(dirname(t.path), () => wake?.());
    } catch {
      return null;
    }
  })();
  const read = () => (existsSync(t.path) ? readFileSync(t.path, 'utf8') : null);
  try {
    while (!opts.signal?.aborted) {
      const doc = await inst.docs.find(t.kind.name, t.id);
      const text = read();
      if (text !== null && lastText !== null && text !== lastText) {
        // The file changed since we last saw it: import it.
        try {
          const r = await importView(inst, t, opts);
          emit({ action: 'imported', path: t.path, version: r.version });
          lastVersion = r.version;
        } catch (err) {
          const e = err instanceof AgentStateError ? err : null;
          // The store wins the file back on the next poll; keep the refused edit beside it so nothing is lost.
          const kept = `${t.path}.rejected`;
          writeFileAtomic(kept, text);
          emit({
            action: e?.code === 'STATE_CONFLICT' ? 'conflict' : 'invalid',
            path: t.path,
            message: `${(err as Error).message}\n(your edit is kept in ${kept})`,
          });
          lastVersion = -2;
        }
        lastText = read();
      } else if (doc && (doc.version !== lastVersion || text === null)) {
        const r = await exportView(inst, t);
        if (r.written || lastVersion === -1) emit({ action: 'exported', path: t.path, version: r.version });
        lastVersion = r.version;
        lastText = read();
      } else if (lastText === null) {
        lastText = text;
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, pollMs);
        wake = done;
        opts.signal?.addEventListener('abort', done, { once: true });
        function done() {
          clearTimeout(timer);
          wake = null;
          opts.signal?.removeEventListener('abort', done);
          resolve();
        }
      });
    }
  } finally {
    watcher?.close();
  }
}
