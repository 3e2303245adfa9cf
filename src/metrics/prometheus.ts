// Prometheus metrics of agentstate instances: the queue (items by status and kind, attempts and retries,
// the oldest ready item's age, expired and expiring leases, items blocked behind a failure, claim→resolve
// durations per kind), the event log's head, the documents, and a Workflow SDK World's runs and steps by
// status. Read from the store at scrape time (so every
// process of every machine is counted, not only this one's calls) and written in the exposition format by
// prom-client, which is loaded only here. Two things the store does not keep are this process's own: the
// last verify it ran (with `serve --verify-every`, on a schedule) and the document commits and conflicts
// made through it (counters that restart at 0 with the process, as Prometheus counters do). No label names an item: labels are the instance, the status and
// the kind (the most frequent MAX_KINDS kinds; the rest summed as kind "_other"). The figures are the
// instance_metrics operation's; this module only names and labels them.
import { WORKFLOW_RUN_STATUSES, WORKFLOW_STEP_STATUSES } from '../core/codecs/workflow-events/codec.js';
import type { Instance } from '../instance/instance.js';
import { callOperation } from '../service/edge.js';
import type { InstanceMetrics } from '../service/operations/metrics.js';
import { DURATION_BUCKETS_MS } from '../service/operations/work.js';

/** Upper bounds (seconds) of the claim→resolve duration histogram. */
export const DURATION_BUCKETS_S: readonly number[] = DURATION_BUCKETS_MS.map((ms) => ms / 1000);
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
  const m = (await callOperation(inst, 'instance_metrics', {
    expiring_within_ms: EXPIRING_WITHIN_S * 1000,
    waiting_longer_than_ms: WAITING_LONG_S * 1000,
  })) as InstanceMetrics;
  const stats = m.queue;
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
  const oldest = stats.oldest_ready_since === null ? null : Date.parse(stats.oldest_ready_since);
  add(fam.oldest!, i, oldest === null ? 0 : Math.max(0, (now - oldest) / 1000));
  add(fam.expired!, i, stats.leases_expired);
  add(fam.expiring!, i, stats.leases_expiring);
  add(fam.stuck!, i, stats.blocked_on_failure);
  add(fam.lastAttempt!, i, stats.last_attempt);
  add(fam.waitingLong!, i, stats.waiting_long);
  const h = fam.duration!;
  for (const d of stats.durations) {
    const l = { ...i, kind: kind(d.kind) };
    for (const ms of DURATION_BUCKETS_MS) {
      add(h, { ...l, le: String(ms / 1000) }, d.buckets[String(ms)] ?? 0, `${h.name}_bucket`);
    }
    add(h, { ...l, le: '+Inf' }, d.count, `${h.name}_bucket`);
    add(h, l, d.sum_ms / 1000, `${h.name}_sum`);
    add(h, l, d.count, `${h.name}_count`);
  }
  add(fam.head!, i, m.head);
  for (const r of m.run_records)
    add(fam.runRecords!, { ...i, type: r.type.replace(/^work_(step|item)_/, '') }, r.count);
  if (m.workflow !== null) {
    // Every status the SDK has, 0 when none is in it, so a status that empties reads 0 instead of vanishing.
    for (const [family, known, counts] of [
      [fam.workflowRuns!, WORKFLOW_RUN_STATUSES, m.workflow.runs],
      [fam.workflowSteps!, WORKFLOW_STEP_STATUSES, m.workflow.steps],
    ] as const) {
      for (const status of known) add(family, { ...i, status }, 0);
      for (const c of counts) add(family, { ...i, status: c.status }, c.count);
    }
  }
  for (const d of m.documents) {
    add(fam.documents!, { ...i, kind: d.kind }, d.documents);
    add(fam.versions!, { ...i, kind: d.kind }, d.versions);
  }
  for (const c of m.commits) {
    add(fam.commits!, { ...i, kind: c.kind }, c.commits);
    add(fam.conflicts!, { ...i, kind: c.kind }, c.conflicts);
  }
  const v = m.last_verify;
  if (v !== null) {
    add(fam.verifyOk!, i, v.ok ? 1 : 0);
    add(fam.verifyProblems!, i, v.problem_count);
    add(fam.verifyEvents!, i, v.events);
    add(fam.verifyAt!, i, Date.parse(v.at) / 1000);
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
