// Checks every network edge of agentstate shares (the HTTP API and dashboard, MCP over Streamable HTTP):
// loopback binding, constant-time token comparison, and Host/Origin checks against DNS rebinding.
import { timingSafeEqual } from 'node:crypto';

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1', '[::1]']);

/** Whether `host` is a loopback address (127.0.0.0/8, ::1, localhost). */
export function isLoopback(host: string): boolean {
  return LOOPBACK.has(host) || /^127(\.\d{1,3}){3}$/.test(host);
}

/** Compares a secret the caller gave with the expected one in constant time. */
export function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The host name of a Host header (`name:port`, `[::1]:port`), lower-cased; null when it is malformed. */
export function hostName(header: string | undefined | null): string | null {
  if (!header) return null;
  const m = /^(\[[0-9a-f:.]+\]|[a-z0-9.-]+)(?::\d{1,5})?$/i.exec(header.trim());
  return m ? m[1]!.toLowerCase() : null;
}

/**
 * Whether a request's Host header may reach a server bound to `bind`: on loopback only this machine's names
 * (a page that rebinds its own name to 127.0.0.1 is refused); on a named address that name; on a wildcard
 * bind any (the token is the guard there).
 */
export function hostAllowed(header: string | undefined | null, bind: string): boolean {
  const name = hostName(header);
  if (name === null) return false;
  if (isLoopback(bind)) return isLoopback(name);
  if (bind === '0.0.0.0' || bind === '::') return true;
  return name === bind.toLowerCase() || `[${bind.toLowerCase()}]` === name;
}

/**
 * Whether a browser's Origin header names the server itself (same scheme-less host and port as Host). An
 * absent Origin passes: only browsers send it, and cross-site browser writes always carry it.
 */
export function originAllowed(origin: string | undefined | null, host: string | undefined | null): boolean {
  if (origin === undefined || origin === null || origin === '') return true;
  if (origin === 'null') return false;
  try {
    return new URL(origin).host.toLowerCase() === (host ?? '').toLowerCase();
  } catch {
    return false;
  }
}
