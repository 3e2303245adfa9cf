// Prometheus metrics of agentstate instances: the queue (items by status and kind, attempts and retries,
// the oldest ready item's age, expired and expiring leases, items blocked behind a failure, claim→resolve
// durations per kind), the event log's head, the documents, and a Workflow SDK World's runs and steps by
// status. Read from the store at scrape time (so every
// process of every machine is counted, not only this one's calls) and written in the exposition format by
// prom-client, which is loaded only here. Two things the store does not keep are this process's own: the
// last verify it ran (with `serve --verify-every`, on a schedule) and the document commits and conflicts
// made through it (counters that restart at 0 with the process, as Prometheus counters do). No label names an item: labels are the instance, the status and
// the kind (the most frequent MAX_KINDS kinds; the rest summed as kind "_other").
import { RUN_STREAM_TYPES } from '../core/codecs/run-records.js';
import { WORKFLOW_RUN_STATUSES, WORKFLOW_STEP_STATUSES } from '../core/codecs/workflow-events.js';
import type { Instance } from '../instance/instance.js';

/** Upper bounds (seconds) of the claim→resolve duration histogram. */
export const DURATION_BUCKETS_S = [0.1, 0.5, 1, 5, 15, 60, 300, 900, 3600, 14400] as const;
/** Leases that run out within this many seconds count as expiring. */
export const EXPIRING_WITHIN_S = 60;
/** Items waiting for a human longer than this many seconds count as waiting long. */
export const WAITING_LONG_S = 3600;
/** Kinds named in labels, per instance; the rest are summed as `_other`. */
export const MAX_KINDS = 50;

/** The Content-Type of the exposition format. */
export const METRICS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

interface Sample {
  labels: Record<string, string>;
  value: number;
  metricName?: string;
}

interface Family {
  name: string;
  help: string;
  type: 'gauge' | 'histogram' | 'counter';
  values: Sample[];
  /** Each sample by its metric name and labels, so samples folded into one label set add up in O(1). */
  index: Map<string, Sample>;
}

/** The families of one scrape, filled instance by instance. */
function families(): Record<string, Family> {
  const f = (name: string, help: string, type: Family['type'] = 'gauge'): Family => ({
    name,
    help,
    type,
    values: [],
    index: new Map(),
  });
  return {
    items: f('agentstate_work_items', 'Work items by status and kind.'),
    attempts: f('agentstate_work_item_attempts', 'Attempts spent by the work items, by status and kind.'),
    retried: f('agentstate_work_items_retried', 'Work items tried more than once, by status and kind.'),
    oldest: f(
      'agentstate_oldest_ready_age_seconds',
      'Age of the oldest ready item since it became claimable (0: none ready).',
    ),
    expired: f(
      'agentstate_leases_expired',
      'In-flight items whose lease ran out (reclaimed by the next claim or sweep).',
    ),
    expiring: f(
      'agentstate_leases_expiring',
      `In-flight items whose lease runs out within ${EXPIRING_WITHIN_S} s.`,
    ),
    stuck: f(
      'agentstate_work_items_blocked_on_failure',
      'Pending items blocked behind a failed or cancelled item.',
    ),
    lastAttempt: f(
      'agentstate_work_items_last_attempt',
      'Pending items that failed before and have one attempt left (the next failure is final).',
    ),
    waitingLong: f(
      'agentstate_work_items_waiting_human_long',
      `Items waiting for a human for over ${WAITING_LONG_S / 3600} h.`,
    ),
    duration: f(
      'agentstate_work_item_duration_seconds',
      'Claim to resolve time of the last attempt of done and failed items, by kind.',
      'histogram',
    ),
    head: f('agentstate_event_log_head_position', 'Position of the newest event (events ever appended).'),
    documents: f('agentstate_documents', 'Versioned documents, by kind.'),
    versions: f(
      'agentstate_document_versions',
      'Document versions committed (the newest version of each, summed), by kind.',
    ),
    commits: f(
      'agentstate_document_commits_total',
      'Document commits made through this process since it started, by kind.',
      'counter',
    ),
    conflicts: f(
      'agentstate_document_conflicts_total',
      'Document commits this process refused with STATE_CONFLICT (a stale expected_version), by kind.',
      'counter',
    ),
    runRecords: f(
      'agentstate_run_records_total',
      'Records of durable runs in the log, by type: steps completed and failed, sleeps, waits begun and ended, signals sent, resets.',
      'counter',
    ),
    workflowRuns: f(
      'agentstate_workflow_runs',
      'Runs of the Workflow SDK World kept in the store, by status (every status the SDK has, 0 when none).',
    ),
    workflowSteps: f(
      'agentstate_workflow_steps',
      'Steps of those runs, by status (every status the SDK has, 0 when none).',
    ),
    verifyOk: f(
      'agentstate_verify_ok',
      'Whether the last verify this process ran found no problem (1) or some (0); absent before one.',
    ),
    verifyProblems: f('agentstate_verify_problems', 'Problems the last verify this process ran found.'),
    verifyEvents: f('agentstate_verify_events', 'Events whose hash chain the last verify checked.'),
    verifyAt: f(
      'agentstate_verify_last_run_timestamp_seconds',
      'When the last verify this process ran finished (Unix time).',
    ),
  };
}

