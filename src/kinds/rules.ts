// Small helpers shared by kinds: JSON pointers, deep equality, status-transition tables, per-role field
// write permissions, append-only lists, overrides and locks. Every refusal is a typed error whose details
// name the JSON pointer of the offending field and the rule that refused it.

import { escapeSegment, getPath, toPointer as toJsonPointer, unescapeSegment } from '../core/json.js';
import type { CommitContext } from '../core/kind.js';
import { isoTime } from '../core/time.js';
import type { Json, JsonObject } from '../core/types.js';
import {
  InvalidTransitionError,
  PermissionDeniedError,
  StateConflictError,
  ValidationFailedError,
} from '../errors.js';

// ---------------------------------------------------------------------------------------------------
// JSON values and pointers

export function isPlainObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Structural equality of JSON values; key order does not matter, array order does. */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== typeof b || a === null || b === null || typeof a !== 'object') return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((x, i) => deepEqual(x, b[i]));
  }
  const ao = a as Record<string, unknown>;
  const bo = b as Record<string, unknown>;
  const ak = Object.keys(ao).filter((k) => ao[k] !== undefined);
  const bk = Object.keys(bo).filter((k) => bo[k] !== undefined);
  if (ak.length !== bk.length) return false;
  return ak.every((k) => Object.hasOwn(bo, k) && deepEqual(ao[k], bo[k]));
}

/** Builds a JSON pointer from raw segments: `ptr('facts', 2, 'evidence')` → `/facts/2/evidence`. */
export function ptr(...segments: Array<string | number>): string {
  return segments.length === 0 ? '' : toJsonPointer(segments);
}

/** Splits a JSON pointer into unescaped segments (`''` → `[]`). */
export function splitPointer(pointer: string): string[] {
  if (pointer === '' || pointer === '/') return [];
  return pointer.replace(/^\//, '').split('/').map(unescapeSegment);
}

/**
 * Normalizes a field path to a JSON pointer: pointers (`/agents/active`) pass through, dotted paths
 * (`agents.active`, as the Grid permission table writes them) are converted.
 */
export function toPointer(path: string): string {
  if (path === '' || path.startsWith('/')) return path;
  return ptr(...path.split('.'));
}

/** The value at `pointer`, or undefined. */
export function getAtPointer(doc: Json | undefined, pointer: string): Json | undefined {
  if (doc === undefined) return undefined;
  return pointer === '' ? doc : getPath(doc, pointer.startsWith('/') ? pointer : `/${pointer}`);
}

/** True if `pointer` is `prefix` or lies inside it (segment-wise: `/ab` is not inside `/a`). */
export function isUnder(pointer: string, prefix: string): boolean {
  if (prefix === '') return true;
  return pointer === prefix || pointer.startsWith(`${prefix}/`);
}

/**
 * The JSON pointers where `prev` and `next` differ. Objects are compared key by key (a missing or null
 * side counts as empty when the other side is an object); arrays and scalars are leaves, so a changed
 * list is reported once, at the list.
 */
export function changedPaths(prev: Json | undefined, next: Json | undefined, base = ''): string[] {
  if (deepEqual(prev, next)) return [];
  const objOrNone = (v: Json | undefined) => v === undefined || v === null || isPlainObject(v);
  if ((isPlainObject(prev) || isPlainObject(next)) && objOrNone(prev) && objOrNone(next)) {
    const a: JsonObject = isPlainObject(prev) ? prev : {};
    const b: JsonObject = isPlainObject(next) ? next : {};
    const out: string[] = [];
    for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) {
      out.push(...changedPaths(a[k], b[k], `${base}/${escapeSegment(k)}`));
    }
    // null ↔ {} differs without any key differing: report the object itself.
    return out.length > 0 ? out : [base];
  }
  return [base];
}

// ---------------------------------------------------------------------------------------------------
// Refusals

/** Throws VALIDATION_FAILED naming the field and the rule. */
export function fail(
  pointer: string,
  rule: string,
  message: string,
  extra: Record<string, unknown> = {},
): never {
  throw new ValidationFailedError(message, { pointer, rule, ...extra });
}

/** True if the write carries an explicit override of `rule` (ctx.override.rules). */
export function hasOverride(ctx: Pick<CommitContext, 'override'>, rule: string): boolean {
  return ctx.override?.rules.includes(rule) ?? false;
}

/** Epoch ms of an ISO-8601 time, or VALIDATION_FAILED naming the field. */
export function parseTime(value: unknown, pointer: string, rule: string): number {
  const t = typeof value === 'string' ? Date.parse(value) : Number.NaN;
  if (Number.isNaN(t)) fail(pointer, rule, `${pointer} must be an ISO-8601 date-time`);
  return t;
}

