// The lines of a stdio MCP connection before the SDK reads them: a line that is not JSON, not a JSON-RPC
// message or longer than a request may be gets a JSON-RPC error reply (the SDK would drop the first two
// silently, and close the connection on the third), and the connection goes on.

import { Transform, type TransformCallback } from 'node:stream';
import {
  DEFAULT_MAX_REQUEST_BODY_SIZE,
  INVALID_REQUEST,
  type JSONRPCMessage,
  PARSE_ERROR,
  parseJSONRPCMessage,
} from '@modelcontextprotocol/server';
import { reservedArgumentReply } from './reserved-arguments.js';

/** The longest line read over stdio: the SDK's limit of a request body over HTTP (4 MiB), so both agree. */
export const MAX_LINE_BYTES = DEFAULT_MAX_REQUEST_BODY_SIZE;

/** How much of an oversize line is kept to find its request id (at its start or at its end). */
const EDGE = 256;

const ID = String.raw`(-?\d{1,15}|"(?:[^"\\]|\\.){0,200}")`;
const ID_AT_START = new RegExp(String.raw`^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*${ID}`);
const ID_AT_END = new RegExp(String.raw`"id"\s*:\s*${ID}\s*\}\s*$`);

/** The id of a request whose line was too long to parse, when it is where clients put it; else null. */
function idOf(head: string, tail: string): string | number | null {
  const m = ID_AT_START.exec(head) ?? ID_AT_END.exec(tail);
  return m ? (JSON.parse(m[1]!) as string | number) : null;
}

/** A JSON-RPC id found in a message the SDK would not accept, to answer it by; else null. */
function validId(v: unknown): string | number | null {
  const id =
    v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as { id?: unknown }).id : undefined;
  return typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id)) ? id : null;
}

function errorReply(id: string | number | null, code: number, message: string): JSONRPCMessage {
  return { jsonrpc: '2.0', id, error: { code, message } } as JSONRPCMessage;
}

/**
 * A stream of the JSON-RPC lines of `input`, for the SDK's stdio transport to read; every other line is
 * answered through `reply` instead: `-32700` (id null) for a line that is not JSON, `-32600` for JSON that is
 * no JSON-RPC message, and `-32000` with the request's id for a line over `maxBytes`. Blank lines are skipped.
 */
export function jsonRpcLines(
  input: NodeJS.ReadableStream,
  reply: (message: JSONRPCMessage) => void,
  maxBytes = MAX_LINE_BYTES,
): Transform {
  let parts: Buffer[] = [];
  let size = 0;
  /** Set while the current line is over the limit: its first and (so far) last bytes. */
  let oversize: { head: string; tail: Buffer } | null = null;

  const add = (buf: Buffer) => {
    if (buf.length === 0) return;
    if (oversize) {
      const t = Buffer.concat([oversize.tail, buf]);
      oversize.tail = t.subarray(Math.max(0, t.length - EDGE));
    } else if (size + buf.length > maxBytes) {
      const all = Buffer.concat([...parts, buf.subarray(0, EDGE)]);
      oversize = {
        head: all.subarray(0, EDGE).toString('utf8'),
        tail: buf.subarray(Math.max(0, buf.length - EDGE)),
      };
      parts = [];
      size = 0;
    } else {
      parts.push(buf);
      size += buf.length;
    }
  };

  const end = (out: Transform) => {
    if (oversize) {
      const id = idOf(oversize.head, oversize.tail.toString('utf8'));
      oversize = null;
      reply(
        errorReply(
          id,
          -32000,
          `Payload Too Large: a message over stdio must not exceed ${maxBytes} bytes (one line); nothing of it was read`,
        ),
      );
      return;
    }
    const line = Buffer.concat(parts).toString('utf8');
    parts = [];
    size = 0;
    if (line.trim() === '') return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      reply(
        errorReply(null, PARSE_ERROR, 'Parse error: the line is not JSON (one JSON-RPC message per line)'),
      );
      return;
    }
    try {
      parseJSONRPCMessage(value);
    } catch {
      reply(
        errorReply(
          validId(value),
          INVALID_REQUEST,
          'Invalid Request: the line is JSON but no JSON-RPC 2.0 request, notification or response',
        ),
      );
      return;
    }
    const refused = reservedArgumentReply(value);
    if (refused !== null) return reply(refused);
    out.push(`${line}\n`);
  };

  const lines = new Transform({
    transform(chunk: Buffer | string, _enc: BufferEncoding, done: TransformCallback) {
      const buf = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      let start = 0;
      for (let nl = buf.indexOf(10, start); nl >= 0; nl = buf.indexOf(10, start)) {
        add(buf.subarray(start, nl));
        end(this);
        start = nl + 1;
      }
      add(buf.subarray(start));
      done();
    },
    flush(done: TransformCallback) {
      // A last message without its newline is still a message.
      if (size > 0 || oversize) end(this);
      done();
    },
  });
  input.pipe(lines);
  return lines;
}
