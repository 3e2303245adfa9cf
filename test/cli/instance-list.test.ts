// `agentstate instance list` (issue 11, point 4): one line per instance or --json, on an embedded root and
// on a PostgreSQL schema, "no instances in …" for an empty store, and nothing created by it.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openInstance } from '../../src/instance/instance.js';
import { listInstances } from '../../src/instance/list.js';
import { runCli } from '../helpers/cli.js';
import { adminQuery, PG_URL, postgresForThisFile } from '../helpers/postgres.js';
import { tempDir } from '../helpers/tmp.js';

const base = tempDir('agentstate-cli-list-');
const schema = await postgresForThisFile();
const pgIt = schema === null ? it.skip : it;

describe('agentstate instance list', () => {
  it('on an embedded root: one line per instance, --json the list; an empty root says so and stays absent', async () => {
    const root = join(base, 'root');
    const inst = await openInstance({ root, host: 'h', name: 'one.two-three' });
    await inst.events.append({ type: 'note' });
    await inst.close();
    await (await openInstance({ root, host: 'h-2', name: 'z' })).close();
    const text = runCli(['--root', root, 'instance', 'list']);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(
      /^h\/one\.two-three {2}1 event, last \d{4}-\d\d-\d\dT[\d:.]+Z\nh-2\/z {2}0 events\n$/,
    );
    const json = runCli(['--json', '--root', root, 'instance', 'list']);
    expect(json.json).toEqual(await listInstances({ root }));
    // The root also comes from AGENTSTATE_ROOT; --name and --host play no part.
    const empty = join(base, 'empty');
    const none = runCli(['--name', 'x', 'instance', 'list'], { AGENTSTATE_ROOT: empty });
    expect(none.code, none.stderr).toBe(0);
    expect(none.stdout).toBe(`no instances in ${empty}\n`);
    expect(runCli(['--json', 'instance', 'list'], { AGENTSTATE_ROOT: empty }).json).toEqual([]);
    expect(existsSync(empty)).toBe(false);
    // Another scheme is refused, as everywhere (exit 2).
    expect(runCli(['--url', 'mysql://x@h/db', 'instance', 'list']).code).toBe(2);
  });

  pgIt(
    'on PostgreSQL: the instances of the --url schema, the URL shown redacted when there are none',
    async () => {
      const url = `${PG_URL}?schema=${schema}`;
      const root = join(base, 'pg');
      const a = await openInstance({ root, host: 'laptop', name: 'planner.v2-beta', url });
      await a.work.enqueue({ title: 'x' });
      await a.close();
      await (await openInstance({ root, host: 'ci-runner.eu', name: 'a_worker', url })).close();
      const text = runCli(['--url', url, 'instance', 'list']);
      expect(text.code, text.stderr).toBe(0);
      expect(text.stdout.split('\n')).toEqual([
        'ci-runner.eu/a_worker  0 events',
        expect.stringMatching(/^laptop\/planner\.v2-beta {2}1 event, last \d{4}-/),
        '',
      ]);
      // AGENTSTATE_URL works as --url does.
      expect(runCli(['--json', 'instance', 'list'], { AGENTSTATE_URL: url }).json).toEqual(
        await listInstances({ url }),
      );
      const never = `${schema}_never`;
      const secretUrl = `${PG_URL.replace('postgres@', 'postgres:hunter2@')}?schema=${never}`;
      const none = runCli(['--url', secretUrl, 'instance', 'list']);
      expect(none.code, none.stderr).toBe(0);
      expect(none.stdout).toMatch(/^no instances in postgres:\/\/postgres:\*\*\*@/);
      expect(none.stdout).not.toContain('hunter2');
      expect(
        await adminQuery('SELECT 1 FROM information_schema.schemata WHERE schema_name = $1', [never]),
      ).toEqual([]);
    },
  );
});
