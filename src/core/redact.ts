// The one redaction of storage URLs and connection strings: every place that shows a URL (messages, error
// details, `storage`, --json output) passes it through `redactUrl`, so a secret never reaches the screen.

/** The mask that replaces a secret. */
const MASK = '***';

/**
 * Names of parameters whose value is a secret (or points at one): libpq's `password` and `sslpassword`,
 * `passfile`, `sslkey`, and anything named like a password, secret, token, key or credential. Matched
 * case-insensitively on the decoded name.
 */
const SECRET_NAME = /pass|pwd|secret|token|key|credential/i;

/**
 * `name=value` in a libpq keyword/value string or inside a value: the value is a quoted string (to its
 * closing quote, or to the end when unterminated) or runs to the next separator. A name starts only where
 * no name character precedes it, so matching stays linear in the length of the text.
 */
const PAIR = /(?<![\w%.+-])([\w%.+-]+)(\s*=\s*)('(?:[^'\\]|\\.)*(?:'|$)|"(?:[^"\\]|\\.)*(?:"|$)|[^\s&;#]*)/g;

/** `text` with the value of every secret-named `name=value` pair masked. */
function maskPairs(text: string): string {
  return text.replace(PAIR, (all, name: string, eq: string) =>
    SECRET_NAME.test(name) ? `${name}${eq}${MASK}` : all,
  );
}

const SCHEME = /^\s*([a-z][a-z0-9+.-]*:)\/\//i;

/**
 * A URL or connection string with every secret replaced by `***`, safe for messages, logs and output: the
 * password of the user info; the value of every query parameter named like a secret (`password`,
 * `sslpassword`, `…token…`, `…secret…`, `…key…`; names compared decoded and case-insensitively), and secret
 * `name=value` pairs hidden inside other values; the fragment. A URL that does not parse keeps only its
 * scheme and what follows its last `@` up to the query, which is replaced whole. A string without a scheme
 * is read as libpq `key=value` pairs (secret values masked); user info before an `@` is masked too.
 * @example redactUrl('postgres://me:s3cret@db/x?sslpassword=k') // 'postgres://me:***@db/x?sslpassword=***'
 */
export function redactUrl(url: string): string {
  const scheme = SCHEME.exec(url);
  if (scheme === null) return redactKeywords(url);
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return redactUnparsed(url, scheme[0].length);
  }
  if (u.host === '' && url.includes('@')) return redactUnparsed(url, scheme[0].length);
  if (u.password !== '') u.password = MASK;
  if (u.search !== '') u.search = u.search.slice(1).split('&').map(redactParam).join('&');
  if (u.hash !== '') u.hash = MASK;
  return u.toString();
}

/** One raw `name=value` of a query: the value masked when the decoded name looks secret, else kept as written. */
function redactParam(raw: string): string {
  const eq = raw.indexOf('=');
  const rawName = eq === -1 ? raw : raw.slice(0, eq);
  // Decoded as the driver will decode it (percent escapes, `+`), leniently: a malformed escape stays as is.
  const [name = '', value = ''] = [...new URLSearchParams(raw)][0] ?? [];
  if (SECRET_NAME.test(name) || SECRET_NAME.test(rawName)) return `${rawName}=${MASK}`;
  const masked = maskPairs(value);
  return masked === value ? raw : `${rawName}=${encodeURIComponent(masked)}`;
}

/** A URL the parser refused: nothing before its last `@` and nothing of its query or fragment is shown. */
function redactUnparsed(url: string, afterScheme: number): string {
  const head = url.slice(0, afterScheme);
  let rest = url.slice(afterScheme);
  const at = rest.lastIndexOf('@');
  if (at !== -1) rest = `${MASK}@${rest.slice(at + 1)}`;
  const cut = rest.search(/[?#]/);
  if (cut !== -1) rest = `${rest.slice(0, cut)}${rest[cut]}${MASK}`;
  return head + maskPairs(rest);
}

/** A libpq keyword/value string (`host=db password=x`), or anything else that is not a URL. */
function redactKeywords(text: string): string {
  const masked = maskPairs(text);
  const at = masked.lastIndexOf('@');
  return at === -1 ? masked : `${MASK}${masked.slice(at)}`;
}
