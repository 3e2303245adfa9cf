// A tail on a backend with the notify capability wakes on the append hint instead of waiting out its poll
// interval (issue 11: the capability is read, not dead): PostgreSQL's NOTIFY, SQLite's hint of a commit in
// this process (issue 41; another process's is tested in test/backends/sqlite.wake.test.ts).
import { describe, expect, it } from 'vitest';
import { backendsForThisFile } from '../helpers/backends.js';

const backends = await backendsForThisFile();

for (const b of backends) {
  describe(`tail on ${b.name}`, () => {
    it(
      b.name === 'postgres'
        ? 'an event appended by another handle arrives on the NOTIFY hint, long before the 10-minute poll'
        : 'an event appended by another handle arrives on the commit hint, long before the 10-minute poll',
      async () => {
        const key = `tail-${Math.random().toString(36).slice(2)}`;
        const reader = await b.open(key);
        const writer = await b.open(key);
        try {
          expect(reader.backend.capabilities.notify).toBe(true);
          // The tail's reads, watched: the first one (the log is empty) tells when it starts to wait.
          const events = reader.backend.events;
          const read = events.read.bind(events);
          let reads = 0;
          let caughtUp!: () => void;
          const waiting = new Promise<void>((resolve) => {
            caughtUp = resolve;
          });
          events.read = async (q) => {
            const rows = await read(q);
            reads += 1;
            if (rows.length === 0) caughtUp();
            return rows;
          };
          const ac = new AbortController();
          // The poll is ten times the test's timeout: an event that arrives at all came on the hint.
          const pollMs = 600_000;
          const got = (async () => {
            for await (const e of reader.events.tail({ pollMs, signal: ac.signal })) {
              ac.abort();
              return e;
            }
            return null;
          })();
          // The empty read done, one turn of the event loop puts the tail in its wait; then append elsewhere.
          await waiting;
          await new Promise((r) => setImmediate(r));
          await writer.events.append({ type: 'note', data: { n: 1 } });
          const e = await got;
          expect(e?.type).toBe('note');
          // One read found the log empty, the one the hint woke found the event.
          expect(reads).toBe(2);
        } finally {
          await reader.close();
          await writer.close();
        }
      },
    );
  });
}
