// The result budget of the MCP edge: no tool result over a number of characters (hosts cut what is bigger, or
// save it to a file the model may never open), counted over all a result carries. What does not fit is left
// out whole (records from the end of a page, the tail of a list, a large value replaced by a note), and the
// result says what was left out and how to get it: `next` holds the arguments of the next page.

import type { PageSpec } from '../core/kind.js';
import { InvalidInputError } from '../errors.js';

/** The largest tool result by default, in characters (≈ 25,000 tokens: Claude Code's cap on one result). */
export const DEFAULT_MAX_RESULT_CHARS = 100_000;

/** The smallest budget accepted: below it not even one work item with its lease fits. */
export const MIN_MAX_RESULT_CHARS = 2_000;

/** The largest budget accepted. */
export const MAX_MAX_RESULT_CHARS = 10_000_000;

/**
 * A budget from a flag or the environment (`--max-result-chars`, AGENTSTATE_MCP_MAX_RESULT), or
 * INVALID_INPUT saying what is accepted.
 */
export function parseBudget(raw: string | number, source: string): number {
  const n = typeof raw === 'number' ? raw : /^\d+$/.test(raw.trim()) ? Number(raw.trim()) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < MIN_MAX_RESULT_CHARS || n > MAX_MAX_RESULT_CHARS) {
    throw new InvalidInputError(
      `${source}: ${JSON.stringify(raw)} is no budget: give a whole number of characters from ${MIN_MAX_RESULT_CHARS} to ${MAX_MAX_RESULT_CHARS} (default ${DEFAULT_MAX_RESULT_CHARS}; about 10000 for Codex)`,
      { field: 'max_result_chars' },
    );
  }
  return n;
}

/** The characters a tool result with this text and structured content takes once serialized. */
export function resultChars(text: string, structured: unknown): number {
  return JSON.stringify({ content: [{ type: 'text', text }], structuredContent: structured }).length;
}

/** A tool result within the budget: its text and structured content. */
export interface FittedResult {
  text: string;
  structuredContent: Record<string, unknown>;
}

/** What `fitResult` needs to know of the tool and the call. */
export interface FitRequest {
  tool: string;
  /** The key a non-object result is wrapped under, if any. */
  wrap: string | undefined;
  page: PageSpec | undefined;
  /**
   * The call wrote: no record of its result is left out (an item it claimed must be seen to be worked on
   * or released), only values replaced by a note.
   */
  writes: boolean;
  input: Record<string, unknown>;
  /** The operation's result (in the agent's view). */
  result: unknown;
  budget: number;
  /** The tool's text form of a result: whole (with the values), or brief (without them). */
  text: (result: unknown, brief: boolean) => string;
}

/** Fields whose value is any JSON the writer chose: what may be replaced by a note when too large. */
const FREE = new Set(['payload', 'result', 'notes', 'data', 'body', 'provenance', 'args', 'value']);

/** Where the rest of one of resume's lists is read (a model calls these tools with these arguments). */
const READ_REST: Record<string, string> = {
  held: 'list_items {status: "in_flight"}',
  held_by_others: 'list_items {status: "in_flight"}',
  ready: 'list_items {ready: true}',
  decisions: 'list_items {status: "waiting_human"}',
  documents: 'list_documents',
  blocked_on_failure: 'list_items {blocked_on_failure: true}',
  events: 'read_events {after: <position of the last event shown>}',
};

/** Where a value left out is read in full, by the field it was in. */
const READ_VALUE: Record<string, string> = {
  body: 'read it by parts with get_document (paths, max_chars)',
};
const READ_ELSEWHERE = 'read it outside MCP (the CLI with --json, or the HTTP API)';

/** The key the result is held under while it is cut (no field of a result can have it). */
const ROOT = '\u0000';

/** Room kept for the `next` and `omitted` fields while trimming (they are added after). */
const NOTE_ROOM = 600;

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const size = (v: unknown) => JSON.stringify(v)?.length ?? 0;

/**
 * A tool result within `budget` characters: the text form with its values when all fits, else a brief text
 * (the values are in the structured content, not sent twice), and then a page cut to what fits (`next` the
 * arguments of the page after it), large values replaced by a note, long lists cut at their end: each cut
 * said in `omitted`. A full page gets `next` too, so paging from the start reaches the end.
 */
