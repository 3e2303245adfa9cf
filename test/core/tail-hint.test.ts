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
          const ac = new AbortController();
          // The poll is longer than the test may take: only the hint can deliver in time.
          const pollMs = 600_000;
          const got = (async () => {
            for await (const e of reader.events.tail({ pollMs, signal: ac.signal })) {
              ac.abort();
              return e;
            }
            return null;
          })();
          // Let the tail reach its wait (an empty log), then append from elsewhere.
          await new Promise((r) => setTimeout(r, 300));
          const t0 = Date.now();
          await writer.events.append({ type: 'note', data: { n: 1 } });
          const e = await got;
          expect(e?.type).toBe('note');
          expect(Date.now() - t0).toBeLessThan(30_000);
        } finally {
          await reader.close();
          await writer.close();
        }
      },
    );
  });
}