/** The kinds to name: the MAX_KINDS with the most items; any other becomes `_other`. */
function kindLabel(counts: Map<string, number>): (kind: string | null) => string {
  const named = new Set(
    [...counts.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, MAX_KINDS)
      .map(([k]) => k),
  );
  return (kind) => (kind === null ? '' : named.has(kind) ? kind : '_other');
}

/** Adds `value` to the sample with these labels (kinds folded into `_other` add up). */
function add(f: Family, labels: Record<string, string>, value: number, metricName?: string): void {
  const key = JSON.stringify([metricName, labels]);
  const found = f.index.get(key);
  if (found) {
    found.value += value;
    return;
  }
  const sample = { labels, value, ...(metricName ? { metricName } : {}) };
  f.values.push(sample);
  f.index.set(key, sample);
}

async function collect(fam: Record<string, Family>, name: string, inst: Instance): Promise<void> {
  const now = inst.clock();
  const [stats, head, docs, records, world] = await Promise.all([
    inst.work.stats({
      expiringWithinMs: EXPIRING_WITHIN_S * 1000,
      bucketsMs: DURATION_BUCKETS_S.map((s) => s * 1000),
      waitingLongerThanMs: WAITING_LONG_S * 1000,
    }),
    inst.events.head(),
    inst.docs.list({ limit: 100_000 }),
    inst.events.countTypes([...RUN_STREAM_TYPES]),
    inst.backend.workflowRuns?.countStatuses() ?? null,
  ]);
  const i = { agentstate_instance: name };
  const byKind = new Map<string, number>();
  for (const g of stats.groups) if (g.kind !== null) byKind.set(g.kind, (byKind.get(g.kind) ?? 0) + g.count);
  const kind = kindLabel(byKind);
  for (const g of stats.groups) {
    const l = { ...i, status: g.status, kind: kind(g.kind) };
    add(fam.items!, l, g.count);
    add(fam.attempts!, l, g.attempts);
    add(fam.retried!, l, g.retried);
  }
  add(
    fam.oldest!,
    i,
    stats.oldestReadySince === null ? 0 : Math.max(0, (now - stats.oldestReadySince) / 1000),
  );
  add(fam.expired!, i, stats.leasesExpired);
  add(fam.expiring!, i, stats.leasesExpiring);
  add(fam.stuck!, i, stats.blockedOnFailure);
  add(fam.lastAttempt!, i, stats.lastAttempt);
  add(fam.waitingLong!, i, stats.waitingLong);
  const h = fam.duration!;
  for (const d of stats.durations) {
    const l = { ...i, kind: kind(d.kind) };
    DURATION_BUCKETS_S.forEach((le, k) => {
      add(h, { ...l, le: String(le) }, d.buckets[k] ?? 0, `${h.name}_bucket`);
    });
    add(h, { ...l, le: '+Inf' }, d.count, `${h.name}_bucket`);
    add(h, l, d.sumMs / 1000, `${h.name}_sum`);
    add(h, l, d.count, `${h.name}_count`);
  }
  add(fam.head!, i, head?.position ?? 0);
  for (const r of records)
    add(fam.runRecords!, { ...i, type: r.type.replace(/^work_(step|item)_/, '') }, r.count);
  if (world !== null) {
    // Every status the SDK has, 0 when none is in it, so a status that empties reads 0 instead of vanishing.
    for (const [family, known, counts] of [
      [fam.workflowRuns!, WORKFLOW_RUN_STATUSES, world.runs],
      [fam.workflowSteps!, WORKFLOW_STEP_STATUSES, world.steps],
    ] as const) {
      for (const status of known) add(family, { ...i, status }, 0);
      for (const c of counts) add(family, { ...i, status: c.status }, c.count);
    }
  }
  for (const d of docs) {
    add(fam.documents!, { ...i, kind: d.kind }, 1);
    add(fam.versions!, { ...i, kind: d.kind }, d.version);
  }
  for (const [k, c] of inst.docs.writeCounts()) {
    add(fam.commits!, { ...i, kind: k }, c.commits);
    add(fam.conflicts!, { ...i, kind: k }, c.conflicts);
  }
  const v = inst.events.lastVerify;
  if (v !== null) {
    add(fam.verifyOk!, i, v.ok ? 1 : 0);
    add(fam.verifyProblems!, i, v.problem_count);
    add(fam.verifyEvents!, i, v.events);
    add(fam.verifyAt!, i, v.at / 1000);
  }
}

/**
 * The Prometheus text of these instances (`name` is the `agentstate_instance` label: `host/name`), for a
 * `/metrics` endpoint of your own; `agentstate serve` serves it at `GET /metrics`.
 * @example res.type(METRICS_CONTENT_TYPE).send(await prometheusMetrics([{ name: 'laptop/planner', inst }]))
 */
export async function prometheusMetrics(instances: Array<{ name: string; inst: Instance }>): Promise<string> {
  const fam = families();
  for (const { name, inst } of instances) await collect(fam, name, inst);
  const { Registry } = await import('prom-client');
  const registry = new Registry();
  for (const f of Object.values(fam)) {
    // A metric as prom-client's registry reads one (what its own Gauge and Histogram return from get()).
    registry.registerMetric({
      name: f.name,
      help: f.help,
      get: async () => ({ name: f.name, help: f.help, type: f.type, values: f.values, aggregator: 'sum' }),
      reset: () => {},
    } as never);
  }
  return registry.metrics();
}
