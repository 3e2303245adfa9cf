// Bundle entry point: `bun skill/scripts/CommitState.ts` with the MF_* environment (see skill/Workflows/CommitState.md).
import { runWorkflowProcess } from '../../src/workflows/process.js';

process.exitCode = await runWorkflowProcess('CommitState');
