// Bundle entry point: `bun skill/scripts/ReplayPending.ts` with the MF_* environment (see skill/Workflows/ReplayPending.md).
import { runWorkflowProcess } from '../../src/workflows/process.js';

process.exitCode = await runWorkflowProcess('ReplayPending');
