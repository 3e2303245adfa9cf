// TaskIR as stored: the typed view of a validated `task-ir` body (its JSON Schema is ./schema.ts).
import type { Json } from '../../core/types.js';
import type { AmbiguityStatus } from './schema.js';

export interface Ambiguity {
  id: string;
  question: string;
  status: AmbiguityStatus;
  options?: string[];
  resolution?: Json;
  resolved_by?: string;
  resolved_at?: string;
  escalation_work_item_id?: string;
}
/** TaskIR as stored (the typed view of a validated `task-ir` body). */
export interface TaskIr {
  goal: string;
  request?: string;
  inputs?: Array<{ name: string; description?: string; ref?: string; value?: Json }>;
  constraints?: Array<{ id: string; text: string; hard?: boolean }>;
  acceptance_criteria: Array<{ id: string; text: string }>;
  ambiguities: Ambiguity[];
}
