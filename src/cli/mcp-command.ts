// `agentstate mcp`: the MCP server of one instance, over stdio (the session a host spawns) or Streamable HTTP.
// The MCP SDK is imported only when this command runs, so no other command or workflow pays for loading it.
import { type Command, Option } from 'commander';
import { PrincipalStore } from '../auth/principals.js';
import { InvalidInputError } from '../errors.js';
import { openInstance } from '../instance/instance.js';
import { instanceRoot } from '../instance/paths.js';
import { listenError } from '../net/guards.js';
import { resolveInstance } from '../service/instance-resolver.js';
import { invoke } from '../service/invoke.js';
import { type GlobalOpts, type ListenOpts, port, tlsOf } from './context.js';

interface McpOpts extends ListenOpts {
  http?: boolean;
  tools?: string;
  model?: string;
  worker?: string;
  init?: boolean;
  maxResultChars?: string;
}

export function addMcpCommand(program: Command): void {
  program.commandsGroup('Agents:');
  program
    .command('mcp')
    .description(
      'serve the instance to agents over MCP (stdio; --http for Streamable HTTP on 127.0.0.1); see docs/mcp.md',
    )
    .option('--http', 'serve Streamable HTTP instead of stdio')
    .option('--port <n>', 'HTTP port [default: 8765]', port())
    .option('--bind <address>', 'HTTP address; anything but loopback needs --token [default: 127.0.0.1]')
    .option('--token <token>', 'bearer token HTTP requests must carry (or AGENTSTATE_MCP_TOKEN)')
    .option('--tls-cert <file>', 'with --http: serve HTTPS with this certificate (PEM); needs --tls-key')
    .option('--tls-key <file>', 'the private key of --tls-cert (PEM)')
    .option(
      '--insecure-http',
      'with --http: serve plain HTTP beyond loopback (behind a TLS proxy, or a trusted network)',
    )
    .option(
      '--tools <list>',
      'tools or toolsets to serve, comma-separated: core, work, documents, events, runs, all [default: all]',
    )
    .option('--model <id>', 'the model the host runs, recorded with every write (or AGENTSTATE_MODEL)')
    .option(
      '--worker <name>',
      'lease owner and actor of this server (or AGENTSTATE_WORKER) [default: per session]',
    )
    .option(
      '--max-result-chars <n>',
      'the most characters of one tool result; the rest is left out whole and the result says how to get it (or AGENTSTATE_MCP_MAX_RESULT; about 10000 for Codex) [default: 100000]',
    )
    .addOption(new Option('--init', 'create the instance first when it does not exist (as init does)'))
    .action(async (o: McpOpts, cmd: Command) => {
      const g = cmd.optsWithGlobals<GlobalOpts>();
      const env = process.env;
      // Without --http the server speaks stdio and would ignore them: a newcomer asking for a port gets told.
      if (!o.http && (o.port !== undefined || o.bind !== undefined)) {
        throw new InvalidInputError('mcp: --port and --bind are for Streamable HTTP: add --http', {
          field: o.port !== undefined ? 'port' : 'host',
        });
      }
      const set = (v: string | undefined) => (v === undefined || v === '' ? undefined : v);
      if (o.init) await invoke('scaffold', {}, { instance: g });
      const mcpModule = await import('../mcp/index.js');
      // Check the options before opening anything.
      mcpModule.selectTools(o.tools);
      const rawBudget = set(o.maxResultChars) ?? set(env.AGENTSTATE_MCP_MAX_RESULT);
      const maxResultChars =
        rawBudget === undefined
          ? undefined
          : mcpModule.parseBudget(
              rawBudget,
              o.maxResultChars === undefined ? 'AGENTSTATE_MCP_MAX_RESULT' : '--max-result-chars',
            );
      const instance = await openInstance({ ...resolveInstance(g), create: false });
      let mcp: ReturnType<typeof mcpModule.createAgentStateMcp>;
      try {
        const model = set(o.model) ?? set(env.AGENTSTATE_MODEL);
        const worker = set(o.worker) ?? set(env.AGENTSTATE_WORKER);
        mcp = mcpModule.createAgentStateMcp({
          instance,
          ...(o.tools === undefined ? {} : { tools: o.tools }),
          ...(model === undefined ? {} : { model }),
          ...(worker === undefined ? {} : { worker }),
          ...(maxResultChars === undefined ? {} : { maxResultChars }),
        });
      } catch (err) {
        await instance.close();
        throw err;
      }
      let stop: () => Promise<void>;
      if (o.http) {
        const token = set(o.token) ?? set(env.AGENTSTATE_MCP_TOKEN);
        let served: Awaited<ReturnType<typeof mcpModule.serveMcpHttp>>;
        const port = o.port ?? 8765;
        const host = o.bind ?? '127.0.0.1';
        try {
          served = await mcpModule.serveMcpHttp(mcp, {
            port,
            host,
            ...(token === undefined ? {} : { token }),
            principals: new PrincipalStore(instanceRoot(resolveInstance(g).root)),
            ...(tlsOf(o.tlsCert, o.tlsKey, 'mcp --http') ?? {}),
            ...(o.insecureHttp ? { insecureHttp: true } : {}),
          });
        } catch (err) {
          await instance.close();
          throw listenError(err, 'mcp --http', host, port);
        }
        process.stderr.write(`agentstate mcp: ${mcp.tools.length} tools at ${served.url}\n`);
        stop = served.close;
      } else {
        const served = mcpModule.serveMcpStdio(mcp);
        stop = served.close;
        // The host closing our stdin ends the session.
        process.stdin.once('end', () => void shutdown());
      }
      let stopping = false;
      async function shutdown() {
        if (stopping) return;
        stopping = true;
        try {
          await stop();
        } finally {
          await instance.close();
          process.exit(process.exitCode ?? 0);
        }
      }
      process.once('SIGINT', () => void shutdown());
      process.once('SIGTERM', () => void shutdown());
    });
}
