// openInstance as a library user meets it (issue 23, part 5): its refusals name its own options (`name`,
// `dir`, `create`), never CLI flags it does not read, and a PostgreSQL instance makes no local folder until
// a file (dashboard, retro) is written there.
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isAgentStateError, openInstance, regenerateDashboard } from '../../src/index.js';
import { PG_URL, postgresForThisFile } from '../helpers/postgres.js';
import { tempDir } from '../helpers/tmp.js';

const root = tempDir('agentstate-open-');
const schema = await postgresForThisFile();
const CLI_WORDS = /--name|--dir|--host|--url|MF_|agentstate init/;

async function refusal(p: Promise<unknown>): Promise<{ code: string; message: string; details: object }> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(isAgentStateError(err), String(err)).toBe(true);
  return err as { code: string; message: string; details: object };
}

describe('openInstance speaks in its own options', () => {
  it('without a name or dir: INVALID_INPUT naming `name` and `dir`, not CLI flags', async () => {
    for (const options of [{}, { root }, { url: 'postgres://127.0.0.1:1/none' }]) {
      const err = await refusal(openInstance(options));
      expect(err.code).toBe('INVALID_INPUT');
      expect(err.message).toContain('`name`');
      expect(err.message).toContain('`dir`');
      expect(err.message).not.toMatch(CLI_WORDS);
      expect(err.details).toMatchObject({ field: 'name' });
    }
    expect(readdirSync(root)).toEqual([]);
  });

  it('create: false on a missing SQLite instance: NOT_FOUND naming `create`, nothing created', async () => {
    const dir = join(root, 'missing');
    const err = await refusal(openInstance({ dir, create: false }));
    expect(err.code).toBe('NOT_FOUND');
    expect(err.message).toContain(dir);
    expect(err.message).toContain('`create`');
    expect(err.message).not.toMatch(CLI_WORDS);
    expect(existsSync(dir)).toBe(false);
  });

  it.runIf(schema !== null)(
    'on PostgreSQL: create: false names `create`; opening creates no local folder until a file is written',
    async () => {
      const url = `${PG_URL}?schema=${schema}`;
      const home = join(root, 'pg-root');
      const missing = await refusal(
        openInstance({ root: home, host: 'h', name: 'nobody', url, create: false }),
      );
      expect(missing.code).toBe('NOT_FOUND');
      expect(missing.message).toContain('h/nobody');
      expect(missing.message).toContain('`create`');
      expect(missing.message).not.toMatch(CLI_WORDS);

      const inst = await openInstance({ root: home, host: 'h', name: 'planner', url });
      try {
        await inst.work.enqueue({ title: 'kept in PostgreSQL' });
        expect(existsSync(home)).toBe(false);
        // The first file written there makes the folder.
        const { path } = await regenerateDashboard(inst);
        expect(path).toBe(join(home, 'h', 'agents', 'planner', 'dashboard.md'));
        expect(existsSync(path)).toBe(true);
      } finally {
        await inst.close();
      }
    },
  );
});
