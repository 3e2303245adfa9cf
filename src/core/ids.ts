// Time-sortable identifiers (ULID layout: 48-bit ms time + 80 random bits, Crockford base32).
import { randomBytes } from 'node:crypto';

const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
let lastTime = -1;
let lastRandom: number[] = [];

function encodeTime(ms: number): string {
  let out = '';
  let t = ms;
  for (let i = 0; i < 10; i++) {
    out = ALPHABET[t % 32] + out;
    t = Math.floor(t / 32);
  }
  return out;
}

function freshRandom(): number[] {
  const bytes = randomBytes(16);
  return Array.from(bytes, (b) => b % 32);
}

/** Increments the random part so ids made in the same millisecond by this process stay ordered. */
function increment(digits: number[]): number[] {
  const next = digits.slice();
  for (let i = next.length - 1; i >= 0; i--) {
    if (next[i]! < 31) {
      next[i]! += 1;
      return next;
    }
    next[i] = 0;
  }
  return freshRandom();
}

/** A new id such as `wi_01JD…`: sortable by creation time, unique across processes. */
export function newId(prefix: string, nowMs: number = Date.now()): string {
  if (nowMs === lastTime) lastRandom = increment(lastRandom);
  else {
    lastTime = nowMs;
    lastRandom = freshRandom();
  }
  return `${prefix}_${encodeTime(nowMs)}${lastRandom.map((d) => ALPHABET[d]).join('')}`;
}
