// Values a Workflow SDK app really produces, for the tests of the World's views (runs-view, the dashboard's
// Runs pages): workflow names as the SDK's compiler writes them (`workflow//<file>//<name>`), ids with `|`,
// `+` and non-ASCII, and a hook token that must never be shown.
export const ORDER = 'workflow//./src/ordér|1+x//placeOrder';
export const REFUND = 'workflow//./src/refund//refund';
export const STEP_1 = 'step|ü+1 φ';
export const STEP_2 = 'step+2|漢';
export const HOOK = 'hook|ä+1';
export const TOKEN = 'secret-token|€+x 漢';
export const WAIT = 'wait|ü+1';
export const STREAM = 'strm|ü+1 φ';

/** A Uint8Array of `b` (a payload the SDK serialized). */
export const bytes = (...b: number[]) => new Uint8Array(b);
