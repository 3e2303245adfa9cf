// The integrity checker: from every record of an instance (as a backend's dump yields them) it checks the
// event hash chain (chain.ts), each document and kept history entry against its state_committed events
// (documents.ts), each work item against the fold of its events (items.ts), each limit against its events
// (limits.ts), a Workflow World's runs, steps, hooks and waits against the fold of its events (workflow.ts,
// loaded when there are any), and the rows that name event positions against the real head. A pure function
// of the records, so verify (on every backend) and instance import judge alike. This module routes each
// record to its check and gives the verdict; every check reports into one list (problems.ts).
import type { CounterRecord, DumpRecord, StoredEvent } from '../backend.js';
import { LIMIT_EVENT_CODECS } from '../codecs/limits.js';
import { RUN_RECORD_TYPES } from '../codecs/run-records.js';
import { WORKFLOW_EVENT } from '../codecs/workflow-events/codec.js';
import type { VerifyResult } from '../types.js';
import { ITEM_TYPE_OF_BATCH } from '../work/batches.js';
import { ChainCheck } from './chain.js';
import { DocumentCheck } from './documents.js';
import type { HeadAnchor } from './head.js';
import { ITEM_EVENTS, ItemCheck } from './items.js';
import { LimitCheck } from './limits.js';
import { isObject, Problems } from './problems.js';
import type { WorkflowFold } from './workflow.js';

/** Everything a dump or a verify snapshot yields. */
export type InstanceRecord = DumpRecord | CounterRecord;

/** Whether `r` belongs to a Workflow SDK World (its events or its rows), which only the World's fold checks. */
const isWorkflowRecord = (r: InstanceRecord): boolean =>
  r.t === 'event' ? r.row.type === WORKFLOW_EVENT : r.t.startsWith('workflow_') && r.t !== 'workflow_chunk';

/** What an `IntegrityChecker` checks besides the hash chain, and how many problems it keeps. */
export interface IntegrityOptions {
  /** A head seen earlier: the log must still hold that event unchanged. */
  head?: HeadAnchor | null;
  /** The records include the mutable rows (work items, documents, history): check them against the log. @default true */
  rows?: boolean;
  /** Problems kept in the result (`problem_count` counts all). @default 1000 */
  maxProblems?: number;
}

/**
 * Checks the records of one instance. Feed it with `add` (events in position order; the other records in
 * any order), then call `finish`.
 *
 * What it cannot see: a lease's expiry and `updated_at` (heartbeats write no event), a work item's payload,
 * max_attempts and not_before when its enqueued event predates `payload_hash`, a history entry's
 * provenance, override and request hash, a document's `forked_from`, history removed from the oldest end
 * (retention does that), a World hook's owner fields, and a World's stream chunks (in no event). A World's
 * tables are checked only once `loadWorkflowCheck` has loaded their check. A log rewritten from its first changed event on, hashes included, is
 * consistent: only a head kept elsewhere (`head`) shows it.
 */
export class IntegrityChecker {
  readonly #anchor: HeadAnchor | null;
  readonly #rows: boolean;
  readonly #problems: Problems;
  readonly #chain: ChainCheck;
  readonly #docs: DocumentCheck;
  readonly #items: ItemCheck;
  readonly #limits: LimitCheck;
  /** The fold of a Workflow World's events, once loaded (`loadWorkflowCheck`). */
  #world: WorkflowFold | null = null;
  /** World records came that no fold checked. */
  #worldUnchecked = false;

  constructor(options: IntegrityOptions = {}) {
    this.#anchor = options.head ?? null;
    this.#rows = options.rows ?? true;
    this.#problems = new Problems(options.maxProblems ?? 1000);
    this.#chain = new ChainCheck(this.#anchor, this.#problems);
    this.#docs = new DocumentCheck(this.#problems);
    this.#items = new ItemCheck(this.#problems);
    this.#limits = new LimitCheck(this.#problems);
  }

  /** Events checked so far. */
  get events(): number {
    return this.#chain.scanned;
  }

