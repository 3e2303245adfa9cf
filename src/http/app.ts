// The `agentstate serve` application (Hono): the JSON API generated from the operation table, its OpenAPI
// document, the live event stream, the MCP endpoint and the dashboard, behind one token and one set of
// Host/Origin/CSRF checks. Transport (Node's HTTP server, shutdown) is in serve.ts.
import { createRequire } from 'node:module';
import { type Context, Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { getCookie, setCookie } from 'hono/cookie';
import { OWNER, type Principal } from '../auth/access.js';
import {
  AgentStateError,
  errorBody,
  InvalidInputError,
  NotFoundError,
  PermissionDeniedError,
  toAgentStateError,
  UnauthenticatedError,
} from '../errors.js';
import { bearerOf, hostAllowed, MAX_MCP_BYTES, originAllowed, sameSecret } from '../net/guards.js';
import { callOperation } from '../service/edge.js';
import { csrfValid, isActorName, SESSION_COOKIE, SESSION_MS, Sessions } from './auth.js';
import {
  type AppContext,
  type AppEnv,
  edgeCallOf,
  errorResponse,
  instanceOf,
  type ServeAppOptions,
} from './context.js';
import { mountDashboard } from './dashboard/routes.js';
import { openApiDocument } from './openapi.js';
import { checkPageSize, inputFromQuery, nextPageLink, operationRoutes } from './routes.js';
import { eventStream } from './sse.js';

const VERSION = (createRequire(import.meta.url)('../../package.json') as { version: string }).version;

/** Largest JSON body a write may send (the store's own limits are smaller; this caps reading). */
export const MAX_BODY_BYTES = 8 * 1024 * 1024;
/** Largest body of a sign-in. */
export const MAX_LOGIN_BYTES = 16 * 1024;
/** Largest body of a dashboard form (a bulk retry of many ids). */
export const MAX_FORM_BYTES = 256 * 1024;
/** Sign-in attempts one address may make per minute (the others are 429 until the minute is over). */
export const LOGIN_ATTEMPTS_PER_MINUTE = 10;

/** The body limit of a request to `path`, in bytes. */
export function bodyLimitOf(path: string): number {
  if (path.startsWith('/api/')) return MAX_BODY_BYTES;
  if (path === '/mcp') return MAX_MCP_BYTES;
  if (path === '/login') return MAX_LOGIN_BYTES;
  return MAX_FORM_BYTES;
}

const SAFE = new Set(['GET', 'HEAD', 'OPTIONS']);
/** The pages' Content-Security-Policy: only what this server serves. */
export const PAGE_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";
const PUBLIC = new Set(['/login', '/assets/app.js', '/assets/app.css', '/healthz']);

async function jsonBody(c: Context): Promise<unknown> {
  const type = (c.req.header('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/json') {
    throw new InvalidInputError('a write takes a JSON body: send content-type application/json', {
      field: 'content-type',
    });
  }
  // Bounded by the body-limit middleware before it gets here.
  const buf = await c.req.arrayBuffer();
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(buf);
  } catch {
    throw new InvalidInputError('the body is not UTF-8', { field: 'body' });
  }
  if (text.trim() === '') return {};
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new InvalidInputError(`the body is not JSON: ${(err as Error).message}`, { field: 'body' });
  }
}

