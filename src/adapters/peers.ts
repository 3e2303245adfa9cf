// The optional peer dependencies of the framework adapters, and the error that names them when one is not
// installed (instead of a bare ERR_MODULE_NOT_FOUND from deep inside the adapter). Used by the adapters'
// package entries, ESM (langgraph/entry.ts) and CommonJS (dist/cjs, scripts/cjs-entries.mjs) alike.

/** What to install next to @agentstate/store for each adapter subpath. */
export const ADAPTER_PEERS = {
  langgraph: ['@langchain/langgraph', '@langchain/langgraph-checkpoint', '@langchain/core'],
  'openai-agents': ['@openai/agents'],
} as const;

/**
 * When `err` is a failed load of one of `subpath`'s peer packages, an Error saying which packages to install
 * (code ERR_MODULE_NOT_FOUND, the original as its cause); otherwise undefined.
 * @example throw missingPeerError('langgraph', err) ?? err
 */
export function missingPeerError(subpath: keyof typeof ADAPTER_PEERS, err: unknown): Error | undefined {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  if (code !== 'ERR_MODULE_NOT_FOUND' && code !== 'MODULE_NOT_FOUND') return undefined;
  const peers: readonly string[] = ADAPTER_PEERS[subpath];
  const message = String((err as Error).message);
  const missing = peers.find((p) => message.includes(`'${p}'`) || message.includes(`"${p}"`));
  if (missing === undefined) return undefined;
  return Object.assign(
    new Error(
      `@agentstate/store/${subpath} needs ${peers.join(', ')} (optional peer dependencies), and ${missing} is not installed: npm install ${peers.join(' ')}`,
      { cause: err },
    ),
    { code: 'ERR_MODULE_NOT_FOUND' },
  );
}
