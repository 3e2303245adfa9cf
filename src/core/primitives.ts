// The primitives every area's types are made of: JSON values, and who acted (actor kinds, provenance).

/** A JSON value as stored in payloads, notes, results and event data. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
/** A JSON object: what document bodies, payloads and event data are. */
export type JsonObject = { [key: string]: Json };

/** Who made a write. `model` writes need a provenance record. */
export const ACTOR_KINDS = ['human', 'model', 'tool', 'system'] as const;
/** Who acted: `human`, `model`, `tool` or `system` (the store itself). */
export type ActorKind = (typeof ACTOR_KINDS)[number];

/** Where a write came from: for a model, its id, the input hash or prompt reference, the run and the step. */
export interface Provenance {
  model_id?: string;
  input_hash?: string;
  prompt_ref?: string;
  run_id?: string;
  step_id?: string;
  tool_id?: string;
  [key: string]: Json | undefined;
}
