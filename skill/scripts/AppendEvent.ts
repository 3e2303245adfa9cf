// Bundle entry point: `bun skill/scripts/AppendEvent.ts` with the MF_* environment (see skill/Workflows/AppendEvent.md).
import { runWorkflowProcess } from '../../src/workflows/process.js';

process.exitCode = await runWorkflowProcess('AppendEvent');
