// Time helpers: the store keeps epoch milliseconds, the API speaks ISO-8601 UTC.
import { InvalidInputError } from '../errors.js';

/** A clock returning epoch milliseconds; injectable so tests can move time. */
export type Clock = () => number;
export const systemClock: Clock = () => Date.now();

export function toIso(ms: number): string;
export function toIso(ms: number | null | undefined): string | null;
export function toIso(ms: number | null | undefined): string | null {
  return ms === null || ms === undefined ? null : new Date(ms).toISOString();
}

const DURATION = /^(\d+(?:\.\d+)?)(ms|s|m|h|d|w)$/;
const UNIT_MS: Record<string, number> = {
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 604_800_000,
};

/**
 * Parses an ISO-8601 time, or a duration before now such as `24h`, `30m`, `7d`, into epoch ms.
 * @example parseTime('2026-11-30T10:00:00Z', 'since') // 1796032800000
 */
export function parseTime(value: string, field: string, now: number = Date.now()): number {
  const rel = DURATION.exec(value.trim());
  if (rel) return now - Number(rel[1]) * UNIT_MS[rel[2]!]!;
  if (!/^\d{4}-\d{2}-\d{2}/.test(value)) {
    throw new InvalidInputError(
      `${field} must be an ISO-8601 time or a duration like 24h, got ${JSON.stringify(value)}`,
      {
        field,
      },
    );
  }
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) {
    throw new InvalidInputError(`${field} is not a valid time: ${JSON.stringify(value)}`, { field });
  }
  return ms;
}
