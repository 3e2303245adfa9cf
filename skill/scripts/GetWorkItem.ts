// Bundle entry point: `bun skill/scripts/GetWorkItem.ts` with the MF_* environment (see skill/Workflows/GetWorkItem.md).
import { runWorkflowProcess } from '../../src/workflows/process.js';

process.exitCode = await runWorkflowProcess('GetWorkItem');
