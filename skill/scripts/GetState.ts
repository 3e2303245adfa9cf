// Bundle entry point: `bun skill/scripts/GetState.ts` with the MF_* environment (see skill/Workflows/GetState.md).
import { runWorkflowProcess } from '../../src/workflows/process.js';

process.exitCode = await runWorkflowProcess('GetState');
