// The problems one verify finds, as every check reports them (chain.ts, items.ts, documents.ts, limits.ts,
// workflow.ts): each counted, the first `maxProblems` kept; a row's field that differs from what the log says
// is compared as canonical JSON. With the helpers that word their messages.
import { canonicalJson } from '../json.js';
import { toIso } from '../time.js';
import type { IntegrityProblem, IntegrityProblemKind, Json, JsonObject } from '../types.js';

/** Whether `v` is a JSON object (an event's data must be one). */
export const isObject = (v: unknown): v is JsonObject =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

function show(v: Json | undefined): string {
  if (v === undefined) return 'absent';
  const text = JSON.stringify(v);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

/** Epoch ms as an ISO time for messages (the dump stores numbers). */
// Stryker disable next-line LogicalOperator: toIso maps null and undefined to null itself, so what this test lets through to it changes nothing
const when = (ms: number | null | undefined): Json => (ms === null || ms === undefined ? null : toIso(ms));

export { when };

/** The problems of one verify: every check reports into it, and the verdict reads it. */
export class Problems {
  readonly #max: number;
  readonly #problems: IntegrityProblem[] = [];
  #count = 0;

  /** `max`: the problems kept (`count` counts all). */
  constructor(max: number) {
    this.#max = max;
  }

  /** The problems kept, in the order found. */
  get list(): IntegrityProblem[] {
    return this.#problems;
  }

  /** Every problem found, kept or not. */
  get count(): number {
    return this.#count;
  }

  /** Reports one problem. */
  report(
    problem: IntegrityProblemKind,
    table: IntegrityProblem['table'],
    key: string,
    message: string,
    extra: Pick<IntegrityProblem, 'field' | 'expected' | 'actual'> = {},
  ): void {
    this.#count += 1;
    if (this.#problems.length < this.#max) this.#problems.push({ problem, table, key, ...extra, message });
  }

  /** Reports `field` of a row when it differs from what the log says (compared as canonical JSON). */
  differs(
    table: IntegrityProblem['table'],
    key: string,
    field: string,
    expected: Json | undefined,
    actual: Json | undefined,
  ): void {
    if (canonicalJson(expected ?? null) === canonicalJson(actual ?? null)) return;
    this.report(
      'row_differs',
      table,
      key,
      `${table} ${key}: ${field} is ${show(actual)}, the log says ${show(expected)}`,
      {
        field,
        expected: expected ?? null,
        actual: actual ?? null,
      },
    );
  }
}