// ---------------------------------------------------------------------------------------------------
// Times (ISO-8601 strings)

/** Epoch ms of a time the schema admitted; VALIDATION_FAILED (`iso-8601`) for a date that does not exist. */
export function isoMs(value: string, pointer: string): number {
  const t = Date.parse(value);
  if (Number.isNaN(t))
    fail(pointer, 'iso-8601', `${pointer}: ${JSON.stringify(value)} is not a valid date-time`);
  return t;
}

/**
 * Refuses (`updated-at-latest`) a last-change time, `updated` at `pointer`, older than one of the document's
 * `times` (each with its pointer); `what` says what it must be the last of (`the last state update`).
 */
export function checkUpdatedLatest(
  pointer: string,
  updated: string,
  times: ReadonlyArray<readonly [string, string]>,
  what: string,
): void {
  const all = times.map(([p, v]) => [p, isoMs(v, p)] as const);
  const last = isoMs(updated, pointer);
  for (const [p, t] of all) {
    if (t > last) {
      fail(pointer, 'updated-at-latest', `${pointer} (${updated}) is older than ${p}: it must be ${what}`, {
        other: p,
      });
    }
  }
}

/**
 * Keeps a document's last-change time (`field`) current: a change to the rest of the body that does not
 * advance it is stamped with the time of the write, or with the latest of the body's `times` when that is
 * later (never behind what the body records, even with a writer's clock behind the data). A time that does
 * not parse is left as it is, for the schema or checkUpdatedLatest to refuse.
 */
export function touchUpdated(
  next: object,
  prev: object | null,
  field: string,
  times: ReadonlyArray<readonly [string, string]>,
  now: number,
): void {
  if (!prev) return;
  const { [field]: updated, ...rest } = next as Record<string, unknown>;
  const { [field]: before, ...was } = prev as Record<string, unknown>;
  if (deepEqual(rest, was)) return;
  const t = Date.parse(updated as string);
  if (Number.isNaN(t) || t > Date.parse(before as string)) return;
  const latest = times.reduce((m, [, v]) => Math.max(m, Date.parse(v) || 0), t);
  (next as Record<string, unknown>)[field] = isoTime(Math.max(now, latest));
}

// ---------------------------------------------------------------------------------------------------
// Status transitions

/** For each status, the statuses it may move to. A status with no entries is final. */
export type TransitionTable = Readonly<Record<string, readonly string[]>>;

/** Where `checkTransition` finds the status, and how it names a refusal. */
export interface TransitionOptions {
  /** JSON pointer of the status field, e.g. `/status` or `/ambiguities/3/status`. */
  pointer: string;
  /** Rule name reported on refusal. @default 'status-transition' */
  rule?: string;
  /** What is changing status, for the message (e.g. `run`, `ambiguity q1`). */
  subject?: string;
  /** Statuses a new record (from = null) may start in. @default any status of the table */
  initial?: readonly string[];
}

/** True if `from → to` is allowed: staying put always is; a new record may start in `initial`. */
export function canMove(
  table: TransitionTable,
  from: string | null,
  to: string,
  initial?: readonly string[],
): boolean {
  if (!Object.hasOwn(table, to)) return false;
  if (from === null) return initial ? initial.includes(to) : true;
  if (from === to) return true;
  return table[from]?.includes(to) ?? false;
}

/** Throws INVALID_TRANSITION (details: from, to, pointer, rule) unless `from → to` is in the table. */
export function checkTransition(
  table: TransitionTable,
  from: string | null,
  to: string,
  opts: TransitionOptions,
): void {
  if (canMove(table, from, to, opts.initial)) return;
  const subject = opts.subject ?? 'status';
  const allowed = from === null ? (opts.initial ?? Object.keys(table)) : (table[from] ?? []);
  const msg =
    from === null
      ? `${subject} cannot start as ${JSON.stringify(to)}; allowed: ${allowed.join(', ') || 'none'}`
      : `${subject} cannot move from ${JSON.stringify(from)} to ${JSON.stringify(to)}; allowed: ${allowed.join(', ') || `none (${from} is final)`}`;
  throw new InvalidTransitionError(msg, {
    from: from ?? undefined,
    to,
    pointer: opts.pointer,
    rule: opts.rule ?? 'status-transition',
  });
}

// ---------------------------------------------------------------------------------------------------
// Per-role field write permissions

/**
 * Which fields each role may write: `'*'` for all, or a list of paths (JSON pointers or dotted paths).
 * A path allows writes to itself and everything inside it.
 * @example { mc: '*', executor: ['position', 'agents.active', 'warnings'], scout: [] }
 */
export type PermissionMatrix = Readonly<Record<string, '*' | readonly string[]>>;

