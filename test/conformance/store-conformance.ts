// The store conformance suite: every backend must pass it unchanged (runStoreConformance(name, factory)).
// One file per primitive; each test runs on a fresh store and ends with a clean verify (setup.ts).
import { batchConformance } from './batches.js';
import { blockerFailureConformance } from './blocker-failure.js';
import { documentConformance } from './documents.js';
import { eventConformance } from './events.js';
import { historyConformance, statsConformance } from './history.js';
import { kindEffectConformance } from './kind-effects.js';
import { limitConformance } from './limits.js';
import { lockConformance } from './locks.js';
import { pagingConformance } from './paging.js';
import { retryConformance } from './retries.js';
import { runConformance } from './runs.js';
import { conformanceTest, type StoreFactory } from './setup.js';
import { valueConformance } from './values.js';
import { workItemConformance } from './work-items.js';

export type { StoreFactory } from './setup.js';

/** Declares the whole suite for one backend; `factory` opens a fresh, empty, migrated backend per test. */
export function runStoreConformance(name: string, factory: StoreFactory): void {
  const t = conformanceTest(factory);
  workItemConformance(name, t);
  retryConformance(name, t);
  runConformance(name, t);
  batchConformance(name, t);
  historyConformance(name, t);
  statsConformance(name, t);
  blockerFailureConformance(name, t);
  limitConformance(name, t);
  lockConformance(name, t);
  eventConformance(name, t);
  documentConformance(name, t);
  kindEffectConformance(name, t);
  valueConformance(name, t);
  pagingConformance(name, t);
}
