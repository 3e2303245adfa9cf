// Bundle entry point: `bun skill/scripts/RetryWorkItem.ts` with the MF_* environment (see skill/Workflows/RetryWorkItem.md).
import { runWorkflowProcess } from '../../src/workflows/process.js';

process.exitCode = await runWorkflowProcess('RetryWorkItem');
