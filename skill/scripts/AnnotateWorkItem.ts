// Bundle entry point: `bun skill/scripts/AnnotateWorkItem.ts` with the MF_* environment (see skill/Workflows/AnnotateWorkItem.md).
import { runWorkflowProcess } from '../../src/workflows/process.js';

process.exitCode = await runWorkflowProcess('AnnotateWorkItem');
