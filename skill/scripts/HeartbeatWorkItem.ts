// Bundle entry point: `bun skill/scripts/HeartbeatWorkItem.ts` with the MF_* environment (see skill/Workflows/HeartbeatWorkItem.md).
import { runWorkflowProcess } from '../../src/workflows/process.js';

process.exitCode = await runWorkflowProcess('HeartbeatWorkItem');
