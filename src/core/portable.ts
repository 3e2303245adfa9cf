// Moving an instance between backends: a portable JSON Lines dump (work items, events with their
// chain, documents with full history, limits, a Workflow World's runs, steps, hooks, waits and stream
// chunks), and an import that checks it as verify would, loads it verbatim and verifies the result.

import { once } from 'node:events';
import { createReadStream, createWriteStream, existsSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { IntegrityError, InvalidInputError } from '../errors.js';
import type { DumpRecord, StoreBackend } from './backend.js';
import type { EventLog } from './events/log.js';
import { checkJsonValue, LIMITS, parseJsonInput } from './input.js';
import { checkRecords } from './integrity/verify.js';
import type { IntegrityProblem } from './types.js';

export const DUMP_FORMAT = 'agentstate-dump';
export const DUMP_VERSION = 1;

/** The first line of a dump file: its format and version, and which instance it was taken from, when. */
export interface DumpHeader {
  format: typeof DUMP_FORMAT;
  version: typeof DUMP_VERSION;
  instance: { host: string; name: string };
  source_backend: string;
  created_at: string;
}

/** How many records of each sort a dump holds. */
export interface DumpCounts {
  work_items: number;
  events: number;
  documents: number;
  history: number;
  /** Limits per concurrency key. */
  limits: number;
  /** A Workflow SDK World's runs. */
  workflow_runs: number;
  /** Their steps. */
  workflow_steps: number;
  /** Their live hooks. */
  workflow_hooks: number;
  /** Their waits. */
  workflow_waits: number;
  /** The chunks (and closes) of the World's streams. */
  workflow_chunks: number;
}

const emptyCounts = (): DumpCounts => ({
  work_items: 0,
  events: 0,
  documents: 0,
  history: 0,
  limits: 0,
  workflow_runs: 0,
  workflow_steps: 0,
  workflow_hooks: 0,
  workflow_waits: 0,
  workflow_chunks: 0,
});
const countKey = {
  work_item: 'work_items',
  event: 'events',
  document: 'documents',
  history: 'history',
  limit: 'limits',
  workflow_run: 'workflow_runs',
  workflow_step: 'workflow_steps',
  workflow_hook: 'workflow_hooks',
  workflow_wait: 'workflow_waits',
  workflow_chunk: 'workflow_chunks',
} as const satisfies Record<DumpRecord['t'], keyof DumpCounts>;

/** Counts a dump written before them has no trailer entry for (and no records of): 0. */
const LATER_COUNTS: ReadonlySet<keyof DumpCounts> = new Set([
  'limits',
  'workflow_runs',
  'workflow_steps',
  'workflow_hooks',
  'workflow_waits',
  'workflow_chunks',
]);

/**
 * Writes every row of the instance, from one snapshot, to `path` (JSON Lines: a header, the records, a
 * trailer with counts). Returns the counts and the newest event exported as `anchor` (`position:hash`, null
 * for an empty log): keep it elsewhere to check later, with `verify --head`, that the log was not rewritten.
 */
export async function exportInstance(
  backend: StoreBackend,
  instance: { host: string; name: string },
  path: string,
  /** Called every 10,000 records written, with the count so far. */
  onProgress?: (records: number) => void,
): Promise<DumpCounts & { path: string; anchor: string | null }> {
  if (!backend.dump) throw new InvalidInputError(`the ${backend.name} backend cannot export instances yet`);
  if (existsSync(path)) {
    throw new InvalidInputError(
      `${path} already exists: choose a new file name (an export never overwrites)`,
      { path },
    );
  }
  const out = createWriteStream(path, { flags: 'wx' });
  const failed = new Promise<never>((_, reject) =>
    out.once('error', (err) =>
      reject(new InvalidInputError(`cannot write ${path}: ${err.message}`, { path })),
    ),
  );
  failed.catch(() => {});
  const write = async (obj: unknown) => {
    if (!out.write(`${JSON.stringify(obj)}\n`)) await Promise.race([once(out, 'drain'), failed]);
  };
  const counts = emptyCounts();
  const header: DumpHeader = {
    format: DUMP_FORMAT,
    version: DUMP_VERSION,
    instance,
    source_backend: backend.name,
    created_at: new Date().toISOString(),
  };
  await write(header);
  let anchor: string | null = null;
  let written = 0;
  for await (const r of backend.dump()) {
    if (r.t === 'event_head' || r.t === 'event_stream' || r.t === 'blocker_edges') continue;
    counts[countKey[r.t]] += 1;
    if (onProgress && ++written % 10_000 === 0) onProgress(written);
    if (r.t === 'event') anchor = `${r.row.position}:${r.row.hash}`;
    await write(r);
  }
  await write({ t: 'end', counts });
  out.end();
  await Promise.race([once(out, 'finish'), failed]);
  return { ...counts, path, anchor };
}

function fail(path: string, line: number, why: string): never {
  throw new InvalidInputError(`${path}:${line}: ${why}`, { path, line });
}

/**
 * A dump is input like any other: its rows (and each event's data text) pass the store's JSON policy
 * before anything walks them, so a body nested 100k deep is refused instead of overflowing the stack.
 */
function checkRecordJson(path: string, line: number, obj: Record<string, unknown>): void {
  try {
    // The record and its row add two levels around the values the limit is about.
    checkJsonValue(obj, 'record', LIMITS.jsonDepth + 2);
    const row = obj.row as { data?: unknown };
    if (obj.t === 'event' && typeof row.data === 'string') {
      checkJsonValue(parseJsonInput(row.data, 'event data'), 'event data');
    }
  } catch (err) {
    fail(path, line, (err as Error).message);
  }
}

/** Reads a dump file, checking its framing (header, record types, trailer counts). */
export async function readDump(
  path: string,
): Promise<{ header: DumpHeader; records: DumpRecord[]; counts: DumpCounts }> {
  const lines = createInterface({
    input: createReadStream(path, 'utf8'),
    crlfDelay: Number.POSITIVE_INFINITY,
  });
  let header: DumpHeader | null = null;
  let trailer: DumpCounts | null = null;
  const records: DumpRecord[] = [];
  const counts = emptyCounts();
  let n = 0;
  try {
    for await (const text of lines) {
      n += 1;
      if (text.trim() === '') continue;
      let obj: Record<string, unknown>;
      try {
        obj = JSON.parse(text) as Record<string, unknown>;
      } catch (err) {
        fail(path, n, `not JSON (${(err as Error).message})`);
      }
      if (header === null) {
        if (obj.format !== DUMP_FORMAT || obj.version !== DUMP_VERSION) {
          fail(path, n, `not an ${DUMP_FORMAT} v${DUMP_VERSION} file`);
        }
        header = obj as unknown as DumpHeader;
        continue;
      }
      if (trailer) fail(path, n, 'data after the end record');
      if (obj.t === 'end') {
        trailer = obj.counts as DumpCounts;
        continue;
      }
      if (
        !(typeof obj.t === 'string' && obj.t in countKey) ||
        typeof obj.row !== 'object' ||
        obj.row === null
      ) {
        fail(path, n, 'unknown record');
      }
      checkRecordJson(path, n, obj);
      counts[countKey[obj.t as DumpRecord['t']]] += 1;
      records.push(obj as unknown as DumpRecord);
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT')
      throw new InvalidInputError(`${path} does not exist`, { path });
    throw err;
  }
  if (!header) fail(path, n, 'empty file');
  if (!trailer) fail(path, n, 'truncated: no end record');
  for (const k of Object.keys(counts) as Array<keyof DumpCounts>) {
    // A dump written before limits, or the World's tables, were dumped has no count of them (and no records).
    const said = trailer[k] ?? (LATER_COUNTS.has(k) ? 0 : undefined);
    if (counts[k] !== said)
      fail(path, n, `truncated or edited: ${counts[k]} ${k}, the end record says ${said}`);
  }
  return { header, records, counts };
}

/** The first problems, for an error message. */
function summarize(problems: IntegrityProblem[], count: number): string {
  const shown = problems.slice(0, 3).map((p) => p.message);
  return `${shown.join('; ')}${count > shown.length ? ` (and ${count - shown.length} more)` : ''}`;
}

/** A dump read from its file and found to pass verification (see `checkDump`). */
export interface CheckedDump {
  path: string;
  header: DumpHeader;
  records: DumpRecord[];
  counts: DumpCounts;
}

/**
 * Reads a dump and checks it as verify checks an instance (the event chain, documents and history against
 * their events, work items against the fold of theirs, and the counts against the trailer), touching no
 * store: a dump that fails is INTEGRITY_VIOLATION naming the first problems; bad framing or JSON the store
 * refuses is INVALID_INPUT naming the line.
 */
export async function checkDump(
  path: string,
  /** Called every 10,000 events checked, with the count so far. */
  onProgress?: (events: number) => void,
): Promise<CheckedDump> {
  const { header, records, counts } = await readDump(path);
  const before = await checkRecords(records, onProgress ? { onProgress } : {});
  if (!before.ok) {
    throw new IntegrityError(
      `${path} fails verification, nothing was imported: ${summarize(before.problems, before.problem_count)}`,
      { path, problems: before.problems.slice(0, 20), problem_count: before.problem_count },
    );
  }
  return { path, header, records, counts };
}

/**
 * Loads a dump into an empty instance (any backend). Before writing anything the dump is checked
 * (`checkDump`); a dump that fails is refused and nothing is written. After loading, the target is
 * verified as read back.
 */
export async function importInstance(
  backend: StoreBackend,
  events: EventLog,
  source: string | CheckedDump,
  /** Called every 10,000 events verified after loading, with the count so far. */
  onProgress?: (events: number) => void,
): Promise<
  DumpCounts & { verified: true; head: string | null; anchor: string | null; source_backend: string }
> {
  if (!backend.load) throw new InvalidInputError(`the ${backend.name} backend cannot import instances yet`);
  const { path, header, records, counts } = typeof source === 'string' ? await checkDump(source) : source;
  await backend.load(records);
  const v = await events.verify(onProgress ? { onProgress } : {});
  if (!v.ok || v.events !== counts.events) {
    throw new IntegrityError(
      `imported, but the target fails verification: ${v.ok ? `${v.events} events, expected ${counts.events}` : summarize(v.problems, v.problem_count)}`,
      { path, problems: v.problems.slice(0, 20), problem_count: v.problem_count },
    );
  }
  return {
    ...counts,
    verified: true,
    head: v.head,
    anchor: v.anchor,
    source_backend: header.source_backend,
  };
}
