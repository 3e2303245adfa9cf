// A Workflow SDK World's tables against the hash chain. Every `workflow_event` (codecs/workflow-events/), in
// log order, is replayed through the World's own state machine (decideCreateEvent, codecs/workflow-events/
// rules.ts) with the entities folded so far standing for what events.create read: the fold is the runs, steps,
// live hooks and waits the World's rows must hold, and each row is compared with it. An event the rules would not have
// recorded at its place in the log is reported too. The IntegrityChecker (verify.ts) loads this module only
// when the records hold World events or rows: the rules need @workflow/world, an optional peer dependency.
import type { Hook, Step, Wait, WorkflowRun } from '@workflow/world';
import type { StoredEvent, WorkflowRowRecord } from '../backend.js';
import { readWorkflowEvent, toTagged } from '../codecs/workflow-events/codec.js';
import type { CreateEventDecision, HookOwner } from '../codecs/workflow-events/decision.js';
import { hookRow, runRow, stepRow, waitRow } from '../codecs/workflow-events/rows.js';
import { decideCreateEvent } from '../codecs/workflow-events/rules.js';
import { contentHash } from '../json.js';
import { toIso } from '../time.js';
import type { IntegrityProblem, IntegrityProblemKind, Json, JsonObject } from '../types.js';

type Table = 'workflow_runs' | 'workflow_steps' | 'workflow_hooks' | 'workflow_waits';

/** How the fold reports, in the checker's words (the report and differs of problems.ts). */
export interface WorkflowCheckReporter {
  /** Reports one problem. */
  report(
    problem: IntegrityProblemKind,
    table: IntegrityProblem['table'],
    key: string,
    message: string,
    extra?: Pick<IntegrityProblem, 'field' | 'expected' | 'actual'>,
  ): void;
  /** Reports `field` of a row when it differs from what the log says. */
  differs(
    table: Table,
    key: string,
    field: string,
    expected: Json | undefined,
    actual: Json | undefined,
  ): void;
}

/**
 * The fields of an entity that carry the SDK's payloads. The rules pass them through untouched, so the fold
 * keeps only their hashes, and the rows' payloads are compared by hash.
 */
const PAYLOADS: ReadonlySet<string> = new Set(['input', 'output', 'error', 'metadata']);

/** A hook's owner fields come from the World's configuration, which no event records: not checked. */
const UNRECORDED_OWNER: HookOwner = { ownerId: '', projectId: '', environment: '' };
const OWNER_FIELDS: ReadonlySet<string> = new Set(Object.keys(UNRECORDED_OWNER));

/** A payload as the fold keeps it: the content hash of its tagged JSON. */
class Digest {
  constructor(readonly hash: string) {}
}

/** `entity` with each payload kept by its hash. */
function digested<T extends object>(entity: T): T {
  const out = { ...entity } as Record<string, unknown>;
  for (const k of PAYLOADS) {
    const v = out[k];
    if (v !== undefined && !(v instanceof Digest)) out[k] = new Digest(contentHash(toTagged(v)));
  }
  return out as T;
}

const hashed = (hash: string): string => `sha256:${hash}`;

/** A folded entity as verify compares it: its tagged JSON, each payload as `sha256:<hash>`. */
function foldForm(entity: object): JsonObject {
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(entity)) {
    if (v === undefined) continue;
    out[k] = v instanceof Digest ? hashed(v.hash) : toTagged(v);
  }
  return out;
}

/** A row's body in the same form, or null when it is no entity's JSON. */
function rowForm(body: unknown): JsonObject | null {
  let json: unknown;
  try {
    json = typeof body === 'string' ? JSON.parse(body) : undefined;
  } catch {
    return null;
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) return null;
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(json as JsonObject))
    out[k] = PAYLOADS.has(k) ? hashed(contentHash(v)) : v;
  return out;
}

/** A row as the fold keeps it until the end: its columns, and its body in compared form. */
interface KeptRow {
  key: string;
  columns: Record<string, Json>;
  form: JsonObject | null;
}

/** What the fold says a table's row must be. */
interface ExpectedRow {
  columns: Record<string, Json>;
  form: JsonObject;
}

const TABLE_OF = {
  workflow_run: 'workflow_runs',
  workflow_step: 'workflow_steps',
  workflow_hook: 'workflow_hooks',
  workflow_wait: 'workflow_waits',
} as const satisfies Record<WorkflowRowRecord['t'], Table>;

/** The key verify names a World row by: the run or hook id; `runId/stepId`; `runId/correlationId`. */
function rowKey(r: WorkflowRowRecord): string {
  switch (r.t) {
    case 'workflow_run':
      return String(r.row.run_id);
    case 'workflow_step':
      return `${r.row.run_id}/${r.row.step_id}`;
    case 'workflow_hook':
      return String(r.row.hook_id);
    case 'workflow_wait':
      return `${r.row.run_id}/${r.row.correlation_id}`;
  }
}

