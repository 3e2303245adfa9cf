// Kind `schedule`'s rules: the expression and time zone parse, the creation time stays, and the cursor
// of the last tick enqueued never moves back (two schedulers racing can only move it forward) — while the
// schedule is enabled: one removed (disabled) is added again as new.
import type { CommitContext } from '../../core/kind.js';
import type { JsonObject } from '../../core/types.js';
import { isAgentStateError } from '../../errors.js';
import { fail } from '../rules.js';
import { cronOf, type Schedule } from './model.js';

export function check(next: JsonObject, prev: JsonObject | null, _ctx: CommitContext): undefined {
  const s = next as unknown as Schedule;
  try {
    cronOf(s.cron, s.timezone);
  } catch (err) {
    const field = isAgentStateError(err) && err.details.field === 'timezone' ? 'timezone' : 'cron';
    fail(`/${field}`, `valid-${field}`, (err as Error).message);
  }
  for (const f of ['created_at', 'last_tick'] as const) {
    const v = s[f];
    if (v !== null && Number.isNaN(Date.parse(v))) fail(`/${f}`, 'iso-time', `${f} must be an ISO-8601 time`);
  }
  // A schedule that was removed (disabled) may be added again from scratch: a new creation time and cursor.
  if (prev && (prev as unknown as Schedule).enabled !== false) {
    const p = prev as unknown as Schedule;
    if (p.created_at !== s.created_at) {
      fail('/created_at', 'created-at-immutable', 'a schedule keeps the time it was added');
    }
    if (p.last_tick !== null && (s.last_tick === null || Date.parse(s.last_tick) < Date.parse(p.last_tick))) {
      fail('/last_tick', 'cursor-forward', `last_tick only moves forward (it is ${p.last_tick})`);
    }
  }
  return undefined;
}