/** Builds the application. */
export function createServeApp(options: ServeAppOptions): { app: Hono<AppEnv>; close(): Promise<void> } {
  const ac = new AbortController();
  options.signal?.addEventListener('abort', () => ac.abort(), { once: true });
  const ctx: AppContext = {
    registry: options.registry,
    token: options.token,
    principals: options.principals ?? null,
    secureCookies: options.secureCookies ?? 'never',
    sessions: options.sessions ?? new Sessions(),
    bind: options.bind,
    signal: ac.signal,
    pollMs: options.pollMs ?? 100,
    mcpMaxResultChars: options.mcpMaxResultChars,
  };
  const { token } = ctx;
  const app = new Hono<AppEnv>();
  const closers: Array<() => Promise<void>> = [];

  app.onError((err, c) => {
    const e = err instanceof AgentStateError ? err : toAgentStateError(err);
    return errorResponse(c, e);
  });
  app.notFound((c) => errorResponse(c, new NotFoundError(`no route ${c.req.method} ${c.req.path}`)));

  // DNS rebinding: a page on another name that resolves to this address is refused before anything else.
  app.use('*', async (c, next) => {
    if (!hostAllowed(c.req.header('host'), ctx.bind)) {
      return errorResponse(c, new PermissionDeniedError('this Host is not served here', { field: 'host' }));
    }
    const started = performance.now();
    await next();
    // The server's own time (the dashboard's budget is stated in it); streams report only their start.
    c.header('server-timing', `app;dur=${(performance.now() - started).toFixed(1)}`);
    c.header('x-content-type-options', 'nosniff');
    // same-origin, not no-referrer: under no-referrer browsers send `Origin: null` on form posts.
    c.header('referrer-policy', 'same-origin');
    c.header('x-frame-options', 'DENY');
    // Every page (the dashboard's, the sign-in form, error pages): no external requests, no inline script.
    if ((c.res.headers.get('content-type') ?? '').startsWith('text/html')) {
      c.res.headers.set('content-security-policy', PAGE_CSP);
    }
  });

  // Every body is bounded before it is read: a declared length over the route's limit is refused unread, and
  // a chunked body is cut off as soon as it passes it (413, nothing buffered beyond the limit).
  app.use('*', async (c, next) => {
    if (SAFE.has(c.req.method)) return next();
    const max = bodyLimitOf(c.req.path);
    return bodyLimit({
      maxSize: max,
      onError: (cc) =>
        cc.json(
          errorBody(
            new InvalidInputError(`the body is larger than ${max} bytes, the limit of ${c.req.path}`, {
              field: 'body',
              limit: max,
            }),
          ),
          413,
          { connection: 'close' },
        ),
    })(c, next);
  });

  // Sign-in is the one write anyone may try: a few attempts a minute per address.
  const attempts = new Map<string, { minute: number; n: number }>();
  app.use('/login', async (c, next) => {
    if (c.req.method !== 'POST') return next();
    const addr = remoteAddress(c);
    const minute = Math.floor(Date.now() / 60_000);
    const a = attempts.get(addr);
    const n = a && a.minute === minute ? a.n + 1 : 1;
    if (attempts.size > 10_000) attempts.clear();
    attempts.set(addr, { minute, n });
    if (n > LOGIN_ATTEMPTS_PER_MINUTE) {
      c.header('retry-after', String(60 - (Math.floor(Date.now() / 1000) % 60)));
      return c.html(loginPage('/', 'Too many sign-in attempts from this address: wait a minute.'), 429);
    }
    return next();
  });

  /** The owner's token, or the principal a named token belongs to; null for any other token. */
  const principalOf = (bearer: string): { principal: Principal; id: string | null } | null => {
    if (sameSecret(bearer, token)) return { principal: OWNER, id: null };
    const p = ctx.principals?.authenticate(bearer);
    return p ? { principal: p.principal, id: p.id } : null;
  };

  // Authentication: a bearer token (the owner's or a principal's), or the dashboard's session cookie; then
  // CSRF for cookie writes.
  app.use('*', async (c, next) => {
    const path = c.req.path;
    if (PUBLIC.has(path)) return next();
    const bearer = bearerOf(c.req.header('authorization'));
    if (bearer !== undefined) {
      const who = principalOf(bearer);
      if (who === null) return errorResponse(c, new UnauthenticatedError('wrong bearer token'));
      c.set('caller', { via: 'bearer', principal: who.principal });
      return next();
    }
    const session = ctx.sessions.get(getCookie(c, SESSION_COOKIE));
    // A session of a principal revoked since it signed in ends with it.
    const live =
      session !== null &&
      (session.principalId === null || ctx.principals?.active(session.principalId) === true);
    if (!live || path === '/mcp') {
      // Machines (the API, MCP, a Prometheus scraper) get 401; a browser's page request the sign-in page.
      const wantsHtml =
        !path.startsWith('/api/') && path !== '/mcp' && path !== '/metrics' && c.req.method === 'GET';
      if (wantsHtml) {
        const u = new URL(c.req.url);
        return c.redirect(`/login?next=${encodeURIComponent(u.pathname + u.search)}`, 303);
      }
      return errorResponse(
        c,
        new UnauthenticatedError('sign in: send Authorization: Bearer <token> (printed by agentstate serve)'),
      );
    }
    if (!SAFE.has(c.req.method)) {
      // A cross-site page can make the browser send the cookie, never read the CSRF token or fake Origin.
      if (!originAllowed(c.req.header('origin'), c.req.header('host'))) {
        return errorResponse(c, new PermissionDeniedError('cross-origin write refused', { field: 'origin' }));
      }
      let given = c.req.header('x-csrf-token');
      if (given === undefined && path.startsWith('/api/') === false) {
        const type = c.req.header('content-type') ?? '';
        if (type.startsWith('application/x-www-form-urlencoded') || type.startsWith('multipart/form-data')) {
          const form = await c.req.parseBody({ all: true });
          given = typeof form._csrf === 'string' ? form._csrf : undefined;
        }
      }
      if (!csrfValid(session, given)) {
        return errorResponse(c, new PermissionDeniedError('missing or wrong CSRF token', { field: 'csrf' }));
      }
    }
    c.set('caller', { via: 'session', principal: session.principal, session });
    return next();
  });

  app.get('/healthz', (c) => c.json({ ok: true }));

  // Sign-in: a person's token once (the owner's, with the name their writes are recorded under, or a human
  // or admin principal's, whose name it is). Agents do not sign in to the dashboard.
  app.post('/login', async (c) => {
    if (!originAllowed(c.req.header('origin'), c.req.header('host'))) {
      return errorResponse(c, new PermissionDeniedError('cross-origin sign-in refused', { field: 'origin' }));
    }
    const form = await c.req.parseBody();
    const given = typeof form.token === 'string' ? form.token.trim() : '';
    const name = typeof form.name === 'string' ? form.name.trim() : '';
    const next = typeof form.next === 'string' && /^\/(?!\/)[^\s\\]*$/.test(form.next) ? form.next : '/';
    const who = given === '' ? null : principalOf(given);
    if (who === null) return c.html(loginPage(next, 'That token is not one of this server’s.'), 401);
    if (who.principal.role === 'agent') {
      return c.html(
        loginPage(next, 'That token is an agent’s: people sign in with a human or admin token.'),
        403,
      );
    }
    let principal: Principal;
    if (who.principal.role === 'owner') {
      if (!isActorName(name)) return c.html(loginPage(next, 'Give your name (1–100 characters).'), 400);
      // The owner is admin and human at once; the session records the name they gave.
      principal = { name, role: 'admin', read_only: false };
    } else principal = who.principal;
    const secure =
      ctx.secureCookies === 'always' ||
      (ctx.secureCookies === 'forwarded' &&
        c.req.header('x-forwarded-proto')?.split(',')[0]?.trim() === 'https');
    setCookie(c, SESSION_COOKIE, ctx.sessions.create(principal, who.id), {
      httpOnly: true,
      sameSite: 'Strict',
      path: '/',
      maxAge: Math.floor(SESSION_MS / 1000),
      ...(secure ? { secure: true } : {}),
    });
    return c.redirect(next, 303);
  });
  app.get('/login', (c) => {
    const next = c.req.query('next');
    return c.html(loginPage(next && /^\/(?!\/)[^\s\\]*$/.test(next) ? next : '/'));
  });
  app.post('/logout', (c) => {
    // Ends the session on the server: the old cookie (and its CSRF token) write nothing more.
    ctx.sessions.end(getCookie(c, SESSION_COOKIE));
    setCookie(c, SESSION_COOKIE, '', { httpOnly: true, sameSite: 'Strict', path: '/', maxAge: 0 });
    return c.redirect('/login', 303);
  });
  app.get('/api/v1/session', (c) => {
    const caller = c.get('caller');
    return c.json(
      caller.via === 'session'
        ? {
            via: 'session',
            actor: caller.principal.name,
            role: caller.principal.role,
            csrf: caller.session.csrf,
          }
        : { via: 'bearer', principal: caller.principal.name, role: caller.principal.role },
    );
  });

  // Prometheus: every served instance, for any signed-in principal (a read of counts; no item is named).
  app.get('/metrics', async (c) => {
    const { servedMetrics } = await import('./metrics.js');
    const m = await servedMetrics(ctx.registry);
    return c.body(m.text, 200, { 'content-type': m.contentType });
  });

  // The table as it is now: the operations of every kind registered before the server was made.
  const routes = operationRoutes();
  app.get('/api/v1/openapi.json', (c) => c.json(openApiDocument(VERSION, routes)));
  app.get('/api/v1/instances', async (c) => c.json(await ctx.registry.list()));
  app.get('/api/v1/events', (c) => eventStream(c, ctx));

  for (const route of routes) {
    const { op } = route;
    app.on(route.method, route.path, async (c) => {
      const url = new URL(c.req.url);
      const raw = route.method === 'GET' ? inputFromQuery(op, url.searchParams) : await jsonBody(c);
      const inst = () => (op.instance === 'none' ? Promise.resolve(null) : instanceOf(c, ctx.registry));
      // A caller's W3C traceparent header makes the operation's span a child of the caller's.
      const call = edgeCallOf(c.get('caller'), c.req.header('traceparent'));
      // The input as it ran (attributed): a full page's Link is made from it.
      let input: unknown = raw;
      const result = await callOperation(inst, op.name, raw, {
        ...call,
        fit: (_op, i) => {
          checkPageSize(op, i);
          input = i;
        },
      });
      // A full page of a paged route links the next one (the same query, the cursor after its last record).
      const link =
        route.method === 'GET' && input !== null && typeof input === 'object'
          ? nextPageLink(op, url, input as Record<string, unknown>, result)
          : null;
      return c.json(result === undefined ? null : (result as object), 200, link ? { link } : {});
    });
    app.all(route.path, (c) =>
      c.json(
        errorBody(
          new InvalidInputError(`${op.name} is a ${op.writes ? 'write: POST' : 'read: GET'} it`, {
            field: 'method',
          }),
        ),
        405,
        { allow: route.method },
      ),
    );
  }

  if (options.mcp !== false) mountMcp(app, ctx, closers);
  if (options.dashboard !== false) {
    mountDashboard(app, ctx);
  }

  return {
    app,
    async close() {
      ac.abort();
      for (const close of closers) await close();
    },
  };
}

