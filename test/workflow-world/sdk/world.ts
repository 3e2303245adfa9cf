// Where the suite finds agentstate's World: the built module (the SDK's test server imports it by path).
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** dist/workflow-world/world.js of this checkout; `npm run build` makes it. */
export const WORLD_MODULE = join(
  dirname(fileURLToPath(import.meta.url)),
  '..',
  '..',
  '..',
  'dist',
  'workflow-world',
  'world.js',
);

if (!existsSync(WORLD_MODULE)) {
  throw new Error(`${WORLD_MODULE} is missing: run npm run build first (npm run test:workflow-world does)`);
}
