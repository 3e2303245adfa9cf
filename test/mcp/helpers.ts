// In-process MCP client ↔ server pairs for the tests: the SDK's linked in-memory transports, with every
// message passed through JSON text as a real wire does (so an own "__proto__" key arrives as one).
import { Client } from '@modelcontextprotocol/client';
import { InMemoryTransport, type JSONRPCMessage } from '@modelcontextprotocol/server';
import type { Instance } from '../../src/instance/instance.js';
import { type AgentStateMcp, type AgentStateMcpOptions, createAgentStateMcp } from '../../src/mcp/index.js';

/** A linked pair whose messages cross as JSON text. */
function jsonWirePair(): [InMemoryTransport, InMemoryTransport] {
  const [a, b] = InMemoryTransport.createLinkedPair();
  for (const t of [a, b]) {
    const send = t.send.bind(t);
    t.send = (message: JSONRPCMessage, options?: Parameters<typeof send>[1]) =>
      send(JSON.parse(JSON.stringify(message)) as JSONRPCMessage, options);
  }
  return [a, b];
}

export interface Connected {
  client: Client;
  close(): Promise<void>;
}

/** A client connected in process to the MCP server of `instance`. */
export async function connect(
  instance: Instance,
  options: Omit<AgentStateMcpOptions, 'instance'> = {},
  clientInfo = { name: 'test-client', version: '1.2.3' },
): Promise<Connected> {
  const mcp = createAgentStateMcp({ instance, ...options });
  const c = await connectTo(mcp, clientInfo);
  return {
    client: c.client,
    async close() {
      await c.close();
      await mcp.close();
    },
  };
}

/** One more client connection (a 2025-era session) to an MCP server definition; closing it leaves `mcp` open. */
export async function connectTo(
  mcp: AgentStateMcp,
  clientInfo = { name: 'test-client', version: '1.2.3' },
): Promise<Connected> {
  const [clientSide, serverSide] = jsonWirePair();
  const server = await mcp.factory({ era: 'legacy' });
  await server.connect(serverSide);
  const client = new Client(clientInfo);
  await client.connect(clientSide);
  return {
    client,
    async close() {
      await client.close();
      await server.close();
    },
  };
}

/** Calls a tool with arguments given as JSON text (own __proto__ keys and all). */
export async function callRaw(client: Client, name: string, argsJson: string) {
  return client.callTool({ name, arguments: JSON.parse(argsJson) as Record<string, unknown> });
}

/**
 * The refusal a tool result carries, read from its text as a model reads it: `CODE: message`, then the
 * details as JSON on the last line. Null when the result is no refusal.
 */
export function refusalOf(r: {
  isError?: boolean;
  content?: unknown;
}): ({ code: string; message: string } & Record<string, unknown>) | null {
  if (r.isError !== true) return null;
  const text = (r.content as Array<{ type: string; text?: string }> | undefined)?.find(
    (c) => c.type === 'text',
  )?.text;
  const m = /^([A-Z][A-Z_]+): ([\s\S]*)$/.exec(text ?? '');
  if (!m) return null;
  const lines = m[2]!.split('\n');
  const last = lines.at(-1)!;
  if (lines.length > 1 && last.startsWith('{')) {
    return { code: m[1]!, message: lines.slice(0, -1).join('\n'), ...(JSON.parse(last) as object) };
  }
  return { code: m[1]!, message: m[2]! };
}