/** /mcp: the Streamable HTTP handler of `agentstate mcp --http`, for the instance `?instance=` names. */
function mountMcp(app: Hono<AppEnv>, ctx: AppContext, closers: Array<() => Promise<void>>): void {
  /** The MCP endpoint of each instance, made at its first request. */
  const endpoints = new Map<string, import('../mcp/serve.js').McpEndpoint>();
  /** The MCP modules, loaded at the first /mcp request (the SDK is never loaded before). */
  const load = () =>
    Promise.all([
      import('../mcp/index.js'),
      import('../mcp/server.js'),
      import('../mcp/reserved-arguments.js'),
    ]);
  let modules: ReturnType<typeof load> | undefined;
  closers.push(async () => {
    for (const e of endpoints.values()) await e.close().catch(() => {});
  });
  app.all('/mcp', async (c) => {
    if (!originAllowed(c.req.header('origin'), c.req.header('host'))) {
      return errorResponse(
        c,
        new PermissionDeniedError('cross-origin MCP request refused', { field: 'origin' }),
      );
    }
    const inst = await instanceOf(c, ctx.registry);
    const key = `${inst.host}/${inst.name}`;
    modules ??= load();
    const [m, { authInfoOf }, { reservedArgumentReply }] = await modules;
    let endpoint = endpoints.get(key);
    if (!endpoint) {
      endpoint = m.mcpEndpoint(
        m.createAgentStateMcp({
          instance: inst,
          ...(ctx.mcpMaxResultChars === undefined ? {} : { maxResultChars: ctx.mcpMaxResultChars }),
        }),
      );
      endpoints.set(key, endpoint);
    }
    let request = c.req.raw;
    if (c.req.method === 'POST') {
      // Read here (bounded above) to answer a call with a reserved argument key before the SDK drops it.
      const text = await c.req.text();
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = undefined;
      }
      const refused = reservedArgumentReply(parsed);
      if (refused !== null) return c.json(refused);
      request = new Request(c.req.url, { method: 'POST', headers: c.req.raw.headers, body: text });
    }
    return endpoint.fetch(request, { authInfo: authInfoOf(c.get('caller').principal) });
  });
}

/** The address a request came from (Node's socket), for per-address limits. */
function remoteAddress(c: Context): string {
  const env = c.env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined;
  return env?.incoming?.socket?.remoteAddress ?? 'unknown';
}

function esc(s: string): string {
  return s.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
}

/** The sign-in form (no script needed). */
export function loginPage(next: string, problem?: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Sign in · agentstate</title><link rel="stylesheet" href="/assets/app.css"></head><body class="login"><main><h1>agentstate</h1>${
    problem ? `<p class="problem" role="alert">${esc(problem)}</p>` : ''
  }<form method="post" action="/login"><input type="hidden" name="next" value="${esc(next)}"><label for="name">Your name (recorded with every change you make; a personal token signs in under its own)</label><input id="name" name="name" maxlength="100" autocomplete="username"><label for="token">Server token, or your personal token</label><input id="token" name="token" type="password" required autocomplete="current-password"><button type="submit">Sign in</button></form></main></body></html>`;
}
