// The Grid mission kind's name and the event types its commits write: what other modules need of the kind
// without loading it (src/kinds/event-owners.ts).
export const GRID_MISSION_KIND = 'grid-mission';

/** Every write appends grid_state_updated; the other two follow when the status or the phase moves. */
export const GRID_EVENT_TYPES = ['grid_state_updated', 'grid_status_changed', 'grid_phase_advanced'] as const;
