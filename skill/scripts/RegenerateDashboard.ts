// Bundle entry point: `bun skill/scripts/RegenerateDashboard.ts` with the MF_* environment (see skill/Workflows/RegenerateDashboard.md).
import { runWorkflowProcess } from '../../src/workflows/process.js';

process.exitCode = await runWorkflowProcess('RegenerateDashboard');
