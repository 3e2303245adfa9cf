// Tool arguments with a key the store never accepts (`__proto__`, `constructor`, `prototype`) at their top
// level: the SDK copies arguments into a new object, where `"__proto__": <not an object>` vanishes and any
// other `__proto__` becomes a prototype, so such a call is answered here, on the raw message, before the SDK
// sees it: a tool result with isError and INVALID_INPUT, as every other refusal of a tool call.
import type { JSONRPCMessage } from '@modelcontextprotocol/server';
import { InvalidInputError, toolError } from '../errors.js';

const RESERVED = ['__proto__', 'constructor', 'prototype'] as const;

/**
 * The reply to a `tools/call` request (parsed with JSON.parse, so a `__proto__` key is an own property) whose
 * arguments have a reserved key at their top level; null for any other message.
 */
export function reservedArgumentReply(message: unknown): JSONRPCMessage | null {
  if (message === null || typeof message !== 'object' || Array.isArray(message)) return null;
  const m = message as { method?: unknown; id?: unknown; params?: unknown };
  if (m.method !== 'tools/call' || (typeof m.id !== 'string' && typeof m.id !== 'number')) return null;
  const params = m.params as { name?: unknown; arguments?: unknown } | undefined;
  const args = params?.arguments;
  if (args === null || typeof args !== 'object' || Array.isArray(args)) return null;
  const key = RESERVED.find((k) => Object.hasOwn(args, k));
  if (key === undefined) return null;
  const tool = typeof params?.name === 'string' ? params.name : 'the tool';
  const err = new InvalidInputError(
    `${tool}: the arguments have the key "${key}", which is refused (__proto__, constructor, prototype are never accepted as keys)`,
    { field: key, operation: tool },
  );
  // resultType: what 2026-07-28 clients require of a complete result (earlier ones ignore it).
  return {
    jsonrpc: '2.0',
    id: m.id,
    result: { ...toolError(err), resultType: 'complete' },
  } as unknown as JSONRPCMessage;
}