export function fitResult(r: FitRequest): FittedResult {
  const notes = new Omitted();
  let next: Obj | undefined;
  let result = r.result;
  const records = listOf(r.page, result);
  if (r.page && records) {
    const limit =
      typeof r.input[r.page.limit] === 'number' ? (r.input[r.page.limit] as number) : r.page.defaultLimit;
    if (records.length > 0 && records.length >= limit) next = r.page.next(records.at(-1), r.input as never);
  }
  const compose = (): Obj => {
    const base: Obj = r.wrap === undefined ? { ...(result as Obj) } : { [r.wrap]: result };
    if (next) base.next = next;
    if (!notes.empty) base.omitted = notes.text();
    return base;
  };
  const nextLine = () => (next ? `\nmore: call ${r.tool} again with ${JSON.stringify(next)}` : '');
  const structured = compose();
  const whole = r.text(result, false) + nextLine();
  if (resultChars(whole, structured) <= r.budget) return { text: whole, structuredContent: structured };

  // Too large for both: the text no longer repeats the values; then cut until the structured content fits.
  const room = r.budget - NOTE_ROOM;
  const briefText = () => {
    const t = `${briefOf(r.text(result, true), r.budget)}${nextLine()}`;
    return notes.empty ? t : `${t}\nsome of it was left out to fit: see omitted in the structured content`;
  };
  const over = () => resultChars(briefText(), compose()) > room;

  // 1. A page keeps the records that fit, whole, and says where the next page starts.
  const page = r.page;
  if (page && records && over()) {
    const kept = keepPrefix(records, (n) => {
      result = withList(page, r.result, records.slice(0, n));
      return !over();
    });
    if (kept < records.length) {
      const group = groupBoundary(page, r.input, records, kept);
      const cut = group === 0 ? kept : group;
      result = withList(page, r.result, records.slice(0, cut));
      next = page.next(records[cut - 1], r.input as never);
      const label = page.list ?? r.wrap ?? 'records';
      notes.cut(label, records.length - cut, 'call again with next');
      if (group === 0) notes.say("the rest of the last position's records: read them by work_item_id");
      if (isObj(result) && 'next_after' in result)
        (result as Obj).next_after = Object.values(next)[0] ?? null;
    }
  }
  const shown = result;
  // Work on a copy from here: values are replaced and lists cut in place (under a holder, so a result that is
  // itself a list can be cut).
  const holder: Obj = { [ROOT]: structuredClone(result) };
  const sync = () => {
    result = Object.values(holder)[0];
  };
  const overNow = () => {
    sync();
    return over();
  };
  // 2. Large values (a quarter of the budget or more) become a note saying their size.
  elide(holder, r.budget / 4, overNow, notes);
  // 3. The longest lists lose their tail, half at a time.
  while (!r.writes && overNow() && cutLongest(r.tool, holder, notes, overNow)) {}
  // 4. Any value left that the writer chose, largest first.
  elide(holder, 64, overNow, notes);
  // The notes themselves past their room: cut more.
  while (
    !r.writes &&
    resultChars(briefText(), compose()) > r.budget &&
    cutLongest(r.tool, holder, notes, overNow)
  ) {
    sync();
  }
  sync();
  // A page cut again by its tail: the next page starts after what is left.
  const left = listOf(r.page, result);
  if (r.page && records && left && left.length > 0 && left.length < (listOf(r.page, shown) ?? []).length) {
    next = r.page.next(left.at(-1), r.input as never);
  }
  return { text: briefText(), structuredContent: compose() };
}

/** The records of a paged result (the list itself, or its `page.list` field), if it has them. */
function listOf(page: PageSpec | undefined, result: unknown): unknown[] | undefined {
  if (!page) return undefined;
  const list = page.list === undefined ? result : isObj(result) ? result[page.list] : undefined;
  return Array.isArray(list) ? list : undefined;
}

function withList(page: PageSpec, result: unknown, records: unknown[]): unknown {
  return page.list === undefined ? records : { ...(result as Obj), [page.list]: records };
}

/** The most records (at least 1) for which `fits(n)` holds, by bisection (fits is monotone in n). */
function keepPrefix(records: unknown[], fits: (n: number) => boolean): number {
  let lo = 1;
  let hi = records.length;
  if (fits(hi)) return hi;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (fits(mid)) lo = mid;
    else hi = mid - 1;
  }
  fits(lo);
  return lo;
}

/**
 * Where a cut page may end: not between records its cursor cannot tell apart (an item's views of one batch
 * event share its position); 0 when the first such run alone is over the budget.
 */
function groupBoundary(page: PageSpec, input: Obj, records: unknown[], kept: number): number {
  const key = (k: number) => JSON.stringify(page.next(records[k], input as never));
  let cut = kept;
  while (cut > 0 && key(cut - 1) === key(cut)) cut--;
  return cut;
}

