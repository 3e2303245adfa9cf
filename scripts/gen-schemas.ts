// Writes schemas/*.schema.json from the kinds' TypeScript schema objects (the source of truth).
// Run: npx tsx scripts/gen-schemas.ts   (test/kinds/schema-files.test.ts fails when they drift)
import { writeFileSync } from 'node:fs';
import { agentRunSchema } from '../src/kinds/agent-run/schema.js';
import { aiosWorkflowSchema } from '../src/kinds/aios-workflow/schema.js';
import { gridMissionSchema } from '../src/kinds/grid-mission/schema.js';
import { scheduleSchema } from '../src/kinds/schedule/schema.js';
import { taskIrSchema } from '../src/kinds/task-ir/schema.js';
import { workflowSessionsSchema } from '../src/kinds/workflow-sessions/schema.js';

for (const [name, schema] of [
  ['agent-run', agentRunSchema],
  ['task-ir', taskIrSchema],
  ['grid-mission', gridMissionSchema],
  ['aios-workflow', aiosWorkflowSchema],
  ['workflow-sessions', workflowSessionsSchema],
  ['schedule', scheduleSchema],
] as const) {
  writeFileSync(
    new URL(`../schemas/${name}.schema.json`, import.meta.url),
    `${JSON.stringify(schema, null, 2)}\n`,
  );
  console.log(`schemas/${name}.schema.json`);
}
