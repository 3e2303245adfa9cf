// Bundle entry point: `bun skill/scripts/ClaimWorkItem.ts` with the MF_* environment (see skill/Workflows/ClaimWorkItem.md).
import { runWorkflowProcess } from '../../src/workflows/process.js';

process.exitCode = await runWorkflowProcess('ClaimWorkItem');
