// `agentstate serve`: the HTTP API, live event stream, MCP endpoint and web dashboard of every instance under
// the root (or of one --dir, or of every instance of a --url PostgreSQL store). Hono is imported only when
// this command runs, so no other command or workflow pays for loading it.

import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Command } from 'commander';
import { resolveInstance } from '../service/instance-resolver.js';
import { duration, type GlobalOpts, type ListenOpts, port, tlsOf } from './context.js';

interface ServeOpts extends ListenOpts {
  trustProxy?: boolean;
  metricsPort?: number;
  verifyEvery?: number;
  mcpMaxResultChars?: string;
}

export function addServeCommand(program: Command): void {
  program
    .command('serve')
    .description(
      'serve the HTTP API (/api/v1), the live event stream, MCP (/mcp) and the web dashboard (/) on 127.0.0.1; see docs/http.md',
    )
    .option('--port <n>', 'TCP port [default: 8780]', port())
    .option(
      '--bind <address>',
      'address to listen on; anything but loopback needs AGENTSTATE_TOKEN [default: 127.0.0.1]',
    )
    .option(
      '--token <token>',
      'the bearer token (or AGENTSTATE_TOKEN) [default: generated once, kept in the root]',
    )
    .option('--tls-cert <file>', 'serve HTTPS with this certificate (PEM); needs --tls-key')
    .option('--tls-key <file>', 'the private key of --tls-cert (PEM)')
    .option(
      '--insecure-http',
      'serve plain HTTP beyond loopback (behind a TLS proxy, or on a network you trust)',
    )
    .option(
      '--trust-proxy',
      'honour X-Forwarded-Proto from a reverse proxy (the session cookie is then Secure)',
    )
    .option(
      '--metrics-port <n>',
      'also answer GET /metrics on 127.0.0.1:<n> without a credential, for a local Prometheus (see docs/observability.md)',
      port('--metrics-port'),
    )
    .option(
      '--verify-every <duration>',
      'verify every instance at start and again this long after each check (e.g. 1h), for the agentstate_verify_* metrics [default: never]',
      duration('--verify-every'),
    )
    .option(
      '--mcp-max-result-chars <n>',
      'the most characters of one MCP tool result at /mcp (or AGENTSTATE_MCP_MAX_RESULT) [default: 100000]',
    )
    .action(async (o: ServeOpts, cmd: Command) => {
      const g = cmd.optsWithGlobals<GlobalOpts>();
      const rawBudget = o.mcpMaxResultChars ?? (process.env.AGENTSTATE_MCP_MAX_RESULT || undefined);
      // The budget's module only (the MCP SDK loads when /mcp is first called).
      const mcpMaxResultChars =
        rawBudget === undefined
          ? undefined
          : (await import('../mcp/budget.js')).parseBudget(
              rawBudget,
              o.mcpMaxResultChars === undefined ? 'AGENTSTATE_MCP_MAX_RESULT' : '--mcp-max-result-chars',
            );
      const { startServer, TOKEN_FILE } = await import('../http/index.js');
      const target = resolveInstance(g);
      // Earlier builds of `serve --dir` kept the token inside the instance folder, where it travels with every copy
      // of the data. It is no longer read: say so once, so the old copy gets deleted.
      const stale = target.dir === undefined ? undefined : join(resolve(target.dir), TOKEN_FILE);
      if (stale !== undefined && existsSync(stale)) {
        process.stderr.write(
          `agentstate serve: ${stale} is no longer read (a token inside the instance folder travels with every copy of it): delete it\n`,
        );
      }
      const server = await startServer({
        target,
        ...(o.port === undefined ? {} : { port: o.port }),
        ...(o.bind === undefined ? {} : { host: o.bind }),
        ...(o.token === undefined ? {} : { token: o.token }),
        ...(tlsOf(o.tlsCert, o.tlsKey, 'serve') ?? {}),
        ...(o.insecureHttp ? { insecureHttp: true } : {}),
        ...(o.trustProxy ? { trustProxy: true } : {}),
        ...(o.metricsPort === undefined ? {} : { metricsPort: o.metricsPort }),
        ...(o.verifyEvery === undefined ? {} : { verifyEveryMs: o.verifyEvery }),
        ...(mcpMaxResultChars === undefined ? {} : { mcpMaxResultChars }),
      });
      const { token } = server;
      process.stderr.write(`agentstate serve: ${server.url} (dashboard /, API /api/v1, MCP /mcp)\n`);
      if (server.metricsUrl)
        process.stderr.write(`agentstate serve: metrics at ${server.metricsUrl} (loopback, no token)\n`);
      if (token.source === 'generated') {
        process.stderr.write(
          `agentstate serve: new token (shown once; kept in ${token.file}, mode 0600):\n${token.token}\n`,
        );
      } else if (token.source === 'file') {
        process.stderr.write(`agentstate serve: token in ${token.file}\n`);
      }
      let stopping = false;
      const shutdown = async () => {
        if (stopping) return;
        stopping = true;
        try {
          await server.close();
        } finally {
          process.exit(process.exitCode ?? 0);
        }
      };
      process.once('SIGINT', () => void shutdown());
      process.once('SIGTERM', () => void shutdown());
    });
}
