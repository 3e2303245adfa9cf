// Kind `json`: any JSON object, no rules beyond the size limit — free-form state that still gets
// versions, CAS, history and provenance.
import type { KindDefinition } from '../../core/kind.js';

export const jsonKind: KindDefinition = {
  name: 'json',
  description: 'Any JSON object: free-form state with versions, compare-and-swap, history and provenance.',
  schema: { type: 'object' },
  maxBytes: 1024 * 1024,
};