/** Replaces values of FREE fields larger than `min` characters by a note, largest first, while `over()`. */
function elide(root: unknown, min: number, over: () => boolean, notes: Omitted): void {
  if (!over()) return;
  const slots: Array<{ parent: Obj; key: string; chars: number }> = [];
  const walk = (v: unknown, depth: number) => {
    if (depth > 6) return;
    if (Array.isArray(v)) for (const x of v) walk(x, depth + 1);
    else if (isObj(v)) {
      for (const [k, x] of Object.entries(v)) {
        if (FREE.has(k) && x !== null && typeof x === 'object') {
          const chars = size(x);
          if (chars > min) slots.push({ parent: v, key: k, chars });
        } else if (k === 'values' && isObj(x)) {
          // A projection's values: each is the writer's own value.
          for (const [p, y] of Object.entries(x)) {
            const chars = size(y);
            if (chars > min && y !== null && typeof y === 'object') slots.push({ parent: x, key: p, chars });
          }
        } else walk(x, depth + 1);
      }
    }
  };
  walk(root, 0);
  slots.sort((a, b) => b.chars - a.chars);
  let count = 0;
  for (const s of slots) {
    if (!over()) break;
    s.parent[s.key] = {
      $omitted: `${s.chars} characters, too large for this answer: ${READ_VALUE[s.key] ?? READ_ELSEWHERE}`,
    };
    count++;
  }
  notes.elided(count);
}

/** What a result left out, one line per list however often it was cut, in the order first cut. */
class Omitted {
  readonly #cuts = new Map<string, { n: number; how: string | undefined }>();
  readonly #lines: string[] = [];
  #elided = 0;

  /** Nothing was left out. */
  get empty(): boolean {
    return this.#cuts.size === 0 && this.#lines.length === 0 && this.#elided === 0;
  }

  /** `n` more entries of list `label` left out; `how` says where they are read. */
  cut(label: string, n: number, how: string | undefined): void {
    const c = this.#cuts.get(label);
    if (c) c.n += n;
    else this.#cuts.set(label, { n, how });
  }

  /** `n` more values replaced by a note. */
  elided(n: number): void {
    this.#elided += n;
  }

  /** A line of its own. */
  say(line: string): void {
    this.#lines.push(line);
  }

  /** The note the result carries as `omitted`. */
  text(): string {
    const parts = [...this.#cuts].map(([label, c]) => `${c.n} more of ${label}${c.how ? ` (${c.how})` : ''}`);
    if (this.#elided > 0)
      parts.push(`${this.#elided} large value${this.#elided === 1 ? '' : 's'} replaced by {$omitted}`);
    return `left out to fit ${'the budget'}: ${[...parts, ...this.#lines].join('; ')}`;
  }
}

/** Cuts the tail half of the longest list in the result (resume's lists say where the rest is read). */
function cutLongest(tool: string, root: unknown, notes: Omitted, over: () => boolean): boolean {
  let best: { parent: Obj; key: string; list: unknown[]; chars: number } | undefined;
  let kept: typeof best;
  const walk = (v: unknown, depth: number) => {
    if (depth > 4 || !isObj(v)) return;
    for (const [k, x] of Object.entries(v)) {
      if (Array.isArray(x) && x.length > 0) {
        const chars = size(x);
        const c = { parent: v, key: k, list: x, chars };
        // What resume's caller holds is cut last: it must heartbeat and resolve those.
        if (tool === 'resume' && k === 'held') kept = c;
        else if (!best || chars > best.chars) best = c;
      } else if (isObj(x)) walk(x, depth + 1);
    }
  };
  walk(root, 0);
  best ??= kept;
  if (!best) return false;
  const { parent, key, list } = best;
  // The most entries that fit (by bisection); when none would, half of them, and another list is cut next.
  const fitsWith = (n: number) => {
    parent[key] = list.slice(0, n);
    return !over();
  };
  let keep: number;
  if (!fitsWith(0)) keep = Math.floor(list.length / 2);
  else {
    let lo = 0;
    let hi = list.length - 1;
    while (lo < hi) {
      const mid = Math.ceil((lo + hi) / 2);
      if (fitsWith(mid)) lo = mid;
      else hi = mid - 1;
    }
    keep = lo;
  }
  const dropped = list.length - keep;
  parent[key] = list.slice(0, keep);
  if (tool === 'resume' && key === 'events' && typeof parent.more === 'number') parent.more += dropped;
  const rest = READ_REST[key];
  const label = key === ROOT ? 'the list' : key;
  notes.cut(label, dropped, tool === 'resume' ? rest : undefined);
  return true;
}

/** A brief text at most a tenth of the budget long, cut at a line, saying how many lines were left out. */
function briefOf(text: string, budget: number): string {
  const max = Math.max(300, Math.floor(budget / 10));
  if (text.length <= max) return text;
  const lines = text.split('\n');
  let out = '';
  let k = 0;
  for (; k < lines.length; k++) {
    if (out.length + lines[k]!.length + 1 > max - 60) break;
    out += `${out ? '\n' : ''}${lines[k]}`;
  }
  return `${out}\n(${lines.length - k} more lines: the structured content has all of it)`;
}
