// Bundle entry point: `bun skill/scripts/ResolveWorkItem.ts` with the MF_* environment (see skill/Workflows/ResolveWorkItem.md).
import { runWorkflowProcess } from '../../src/workflows/process.js';

process.exitCode = await runWorkflowProcess('ResolveWorkItem');
