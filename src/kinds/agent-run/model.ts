// Body types of kind `agent-run` (AgentState): what the schema (./schema.ts) admits.

import type { JsonObject } from '../../core/types.js';
import type { LockRecord } from '../rules.js';
import type { RunStatus } from './schema.js';

/** Exactly one key: `{ receipt: id }`, `{ verification: id }` or `{ event: position }`. */
export interface EvidenceRef {
  receipt?: string;
  verification?: string;
  event?: number;
}
export interface Hypothesis {
  id: string;
  statement: string;
  status: 'open' | 'promoted' | 'rejected';
  confidence?: number;
  promoted_to?: string;
  rejected_reason?: string;
}
export interface Fact {
  id: string;
  statement: string;
  evidence: EvidenceRef[];
  promoted_from?: string;
  recorded_at?: string;
  recorded_by?: string;
  retracted?: { reason: string; at: string; by: string };
}
export interface Receipt {
  id: string;
  type: 'mutation' | 'tool';
  name: string;
  status: 'ok' | 'error';
  at: string;
  target?: string;
  summary?: string;
  output_hash?: string;
  event_position?: number;
}
export interface Verification {
  id: string;
  check: string;
  status: 'passed' | 'failed' | 'skipped' | 'error';
  at: string;
  criteria?: string[];
  details?: string;
  event_position?: number;
}
export interface Failure {
  id: string;
  summary: string;
  status: 'unresolved' | 'resolved';
  source?: string;
  since?: string;
  resolution?: string;
}
export interface Budget {
  limit: number;
  spent: number;
  unit?: string;
}
export interface Completion {
  status: 'succeeded' | 'failed' | 'cancelled';
  at: string;
  by: string;
  verification_ids: string[];
  summary?: string;
}
export interface PlanNode {
  id: string;
  title: string;
  status: string;
  depends_on?: string[];
}
/** AgentState as stored (the typed view of a validated `agent-run` body). */
export interface AgentRun {
  run_id: string;
  agent: string;
  state_version?: number;
  task_ir?: { id: string; version?: number };
  status: RunStatus;
  status_reason?: string;
  intent: { text: string; source?: string; received_at?: string };
  acceptance_criteria?: Array<{ id: string; text: string }>;
  constraints?: Array<{ id: string; text: string; hard?: boolean }>;
  environment?: JsonObject;
  repository?: JsonObject;
  plan?: { graph_id?: string; nodes: PlanNode[]; position?: string | null };
  hypotheses?: Hypothesis[];
  facts?: Fact[];
  event_refs?: Array<{ position: number; type?: string; summary?: string }>;
  context?: JsonObject[];
  artifacts?: JsonObject[];
  receipts?: Receipt[];
  diagnostics?: JsonObject[];
  verifications?: Verification[];
  failures?: Failure[];
  permissions?: { allow?: string[]; deny?: string[] };
  budgets?: Record<string, Budget>;
  subgoals?: JsonObject[];
  locks?: LockRecord[];
  completion?: Completion;
}
