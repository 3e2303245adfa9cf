// Which kind's commits write an event type (KindDefinition.emits), so that append can refuse look-alikes.
// Apart from the registry, which loads every kind (about 90 ms): an append, often a whole CLI process,
// never pays for it. The built-in kinds' types are here from the start; registerKind adds every other
// kind's as it is registered (an adapter's kinds once the adapter is loaded).
import { GRID_EVENT_TYPES, GRID_MISSION_KIND } from './grid-mission/model.js';

const owners = new Map<string, string>(GRID_EVENT_TYPES.map((type) => [type, GRID_MISSION_KIND]));

/** Kind `kind` now writes `types` (a kind registered again gives up the types it no longer lists). */
export function claimEventTypes(kind: string, types: readonly string[] = []): void {
  for (const [type, owner] of owners) if (owner === kind) owners.delete(type);
  for (const type of types) owners.set(type, kind);
}

/** The kind whose commits write event type `type`, or null. */
export function eventTypeOwner(type: string): string | null {
  return owners.get(type) ?? null;
}