  /**
   * Loads the check of a Workflow SDK World's tables (its runs, steps, hooks and waits against its
   * `workflow_event` events, replayed through the World's rules), which needs @workflow/world, an optional
   * peer dependency. Call it before adding the first World record (`checkRecords` does); without it, or
   * without the package, World records are left unchecked (`checked.workflow_runs` is null). Returns whether
   * the check is loaded.
   */
  async loadWorkflowCheck(): Promise<boolean> {
    if (this.#world !== null) return true;
    if (!this.#rows) return false;
    let mod: typeof import('./workflow.js');
    try {
      mod = await import('./workflow.js');
    } catch (err) {
      const code = (err as NodeJS.ErrnoException | null)?.code;
      if (
        (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') &&
        String((err as Error).message).includes('@workflow/world')
      )
        return false;
      throw err;
    }
    this.#world = new mod.WorkflowFold(this.#problems);
    return true;
  }

  /** Feeds one record: events in position order, the other records in any order. */
  add(r: InstanceRecord): void {
    switch (r.t) {
      case 'event':
        this.#event(r.row);
        break;
      case 'work_item':
        this.#items.row(r.row);
        break;
      case 'document':
        this.#docs.row(r.row);
        break;
      case 'history':
        this.#docs.historyRow(r.row);
        break;
      case 'limit':
        this.#limits.row(r.row);
        break;
      case 'event_head':
        this.#chain.headRow(r.row);
        break;
      case 'event_stream':
        this.#chain.streamRow(r.row);
        break;
      case 'blocker_edges':
        this.#items.edgeRows(r.row.edges);
        break;
      case 'workflow_run':
      case 'workflow_step':
      case 'workflow_hook':
      case 'workflow_wait':
        if (!this.#rows) break;
        if (this.#world) this.#world.row(r);
        else this.#worldUnchecked = true;
        break;
      // Stream chunks are in no event: nothing to check them against.
    }
  }

  #event(e: StoredEvent): void {
    this.#chain.event(e);
    const key = `#${e.position}`;

    if (!this.#rows) return;
    const isItem = e.work_item_id !== null && ITEM_EVENTS.has(e.type);
    const isBatch = e.work_item_id === null && ITEM_TYPE_OF_BATCH[e.type] !== undefined;
    const isLimit = LIMIT_EVENT_CODECS.has(e.type);
    const isRecord = e.work_item_id !== null && RUN_RECORD_TYPES.includes(e.type);
    const isWorld = e.type === WORKFLOW_EVENT;
    if (e.type !== 'state_committed' && !isItem && !isBatch && !isLimit && !isRecord && !isWorld) return;
    if (isWorld && this.#world === null) {
      this.#worldUnchecked = true;
      return;
    }
    let data: unknown;
    try {
      data = JSON.parse(e.data);
    } catch {
      data = undefined;
    }
    if (!isObject(data)) {
      this.#problems.report(
        'event_malformed',
        'events',
        key,
        `event #${e.position} (${e.type}) has no data object`,
      );
      return;
    }
    if (e.type === 'state_committed') this.#docs.event(e, data);
    else if (isWorld) this.#world?.event(e, data);
    else if (isLimit) this.#limits.event(e, data);
    else if (isRecord) this.#items.record(e, e.work_item_id as string, data);
    else if (isBatch) this.#items.batch(e, data);
    else this.#items.event(e, e.work_item_id as string, data);
  }

  /** The verdict over everything added. */
  finish(): VerifyResult {
    this.#chain.finishHead();
    let workflowRuns: number | null = 0;
    if (this.#rows) {
      this.#items.checkItems();
      this.#limits.checkLimits();
      this.#docs.checkDocuments();
      this.#items.checkEdges();
      if (this.#world) workflowRuns = this.#world.finish();
      else if (this.#worldUnchecked) workflowRuns = null;
    }
    const chain = this.#chain;
    if (chain.hasCounters) chain.checkCounters();
    const anchorOk = this.#anchor === null || this.#anchor.position === 0 || chain.anchorMatches;
    return {
      ok: this.#problems.count === 0,
      events: chain.verified,
      head: chain.verifiedHash,
      ...(chain.broken ? { broken: chain.broken } : {}),
      anchor: chain.verifiedHash === null ? null : `${chain.verified}:${chain.verifiedHash}`,
      problems: this.#problems.list,
      problem_count: this.#problems.count,
      checked: {
        events: chain.scanned,
        work_items: this.#items.rows,
        documents: this.#docs.rows,
        history: this.#docs.historyRows,
        counters: chain.hasCounters,
        workflow_runs: workflowRuns,
      },
      ...(this.#anchor
        ? { expected_head: { position: this.#anchor.position, hash: this.#anchor.hash, matches: anchorOk } }
        : {}),
    };
  }
}

/**
 * Checks a sequence of records in one pass.
 * @example const r = await checkRecords(backend.dump!({ counters: true })); if (!r.ok) console.log(r.problems);
 */
export async function checkRecords(
  records: AsyncIterable<InstanceRecord> | Iterable<InstanceRecord>,
  options: IntegrityOptions & { onProgress?: (events: number) => void } = {},
): Promise<VerifyResult> {
  const checker = new IntegrityChecker(options);
  let world = false;
  for await (const r of records) {
    if (!world && options.rows !== false && isWorkflowRecord(r)) {
      // Stryker disable next-line BooleanLiteral: a second load returns at once (the check is loaded, or rows are off, or the package is still absent): only more awaits
      world = true;
      await checker.loadWorkflowCheck();
    }
    checker.add(r);
    if (options.onProgress && r.t === 'event' && checker.events % 10_000 === 0)
      options.onProgress(checker.events);
  }
  return checker.finish();
}
