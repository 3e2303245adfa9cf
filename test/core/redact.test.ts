// Unit and property tests of redactUrl, the one redaction of storage URLs: no secret (user-info password,
// secret-named query parameters in any case or encoding, libpq key=value pairs, unparsable URLs) survives,
// and what is not secret is shown as written.
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { redactUrl as fromPostgresSubpath } from '../../src/backends/postgres/backend.js';
import { redactUrl } from '../../src/core/redact.js';
import { redactUrl as fromPackage } from '../../src/index.js';
import { runTsxAsync } from '../helpers/cli.js';

const REDACT = new URL('../../src/core/redact.ts', import.meta.url);

/**
 * Redacts five hostile inputs of a million characters (redact.ts's path in argv[1]) and prints each result,
 * as its length when it is long.
 */
const HOSTILE = `
const { redactUrl } = await import(process.argv[1]);
const n = 1_000_000;
const inputs = [
  'a'.repeat(n),
  'pass'.repeat(n / 4),
  'postgres://h/db?' + 'pass'.repeat(n / 4),
  'postgres://u:p@h:99999/' + 'pass='.repeat(n / 5),
  "host=x password='" + "\\\\'".repeat(n / 2),
];
const out = inputs.map((s) => redactUrl(s)).map((r) => (r.length > 100 ? r.length : r));
process.stdout.write(JSON.stringify(out));
`;

/** Every form in which `secret` could show up in output. */
function forms(secret: string): string[] {
  return [...new Set([secret, encodeURIComponent(secret), encodeURI(secret), secret.replace(/ /g, '+')])];
}

function expectHidden(url: string, secrets: string[]): void {
  const out = redactUrl(url);
  for (const s of secrets) {
    for (const f of forms(s)) expect(out, `${url} → ${out}`).not.toContain(f);
  }
}