/** A row's columns besides its body. */
function columnsOf(row: object): Record<string, Json> {
  const { body: _body, ...columns } = row as Record<string, Json>;
  return columns;
}

const byRun = <T>(map: Map<string, Map<string, T>>, runId: string): Map<string, T> => {
  let m = map.get(runId);
  if (!m) {
    m = new Map();
    map.set(runId, m);
  }
  return m;
};

const field = (data: unknown, name: string): unknown =>
  typeof data === 'object' && data !== null ? (data as Record<string, unknown>)[name] : undefined;

/**
 * The fold of a World's events and the check of its rows. Feed it the `workflow_event` events in position
 * order (`event`) and the rows in any order (`row`), then call `finish`.
 */
export class WorkflowFold {
  readonly #r: WorkflowCheckReporter;
  readonly #runs = new Map<string, WorkflowRun>();
  /** Steps by run, then step id. */
  readonly #steps = new Map<string, Map<string, Step>>();
  /** Live hooks by id (hook ids are unique in the instance). */
  readonly #hooks = new Map<string, Hook>();
  /** The live hook holding each token. */
  readonly #tokens = new Map<string, string>();
  /** Waits by run, then correlationId. */
  readonly #waits = new Map<string, Map<string, Wait>>();
  /** `runId` NUL `correlationId` of every attr_set in the log. */
  readonly #attrSets = new Set<string>();
  readonly #rows = new Map<Table, KeptRow[]>();

  constructor(reporter: WorkflowCheckReporter) {
    this.#r = reporter;
  }

  /** One `workflow_event` event (`data` its parsed data), in position order. */
  event(e: StoredEvent, data: JsonObject): void {
    const at = `#${e.position}`;
    const w = readWorkflowEvent({ ...e, data, created_at: toIso(e.created_at) });
    if (w === null) {
      this.#r.report(
        'event_malformed',
        'events',
        at,
        `event #${e.position} (${e.type}) is no World event of its stream ${e.stream}`,
      );
      return;
    }
    const { runId, correlationId: cid } = w;
    const what = `event #${e.position} (${w.eventType} of World run ${runId})`;
    // A hook_conflict is what a hook_created became when another live hook held its token: replayed as that.
    const conflict = w.eventType === 'hook_conflict';
    const request: Record<string, unknown> = {
      eventType: conflict ? 'hook_created' : w.eventType,
      ...(cid === undefined ? {} : { correlationId: cid }),
      ...(w.eventData === undefined
        ? {}
        : { eventData: conflict ? { token: field(w.eventData, 'token') } : w.eventData }),
      ...(w.specVersion === undefined ? {} : { specVersion: w.specVersion }),
    };
    const type = request.eventType as string;
    const token = type === 'hook_created' ? field(request.eventData, 'token') : undefined;
    const holder = typeof token === 'string' ? this.#hooks.get(this.#tokens.get(token) ?? '') : undefined;
    const attrKey = `${runId}\u0000${cid}`;
    let d: CreateEventDecision;
    try {
      d = decideCreateEvent({
        runId,
        request,
        now: e.created_at,
        run: this.#runs.get(runId) ?? null,
        step:
          cid !== undefined && type.startsWith('step_') ? (this.#steps.get(runId)?.get(cid) ?? null) : null,
        hook: cid !== undefined && type.startsWith('hook_') ? (this.#hooks.get(cid) ?? null) : null,
        wait:
          cid !== undefined && type.startsWith('wait_') ? (this.#waits.get(runId)?.get(cid) ?? null) : null,
        tokenHolder: holder ? { runId: holder.runId, hookId: holder.hookId } : null,
        attrSetRecorded: type === 'attr_set' && cid !== undefined && this.#attrSets.has(attrKey),
        hookOwner: UNRECORDED_OWNER,
        replay: true,
      });
    } catch (err) {
      this.#r.report(
        'event_malformed',
        'events',
        at,
        `${what} is one the World's rules refuse after the events before it: ${(err as Error).message}`,
      );
      return;
    } finally {
      if (w.eventType === 'attr_set' && cid !== undefined) this.#attrSets.add(attrKey);
    }
    const [recorded, ...more] = d.events;
    const same =
      recorded !== undefined &&
      more.length === 0 &&
      recorded.eventType === w.eventType &&
      (!conflict || field(recorded.eventData, 'conflictingRunId') === field(w.eventData, 'conflictingRunId'));
    if (!same) {
      const says = d.events.map((x) => x.eventType).join(', ') || 'nothing';
      this.#r.report(
        'event_malformed',
        'events',
        at,
        `${what} is not what the World's rules record for it after the events before it (they record ${says}${conflict ? ` naming run ${String(field(recorded?.eventData, 'conflictingRunId') ?? 'none')}` : ''})`,
      );
      return;
    }
    this.#apply(runId, cid, d);
  }

