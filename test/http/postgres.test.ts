// Many agents, one server: with a PostgreSQL URL, `agentstate serve` serves every instance of the schema
// (the instance picker's list) on one shared pool, each request on the instance it names.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PG_URL, postgresForThisFile } from '../helpers/postgres.js';
import { startTestServer, type TestServer } from './helpers.js';

const schema = await postgresForThisFile();

describe.skipIf(schema === null)('serve on PostgreSQL (skipped: no PostgreSQL server answers)', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer(['alpha', 'beta', 'gamma'], { url: `${PG_URL}?schema=${schema}` });
  });
  afterAll(() => s?.close());

  it('lists every instance of the schema and works on each', async () => {
    const list = (await s.call('GET', '/api/v1/instances')).json;
    expect(list.map((i: { instance: string }) => i.instance)).toEqual(['h/alpha', 'h/beta', 'h/gamma']);
    for (const name of ['alpha', 'beta', 'gamma']) {
      const r = await s.call('POST', '/api/v1/enqueue', {
        body: { title: `for ${name}` },
        query: { instance: `h/${name}` },
      });
      expect(r.status).toBe(200);
    }
    for (const name of ['alpha', 'beta', 'gamma']) {
      const items = (await s.call('GET', '/api/v1/list_items', { query: { instance: `h/${name}` } })).json;
      expect(items.map((i: { title: string }) => i.title)).toEqual([`for ${name}`]);
    }
    expect((await s.call('GET', '/api/v1/count_items', { query: { instance: 'h/nobody' } })).status).toBe(
      404,
    );
  });

  it('the overview page of each instance renders', async () => {
    const res = await fetch(`${s.url}/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ name: 'ops', token: 'test-token-0123456789abcdef' }),
      redirect: 'manual',
    });
    const cookie = res.headers.get('set-cookie')!.split(';')[0]!;
    for (const name of ['alpha', 'beta']) {
      const page = await fetch(`${s.url}/?instance=h/${name}`, { headers: { cookie } });
      expect(page.status).toBe(200);
      const html = await page.text();
      expect(html).toContain(`Overview of h/${name}`);
      expect(html).toContain('<option value="h/gamma"');
    }
  });
});
