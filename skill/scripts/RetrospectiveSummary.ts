// Bundle entry point: `bun skill/scripts/RetrospectiveSummary.ts` with the MF_* environment (see skill/Workflows/RetrospectiveSummary.md).
import { runWorkflowProcess } from '../../src/workflows/process.js';

process.exitCode = await runWorkflowProcess('RetrospectiveSummary');
