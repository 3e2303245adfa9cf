// What the Prometheus exposition of an instance is made of (metrics/prometheus.ts formats it): the queue's
// health, the log's head, documents and versions by kind, the records of durable runs by type, a Workflow SDK
// World's runs and steps by status, and two things this process keeps itself (the store does not): the
// document commits and conflicts made through it, and the last verify it ran.
import { RUN_STREAM_TYPES } from '../../core/codecs/run-records.js';
import type { JsonSchema } from '../../core/json-schema.js';
import { operation } from '../operation.js';
import {
  QUEUE_STATS,
  QUEUE_STATS_INPUT,
  type QueueStatsInput,
  type QueueStatsResult,
  queueStats,
} from './work.js';

/** What instance_metrics answers. */
export interface InstanceMetrics {
  /** queue_stats with the windows the call named. */
  queue: QueueStatsResult;
  /** The newest event's position (0: an empty log). */
  head: number;
  /** Documents and their newest versions summed, by kind. */
  documents: Array<{ kind: string; documents: number; versions: number }>;
  /** Records of durable runs in the log, by event type. */
  run_records: Array<{ type: string; count: number }>;
  /** A Workflow SDK World's runs and steps by status; null when the backend keeps none. */
  workflow: { runs: StatusCount[]; steps: StatusCount[] } | null;
  /** Document commits and STATE_CONFLICT refusals made through this process since it started, by kind. */
  commits: Array<{ kind: string; commits: number; conflicts: number }>;
  /** The last verify this process ran (`at`: ISO time); null before one. */
  last_verify: { at: string; ok: boolean; events: number; problem_count: number } | null;
}

interface StatusCount {
  status: string;
  count: number;
}

const int: JsonSchema = { type: 'integer' };
const counts = (key: string): JsonSchema => ({
  type: 'array',
  items: { type: 'object', properties: { [key]: { type: 'string' }, count: int }, required: [key, 'count'] },
});

const INSTANCE_METRICS: JsonSchema = {
  type: 'object',
  properties: {
    queue: QUEUE_STATS,
    head: int,
    documents: {
      type: 'array',
      items: {
        type: 'object',
        properties: { kind: { type: 'string' }, documents: int, versions: int },
        required: ['kind', 'documents', 'versions'],
      },
    },
    run_records: counts('type'),
    workflow: {
      type: ['object', 'null'],
      properties: { runs: counts('status'), steps: counts('status') },
      required: ['runs', 'steps'],
    },
    commits: {
      type: 'array',
      items: {
        type: 'object',
        properties: { kind: { type: 'string' }, commits: int, conflicts: int },
        required: ['kind', 'commits', 'conflicts'],
      },
    },
    last_verify: {
      type: ['object', 'null'],
      properties: { at: { type: 'string' }, ok: { type: 'boolean' }, events: int, problem_count: int },
      required: ['at', 'ok', 'events', 'problem_count'],
    },
  },
  required: ['queue', 'head', 'documents', 'run_records', 'workflow', 'commits', 'last_verify'],
};

export const METRICS_OPERATIONS = [
  operation({
    name: 'instance_metrics',
    group: 'reports',
    description:
      "What the Prometheus metrics are made of: queue health, the log's head, documents by kind, durable-run records, World runs and steps, and this process's commits, conflicts and last verify.",
    input: QUEUE_STATS_INPUT,
    output: INSTANCE_METRICS,
    writes: false,
    run: async (inst, i: QueueStatsInput): Promise<InstanceMetrics> => {
      const [queue, head, docs, runRecords, world] = await Promise.all([
        queueStats(inst, i),
        inst.events.head(),
        inst.docs.list({ limit: 100_000 }),
        inst.events.countTypes([...RUN_STREAM_TYPES]),
        inst.backend.workflowRuns?.countStatuses() ?? null,
      ]);
      const byKind = new Map<string, { kind: string; documents: number; versions: number }>();
      for (const d of docs) {
        const k = byKind.get(d.kind) ?? { kind: d.kind, documents: 0, versions: 0 };
        k.documents += 1;
        k.versions += d.version;
        byKind.set(d.kind, k);
      }
      const v = inst.events.lastVerify;
      return {
        queue,
        head: head?.position ?? 0,
        documents: [...byKind.values()],
        run_records: runRecords,
        workflow: world,
        commits: [...inst.docs.writeCounts()].map(([kind, c]) => ({
          kind,
          commits: c.commits,
          conflicts: c.conflicts,
        })),
        last_verify:
          v === null
            ? null
            : {
                at: new Date(v.at).toISOString(),
                ok: v.ok,
                events: v.events,
                problem_count: v.problem_count,
              },
      };
    },
  }),
] as const;
