// Bundle entry point: `bun skill/scripts/EscalateAmbiguities.ts` with the MF_* environment (see skill/Workflows/EscalateAmbiguities.md).
import { runWorkflowProcess } from '../../src/workflows/process.js';

process.exitCode = await runWorkflowProcess('EscalateAmbiguities');
