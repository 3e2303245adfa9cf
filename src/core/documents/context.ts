// What the document store's modules run with: its context (the clock, the default actor, history pruning,
// the kind registry's loader) and the one state object the store's facade builds and hands to each of them.
import type { StoreBackend } from '../backend.js';
import type { KindDefinition } from '../kind.js';
import type { Clock } from '../time.js';
import type { JsonObject } from '../types.js';
import type { LatestVersions } from './cache.js';

/** How the store finds and checks kinds (the registry, injected so the core stays kind-agnostic). */
export interface KindResolver {
  get(name: string): KindDefinition;
  validateSchema(kind: KindDefinition, body: JsonObject): void;
}

/** What a DocumentStore runs with besides its backend: the clock, the default actor, history pruning, the kinds. */
export interface DocumentStoreContext {
  clock: Clock;
  /** Default actor name. */
  actor: string;
  /** Keep only the newest N versions of each document's history; null keeps everything. @default null */
  keepVersions: number | null;
  /** Loads the kind registry on first use (kinds pull in schemas and codecs a work-item call never needs). */
  kinds: () => Promise<KindResolver>;
}

/** What `DocumentStore.writeCounts` counts per kind. */
export interface DocumentWriteCounts {
  /** Commits made (a replay of a `write_id` not counted). */
  commits: number;
  /** Commits refused with STATE_CONFLICT. */
  conflicts: number;
}

/** One document store's state: built once, when the store opens, and passed to each of its functions. */
export interface DocumentStoreState {
  /** The backend the documents are stored in. */
  readonly backend: StoreBackend;
  /** The clock, the default actor, history pruning and the kinds' loader. */
  readonly ctx: DocumentStoreContext;
  /** The kind registry once `ctx.kinds()` has delivered it. */
  kinds: KindResolver | undefined;
  /** The newest version of each document this store recently committed. */
  readonly latest: LatestVersions;
  /** Commits and refused commits (STATE_CONFLICT) through this store, by document kind. */
  readonly writes: Map<string, DocumentWriteCounts>;
}

/** The kind registry, loaded on first use. */
export async function loadKinds(s: DocumentStoreState): Promise<KindResolver> {
  s.kinds ??= await s.ctx.kinds();
  return s.kinds;
}
