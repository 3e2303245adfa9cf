// The Grid mission kind's name and the event types its commits write: what other modules need of the kind
// without loading it (src/kinds/event-owners.ts); and its body types, what the schema (./schema.ts) admits.
import type {
  AgentResult,
  AgentType,
  ArtifactType,
  BlockerType,
  MissionStatus,
  Mode,
  PhaseStatus,
  WarningLevel,
} from './schema.js';

export const GRID_MISSION_KIND = 'grid-mission';

/** Every write appends grid_state_updated; the other two follow when the status or the phase moves. */
export const GRID_EVENT_TYPES = ['grid_state_updated', 'grid_status_changed', 'grid_phase_advanced'] as const;

// ---------------------------------------------------------------------------------------------------
// Body types (what the schema admits, once the defaults are filled in)

export interface PhaseDefinition {
  id: string;
  name: string;
  status: PhaseStatus;
  blocks: number;
  blocks_complete: number;
  started_at?: string | null;
  completed_at?: string | null;
}
export interface ActiveAgent {
  id: string;
  type: AgentType;
  spawned_at: string;
  task: string;
  phase: string;
  block: string;
  last_heartbeat: string;
}
export interface CompletedAgent {
  id: string;
  type: AgentType;
  result: AgentResult;
  duration_seconds: number;
}
export interface Decision {
  id: string;
  decision: string;
  phase_decided: string;
  affects_phases: string[];
  rationale: string;
}
export interface Artifact {
  id: string;
  type: ArtifactType;
  path: string;
  created_phase: string;
  used_by_phases: string[];
}
export interface TechStack {
  runtime?: string;
  framework?: string;
  database?: string;
  orm?: string;
  auth?: string;
  added_packages?: Array<{ name: string; added_phase?: string; purpose?: string }>;
  [key: string]: unknown;
}
export interface GridWarning {
  level: WarningLevel;
  message: string;
  source: string;
  timestamp: string;
}
export interface Blocker {
  id: string;
  type: BlockerType;
  description: string;
  blocking_thread?: string;
  added_at: string;
}
export interface Position {
  phase: number;
  phase_id?: string;
  phase_name?: string;
  block: number;
  block_id?: string;
  block_name?: string;
  wave: number;
  thread: number;
  thread_total: number;
}
/** `.grid/STATE.md` frontmatter as stored (the typed view of a validated `grid-mission` body). */
export interface GridMission {
  version: string;
  session_id: string;
  mission_id: string;
  cluster: string;
  created_at: string;
  updated_at: string;
  status: MissionStatus;
  mode: Mode;
  phases: { total: number; current: number; completed: string[]; definitions: PhaseDefinition[] };
  position: Position;
  progress: {
    blocks_complete: number;
    blocks_total: number;
    threads_complete: number;
    threads_total: number;
    percent: number;
  };
  agents: { active: ActiveAgent[]; completed: CompletedAgent[] };
  persistent: { decisions: Decision[]; artifacts: Artifact[]; tech_stack: TechStack };
  resume: {
    checkpoint_file: string | null;
    last_agent: string | null;
    last_commit: string | null;
    can_resume: boolean;
    resume_position: { phase: number; block: number; thread: number };
  };
  budget: { total_cost_usd: number; session_cost_usd: number; spawns_this_session: number };
  warnings: GridWarning[];
  blockers: Blocker[];
  energy: number;
  markdown_body?: string;
}