describe('redactUrl', () => {
  it('is the one function: the package and the /postgres subpath export the same one', () => {
    expect(fromPackage).toBe(redactUrl);
    expect(fromPostgresSubpath).toBe(redactUrl);
  });

  it('masks secrets and shows everything else as written', () => {
    const cases: Array<[string, string]> = [
      ['postgres://me:s3cret@db:5432/x', 'postgres://me:***@db:5432/x'],
      ['postgres://me:p%40ss@db/x?sslmode=require', 'postgres://me:***@db/x?sslmode=require'],
      ['postgresql://db/x?password=topsecret', 'postgresql://db/x?password=***'],
      ['postgres://me@db/x', 'postgres://me@db/x'],
      ['postgres://db/x', 'postgres://db/x'],
      ['postgres://u:secret@127.0.0.1:1/x?password=secret2', 'postgres://u:***@127.0.0.1:1/x?password=***'],
      [
        'postgres://u:pw@h/db?schema=team_a&application_name=x&sslmode=verify-full',
        'postgres://u:***@h/db?schema=team_a&application_name=x&sslmode=verify-full',
      ],
      ['postgres:///db?host=/tmp&password=pw', 'postgres:///db?host=/tmp&password=***'],
      ['postgres://h/db?PassWord=a&SSLPASSWORD=b', 'postgres://h/db?PassWord=***&SSLPASSWORD=***'],
      ['postgres://h/db?pass%77ord=a&%70assword=b', 'postgres://h/db?pass%77ord=***&%70assword=***'],
      [
        'postgres://h/db?api_token=t&client_secret=c&sslkey=/k.pem&passfile=/p',
        'postgres://h/db?api_token=***&client_secret=***&sslkey=***&passfile=***',
      ],
      ['postgres://h/db?password', 'postgres://h/db?password=***'],
      ['postgres://h/db#password=frag', 'postgres://h/db#***'],
      ['mysql://u:secret@h/x?password=secret2', 'mysql://u:***@h/x?password=***'],
      ['host=db password=s3cret user=me', 'host=db password=*** user=me'],
      ["host=db password='a b c' user=me", 'host=db password=*** user=me'],
      // Unparsable: nothing before the last @, nothing of the query.
      ['postgres://u:sec ret@[bad/x?password=secret2', 'postgres://***@[bad/x?***'],
      ['postgres://u:pw@host:99999/db?PassWord=zz', 'postgres://***@host:99999/db?***'],
      ['postgres://u:p/w@host/db', 'postgres://***@host/db'],
      ['u:pw@host/db', '***@host/db'],
    ];
    for (const [url, shown] of cases) expect(redactUrl(url), url).toBe(shown);
  });

  it('no secret survives, whatever the shape of the URL', () => {
    const s = 'Zq9-secret-Xk2';
    const e = encodeURIComponent('p@ss/w?rd#&=: %x');
    const shapes: Array<[string, string[]]> = [
      [`postgres://u:${s}@h/db`, [s]],
      [`postgres://u:${e}@h/db`, [e, 'p@ss/w?rd#&=: %x']],
      [`postgres://u:${s}@h:5432/db?sslmode=require&password=${s}2`, [s]],
      [`postgres://h/db?password=${s}`, [s]],
      [`postgres://h/db?password=${s}&password=${s}b`, [s]],
      [`postgres://h/db?sslpassword=${s}`, [s]],
      [`postgres://h/db?Password=${s}`, [s]],
      [`postgres://h/db?PASSWORD=${s}`, [s]],
      [`postgres://h/db?pass%77ord=${s}`, [s]],
      [`postgres://h/db?%50%41%53%53%57%4F%52%44=${s}`, [s]],
      [`postgres://h/db?pass+word=${s}`, [s]],
      [`postgres://h/db?my_token=${s}`, [s]],
      [`postgres://h/db?x-secret=${s}`, [s]],
      [`postgres://h/db?access_key=${s}`, [s]],
      [`postgres://h/db?password=${encodeURIComponent(`${s} &=#`)}`, [s]],
      [`postgres://h/db?options=${encodeURIComponent(`-c password=${s}`)}`, [s]],
      [`postgres://h/db?x=1;password=${s}`, [s]],
      [`postgres://h/db#password=${s}`, [s]],
      [`postgres://u:${s}@h/db?password=${s}#${s}`, [s]],
      // Unparsable URLs of many kinds.
      [`postgres://u:${s}@[bad/x?password=${s}`, [s]],
      [`postgres://u:${s}@h:99999/db`, [s]],
      [`postgres://u:${s}@h:port/db`, [s]],
      [`postgres://u:${s}/x@h/db`, [s]],
      [`postgres://u:${s}?x@h/db`, [s]],
      [`postgres://u:${s}#x@h/db`, [s]],
      [`postgres://u:${s}@/db?host=/tmp`, [s]],
      [`postgres://u:${s}@h@i:99999/db`, [s]],
      [`postgres://[::1:${s}@h/db?password=${s}`, [s]],
      [`postgres://h:99999/db?password=${s}`, [s]],
      [`postgres://h:99999/db?a=b@c&password=${s}`, [s]],
      [`postgres:u:${s}@h/db`, [s]],
      [`u:${s}@h/db`, [s]],
      [`host=h password=${s}`, [s]],
      [`host=h password = '${s} more'`, [s, 'more']],
      [`host=h password='${s} unterminated`, [s, 'unterminated']],
      [`host=h sslpassword="${s}"`, [s]],
      [`mysql://u:${s}@h/db?password=${s}`, [s]],
      [`http://u:${s}@h/db?token=${s}`, [s]],
      [`  postgres://u:${s}@h/db  `, [s]],
    ];
    for (const [url, secrets] of shapes) expectHidden(url, secrets);
  });

  it('stays linear on long hostile input (no regex backtracking blow-up): a million characters are redacted at all', async ({
    onTestFinished,
  }) => {
    // Run in a child process, so a blow-up cannot block this runner: quadratic matching of these inputs takes
    // hours (a name pattern without its lookbehind retries from each of a million characters), linear well
    // under a second. The condition is that the child ends, with every input redacted, before the test's
    // timeout; no time is measured.
    const r = await runTsxAsync(HOSTILE, [fileURLToPath(REDACT)], (kill) => onTestFinished(kill));
    expect({ code: r.code, err: r.stderr }).toEqual({ code: 0, err: '' });
    // Names only (kept whole), and the secrets masked.
    expect(r.json).toEqual([
      1_000_000,
      1_000_000,
      1_000_020,
      'postgres://***@h:99999/pass=***',
      'host=x password=***',
    ]);
  });

  it('property: a generated secret in any position, name casing or encoding never survives', () => {
    const secret = fc
      .string({ unit: fc.constantFrom(..."abcXYZ019-_.~!$&'()*+,;=:@/?#[]% ".split('')), minLength: 6 })
      .map((x) => `Q7${x}`);
    const name = fc
      .tuple(
        fc.constantFrom('password', 'sslpassword', 'passfile', 'secret', 'token', 'apikey', 'sslkey'),
        fc.constantFrom('', 'my_', 'x-'),
        fc.boolean(),
        fc.boolean(),
      )
      .map(([n, prefix, upper, encode]) => {
        const word = prefix + (upper ? n.toUpperCase() : n);
        return encode ? [...word].map((c) => `%${c.charCodeAt(0).toString(16)}`).join('') : word;
      });
    const shape = fc.constantFrom('userinfo', 'query', 'both', 'badport', 'badhost', 'keyword', 'fragment');
    fc.assert(
      fc.property(secret, name, shape, (sec, param, kind) => {
        const enc = encodeURIComponent(sec);
        const url = {
          userinfo: `postgres://agent:${enc}@db.example:5432/agents?schema=a`,
          query: `postgres://db.example/agents?sslmode=require&${param}=${enc}&schema=a`,
          both: `postgresql://agent:${enc}@db/agents?${param}=${enc}`,
          badport: `postgres://agent:${enc}@db:70000/agents?${param}=${enc}`,
          badhost: `postgres://agent:${enc}@[db/agents?${param}=${enc}`,
          keyword: `host=db ${decodeURIComponent(param)}='${sec.replace(/['\\]/g, '\\$&')}' user=agent`,
          fragment: `postgres://db/agents#${enc}`,
        }[kind];
        const out = redactUrl(url);
        expect(out).not.toContain(sec);
        expect(out).not.toContain(enc);
      }),
      { numRuns: 500 },
    );
  });
});
