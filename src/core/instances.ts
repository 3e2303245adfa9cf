// What a store reports of the instances it holds (`listInstances`).

/** One instance a store holds, as `listInstances` reports it. */
export interface InstanceSummary {
  /** The instance key, `host/name`. */
  instance: string;
  /** The host part of the key; null for a key that is not `host/name` (a PostgreSQL store opened with another key). */
  host: string | null;
  /** The name part of the key; null as for host. */
  name: string | null;
  /** Events in its log: the head position (positions are gapless from 1); null when its store could not be read. */
  events: number | null;
  /** When its newest event was written (ISO-8601); null before the first one. */
  last_event_at: string | null;
  /** SQLite: the instance folder. */
  dir?: string;
  /** SQLite: why its `state.sqlite` could not be read (damaged, not agentstate's, unreadable); the others still list. */
  error?: string;
}
