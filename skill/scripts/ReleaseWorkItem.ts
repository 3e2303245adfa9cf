// Bundle entry point: `bun skill/scripts/ReleaseWorkItem.ts` with the MF_* environment (see skill/Workflows/ReleaseWorkItem.md).
import { runWorkflowProcess } from '../../src/workflows/process.js';

process.exitCode = await runWorkflowProcess('ReleaseWorkItem');