/** Who writes and what each role may write, for `checkFieldPermissions`. */
export interface FieldPermissionOptions {
  /** The writer's role; null (no role) may write nothing. */
  role: string | null;
  /** What each role may write. */
  matrix: PermissionMatrix;
  /** Paths no role needs permission for (e.g. fields the core or the kind maintains). */
  ignore?: readonly string[];
  /** Rule name reported on refusal. @default 'field-permission' */
  rule?: string;
}

/** The changed paths `role` may not write (empty if the write is allowed). */
export function forbiddenChanges(
  prev: JsonObject | null,
  next: JsonObject,
  opts: FieldPermissionOptions,
): string[] {
  const grant = opts.role === null ? undefined : opts.matrix[opts.role];
  if (grant === '*') return [];
  const allowed = (grant ?? []).map(toPointer);
  const ignored = (opts.ignore ?? []).map(toPointer);
  return changedPaths(prev ?? {}, next).filter(
    (p) => !ignored.some((i) => isUnder(p, i)) && !allowed.some((a) => isUnder(p, a)),
  );
}

/**
 * Compares `prev` and `next` field by field and throws PERMISSION_DENIED (details: pointer, rule, role)
 * at the first changed field the role may not write. A role missing from the matrix (or null) may write
 * nothing.
 */
export function checkFieldPermissions(
  prev: JsonObject | null,
  next: JsonObject,
  opts: FieldPermissionOptions,
): void {
  const bad = forbiddenChanges(prev, next, opts);
  const first = bad[0];
  if (first === undefined) return;
  const who = opts.role === null ? 'a writer without a role' : `role ${JSON.stringify(opts.role)}`;
  throw new PermissionDeniedError(`${who} may not write ${first || 'the document'}`, {
    pointer: first || '/',
    rule: opts.rule ?? 'field-permission',
    role: opts.role,
    fields: bad,
  });
}

// ---------------------------------------------------------------------------------------------------
// Lists of records with ids

type Item = JsonObject;

function keyOf(item: Item, key: string): string | undefined {
  const v = item[key];
  return typeof v === 'string' || typeof v === 'number' ? String(v) : undefined;
}

/** Map from id to [index, item]. */
export function indexBy(
  items: readonly Item[] | undefined,
  key = 'id',
): Map<string, { index: number; item: Item }> {
  const m = new Map<string, { index: number; item: Item }>();
  (items ?? []).forEach((item, index) => {
    const k = keyOf(item, key);
    if (k !== undefined && !m.has(k)) m.set(k, { index, item });
  });
  return m;
}

/** VALIDATION_FAILED (rule `unique-ids` by default) if two items of the list share a key. */
export function checkUniqueIds(
  items: readonly Item[] | undefined,
  pointer: string,
  key = 'id',
  rule = 'unique-ids',
): void {
  const seen = new Set<string>();
  (items ?? []).forEach((item, i) => {
    const k = keyOf(item, key);
    if (k === undefined) return;
    if (seen.has(k))
      fail(
        `${pointer}/${i}/${escapeSegment(key)}`,
        rule,
        `${pointer}: duplicate ${key} ${JSON.stringify(k)}`,
      );
    seen.add(k);
  });
}

/** How `checkAppendOnly` matches the items of the two lists, and which changes it allows. */
export interface AppendOnlyOptions {
  /** The field that identifies an item in both lists. @default 'id' */
  key?: string;
  /** Allows some changes to an existing item (e.g. adding a retraction); otherwise items are frozen. */
  mayChange?: (prev: Item, next: Item) => boolean;
  /** When false, only removal is refused; changes are allowed. @default true */
  frozen?: boolean;
}

/**
 * Every item of `prev` must still be in `next` (matched by key), unchanged unless `mayChange` allows it.
 * Refusals are VALIDATION_FAILED naming `rule`; the pointer is the list (removal) or the changed item.
 */
export function checkAppendOnly(
  prev: readonly Item[] | undefined,
  next: readonly Item[] | undefined,
  pointer: string,
  rule: string,
  opts: AppendOnlyOptions = {},
): void {
  const key = opts.key ?? 'id';
  const after = indexBy(next, key);
  for (const item of prev ?? []) {
    const k = keyOf(item, key);
    if (k === undefined) continue;
    const now = after.get(k);
    if (!now) fail(pointer, rule, `${pointer}: ${key} ${JSON.stringify(k)} cannot be removed`, { id: k });
    if (opts.frozen === false || deepEqual(item, now.item)) continue;
    if (opts.mayChange?.(item, now.item)) continue;
    fail(
      `${pointer}/${now.index}`,
      rule,
      `${pointer}: ${key} ${JSON.stringify(k)} cannot be changed once written`,
      {
        id: k,
      },
    );
  }
}

// ---------------------------------------------------------------------------------------------------
// Locks

