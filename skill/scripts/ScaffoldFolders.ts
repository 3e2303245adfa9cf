// Bundle entry point: `bun skill/scripts/ScaffoldFolders.ts` with the MF_* environment (see skill/Workflows/ScaffoldFolders.md).
import { runWorkflowProcess } from '../../src/workflows/process.js';

process.exitCode = await runWorkflowProcess('ScaffoldFolders');
