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

/** Verifies the instance the World of this process's environment uses (AGENTSTATE_WORKFLOW_*), as `agentstate verify` would. */
export async function verifyWorldInstance() {
  const { openInstance } = await import(join(dirname(WORLD_MODULE), '..', 'index.js'));
  const env = process.env;
  const instance = await openInstance({
    dir: env.AGENTSTATE_WORKFLOW_DIR,
    ...(env.AGENTSTATE_WORKFLOW_URL ? { url: env.AGENTSTATE_WORKFLOW_URL } : {}),
    ...(env.AGENTSTATE_WORKFLOW_SCHEMA ? { schema: env.AGENTSTATE_WORKFLOW_SCHEMA } : {}),
  });
  try {
    return await instance.events.verify();
  } finally {
    await instance.close();
  }
}
