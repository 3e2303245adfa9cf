// Keyed-limit operations: the limits per concurrency key that claims respect, as the service table offers
// them to every edge (CLI `agentstate limit set|list|remove`, MCP, HTTP).

import { inputSchema } from '../../core/json-schema.js';
import { WORK_LIMIT, WORK_LIMITS } from '../../core/output-schemas.js';
import type { RemoveLimitInput, SetLimitInput } from '../../core/types.js';
import { WORK_INPUTS } from '../../core/work/inputs.js';
import { operation } from '../operation.js';

export const LIMIT_OPERATIONS = [
  operation({
    name: 'set_limit',
    group: 'work',
    description:
      'Limit the items of a concurrency key that claims hand out: at most max_in_flight in flight, and/or at most rate.count claims per rate.period_ms window.',
    input: inputSchema(WORK_INPUTS.set_limit, {
      key: 'the concurrency_key items carry',
      max_in_flight: 'at most this many of its items in flight at once',
      rate: 'at most count claims started per window of period_ms: {"count": 60, "period_ms": 60000}',
    }),
    output: WORK_LIMIT,
    writes: true,
    idempotent: true,
    run: (inst, i: SetLimitInput) => inst.work.setLimit(i),
  }),
  operation({
    name: 'remove_limit',
    group: 'work',
    description: "Remove a concurrency key's limit (NOT_FOUND when it has none); its items become unlimited.",
    input: inputSchema(WORK_INPUTS.remove_limit),
    output: WORK_LIMIT,
    writes: true,
    run: (inst, i: RemoveLimitInput) => inst.work.removeLimit(i),
  }),
  operation({
    name: 'list_limits',
    group: 'work',
    description: 'The limit of every concurrency key that has one, by key.',
    input: inputSchema({}),
    output: WORK_LIMITS,
    writes: false,
    run: (inst) => inst.work.limits(),
  }),
] as const;
