// `agentstate watch`: keeps a view file and the store in step both ways — edits to the file are
// imported (CAS), new versions in the store are exported. Polling is the truth; fs events only wake it.
import { watch as fsWatch } from 'node:fs';
import { dirname } from 'node:path';
import { AgentStateError } from '../errors.js';
import type { Instance } from '../instance/instance.js';
import { readViewFile, type ViewTarget, writeViewFile } from './files.js';
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
  // The file's text, null when it is missing. A file that cannot be read safely (a FIFO, oversize,
  // binary, invalid UTF-8) reads as NUL + the reason: never the text of a readable file (NUL is refused
  // in those), it still counts as a change, which import then refuses.
  const read = (): string | null => {
    try {
      return readViewFile(t.path, t.root);
    } catch (err) {
      if (err instanceof AgentStateError && err.code === 'NOT_FOUND') return null;
      if (err instanceof AgentStateError && err.code === 'INVALID_INPUT') return `\u0000${err.message}`;
      throw err;
    }
  };
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
          const readable = !text.startsWith('\u0000');
          if (readable) writeViewFile(t.root, kept, text);
          emit({
            action: e?.code === 'STATE_CONFLICT' ? 'conflict' : 'invalid',
            path: t.path,
            message: `${(err as Error).message}${readable ? `\n(your edit is kept in ${kept})` : ''}`,
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