/** A lock on a named resource, held by an actor until `expires_at` (ISO-8601). */
export interface LockRecord {
  resource: string;
  holder: string;
  acquired_at: string;
  expires_at: string;
}

/**
 * Checks lock changes between two versions against the writer (`ctx.actor`) and the time (`ctx.now`):
 * - acquire (new resource) or take over: only for yourself (PERMISSION_DENIED, `lock-holder`); taking a
 *   lock another actor holds and that has not expired is STATE_CONFLICT (`lock-held`): the resource is
 *   busy, retry after `expires_at`, as with a compare-and-swap conflict;
 * - renew/change a lock: only its holder (PERMISSION_DENIED, `lock-holder`), unless it has expired
 *   (then it is a takeover);
 * - release (removed): only the holder, unless expired (PERMISSION_DENIED, `lock-release`);
 * - expiry must not precede acquisition (VALIDATION_FAILED, `lock-expiry`); resources unique.
 * Unchanged locks are not checked: locks guard resources, not other fields of the document.
 */
export function checkLocks(
  prev: readonly LockRecord[] | undefined,
  next: readonly LockRecord[] | undefined,
  ctx: Pick<CommitContext, 'actor' | 'now'>,
  pointer = '/locks',
): void {
  const nextItems = (next ?? []) as unknown as Item[];
  checkUniqueIds(nextItems, pointer, 'resource', 'lock-unique');
  const before = indexBy((prev ?? []) as unknown as Item[], 'resource');
  const expired = (l: LockRecord, at: string) => parseTime(l.expires_at, at, 'lock-expiry') <= ctx.now;

  (next ?? []).forEach((lock, i) => {
    const at = `${pointer}/${i}`;
    const acquired = parseTime(lock.acquired_at, `${at}/acquired_at`, 'lock-expiry');
    if (parseTime(lock.expires_at, `${at}/expires_at`, 'lock-expiry') < acquired) {
      fail(`${at}/expires_at`, 'lock-expiry', `lock ${lock.resource}: expires_at precedes acquired_at`);
    }
    const old = before.get(lock.resource)?.item as LockRecord | undefined;
    if (old && deepEqual(old, lock)) return;
    if (old && !expired(old, at)) {
      if (old.holder !== lock.holder) {
        throw new StateConflictError(
          `lock ${lock.resource} is held by ${old.holder} until ${old.expires_at}; ${lock.holder} cannot take it`,
          {
            pointer: `${at}/holder`,
            rule: 'lock-held',
            resource: lock.resource,
            holder: old.holder,
            expires_at: old.expires_at,
          },
        );
      }
      if (old.holder !== ctx.actor) {
        throw new PermissionDeniedError(
          `lock ${lock.resource} is held by ${old.holder}; only its holder may renew it`,
          {
            pointer: at,
            rule: 'lock-holder',
            resource: lock.resource,
            holder: old.holder,
          },
        );
      }
      return;
    }
    // A new lock, or a takeover of an expired one: the writer takes it for itself.
    if (lock.holder !== ctx.actor) {
      throw new PermissionDeniedError(
        `${ctx.actor} cannot acquire lock ${lock.resource} for ${lock.holder}`,
        {
          pointer: `${at}/holder`,
          rule: 'lock-holder',
          resource: lock.resource,
        },
      );
    }
  });

  const after = indexBy(nextItems, 'resource');
  for (const [resource, { item }] of before) {
    if (after.has(resource)) continue;
    const old = item as unknown as LockRecord;
    if (old.holder !== ctx.actor && !expired(old, pointer)) {
      throw new PermissionDeniedError(`${ctx.actor} cannot release lock ${resource}: held by ${old.holder}`, {
        pointer,
        rule: 'lock-release',
        resource,
        holder: old.holder,
        expires_at: old.expires_at,
      });
    }
  }
}

// ---------------------------------------------------------------------------------------------------
// Schema annotations

/**
 * The `x-rule` annotation of the schema node that produced an ajv error (its `schemaPath` minus the
 * failing keyword), if any — so a schema refusal can name a kind's rule instead of `schema.<keyword>`.
 * @example schemaRule(kind.schema, '#/properties/model/not') → 'model-changes-are-events'
 */
export function schemaRule(schema: Record<string, unknown>, schemaPath: string): string | undefined {
  const segs = schemaPath.replace(/^#\/?/, '').split('/').filter(Boolean).map(unescapeSegment);
  segs.pop();
  let node: unknown = schema;
  for (const s of segs)
    node = isPlainObject(node) || Array.isArray(node) ? (node as Record<string, unknown>)[s] : undefined;
  const rule = isPlainObject(node) ? node['x-rule'] : undefined;
  return typeof rule === 'string' ? rule : undefined;
}
