// Bundle entry point: `bun skill/scripts/EnqueueWorkItem.ts` with the MF_* environment (see skill/Workflows/EnqueueWorkItem.md).
import { runWorkflowProcess } from '../../src/workflows/process.js';

process.exitCode = await runWorkflowProcess('EnqueueWorkItem');