  #apply(runId: string, cid: string | undefined, d: CreateEventDecision): void {
    if (d.run) this.#runs.set(runId, digested(d.run.value));
    if (d.step) byRun(this.#steps, runId).set(d.step.value.stepId, digested(d.step.value));
    if (d.hook) {
      const hook = digested(d.hook.value);
      this.#hooks.set(hook.hookId, hook);
      this.#tokens.set(hook.token, hook.hookId);
    }
    // A wait's row is keyed by its run and its events' correlationId, as events.create writes it.
    if (d.wait && cid !== undefined) byRun(this.#waits, runId).set(cid, digested(d.wait.value));
    for (const r of d.removals) {
      if (r.kind === 'hook') this.#dropHook(r.hookId);
      else if (r.kind === 'hooks-of-run') {
        for (const h of [...this.#hooks.values()]) if (h.runId === r.runId) this.#dropHook(h.hookId);
      } else this.#waits.delete(r.runId);
    }
  }

  #dropHook(hookId: string): void {
    const hook = this.#hooks.get(hookId);
    if (!hook) return;
    this.#hooks.delete(hookId);
    if (this.#tokens.get(hook.token) === hookId) this.#tokens.delete(hook.token);
  }

  /** One row of the World's tables, in any order. */
  row(r: WorkflowRowRecord): void {
    const table = TABLE_OF[r.t];
    let kept = this.#rows.get(table);
    if (!kept) {
      kept = [];
      this.#rows.set(table, kept);
    }
    kept.push({ key: rowKey(r), columns: columnsOf(r.row), form: rowForm(r.row.body) });
  }

  /** Compares every row with the fold; returns how many run rows were checked. */
  finish(): number {
    const runs = new Map<string, ExpectedRow>();
    for (const [id, run] of this.#runs) runs.set(id, expected(runRow(run), run));
    const steps = new Map<string, ExpectedRow>();
    for (const [runId, m] of this.#steps) {
      for (const [id, step] of m) steps.set(`${runId}/${id}`, expected(stepRow(step), step));
    }
    const hooks = new Map<string, ExpectedRow>();
    for (const [id, hook] of this.#hooks) hooks.set(id, expected(hookRow(hook), hook));
    const waits = new Map<string, ExpectedRow>();
    for (const [runId, m] of this.#waits) {
      for (const [cid, wait] of m) waits.set(`${runId}/${cid}`, expected(waitRow(wait, cid), wait));
    }
    this.#compare('workflow_runs', runs, 'no workflow_event creates this run');
    this.#compare('workflow_steps', steps, 'no workflow_event of its run creates this step');
    this.#compare(
      'workflow_hooks',
      hooks,
      'no workflow_event creates this hook, or a hook_disposed or the end of its run removed it',
    );
    this.#compare(
      'workflow_waits',
      waits,
      'no workflow_event of its run creates this wait, or the end of its run removed it',
    );
    return this.#rows.get('workflow_runs')?.length ?? 0;
  }

  #compare(table: Table, want: Map<string, ExpectedRow>, orphan: string): void {
    const seen = new Set<string>();
    for (const row of this.#rows.get(table) ?? []) {
      seen.add(row.key);
      const x = want.get(row.key);
      if (!x) {
        this.#r.report('event_missing', table, row.key, `${table} ${row.key}: ${orphan}`);
        continue;
      }
      for (const [c, v] of Object.entries(x.columns)) {
        const time = c.endsWith('_at');
        this.#r.differs(
          table,
          row.key,
          c,
          time ? shownTime(v) : v,
          time ? shownTime(row.columns[c]) : row.columns[c],
        );
      }
      if (row.form === null) {
        this.#r.report('row_differs', table, row.key, `${table} ${row.key}: body is not an entity's JSON`, {
          field: 'body',
        });
        continue;
      }
      for (const k of new Set([...Object.keys(x.form), ...Object.keys(row.form)])) {
        if (table === 'workflow_hooks' && OWNER_FIELDS.has(k)) continue;
        const want = x.form[k];
        const got = row.form[k];
        if (PAYLOADS.has(k) && want !== undefined && got !== undefined && want !== got) {
          // Payloads are compared by hash (sha256:<hex>); the message shows the start of each.
          this.#r.report(
            'row_differs',
            table,
            row.key,
            `${table} ${row.key}: body.${k} hashes to ${String(got).slice(7, 23)}…, the log says ${String(want).slice(7, 23)}…`,
            { field: `body.${k}`, expected: want, actual: got },
          );
        } else this.#r.differs(table, row.key, `body.${k}`, want, got);
      }
    }
    for (const key of want.keys()) {
      if (!seen.has(key))
        this.#r.report('row_missing', table, key, `${table} ${key} is in the log but has no row`);
    }
  }
}

function expected(row: object, entity: object): ExpectedRow {
  return { columns: columnsOf(row), form: foldForm(entity) };
}

/** A time column as messages show it (ISO-8601), anything else as it is. */
const shownTime = (v: Json | undefined): Json | undefined =>
  typeof v === 'number' && Number.isFinite(v) ? toIso(v) : v;
