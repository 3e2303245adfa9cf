// ScaffoldFolders: the per-instance layout of the agent bundle, created idempotently.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { relative } from 'node:path';
import type { Instance } from './instance.js';

/** What `scaffold` did: the instance, the paths and migrations it added, and its store. */
export interface ScaffoldResult {
  instance_dir: string;
  host: string;
  name: string;
  /** Paths created by this call, relative to the instance folder (empty when all existed). */
  created: string[];
  /** Migrations applied by this call. */
  migrations_applied: string[];
  /** The store: the SQLite file, or the PostgreSQL URL (secrets redacted by redactUrl). */
  db: string;
}

function claudeTemplate(inst: Instance): string {
  return `# ${inst.name}

Instance state for agent \`${inst.name}\` on host \`${inst.host}\`, kept by agentstate.

- Work items, events and versioned state live in the store (\`${inst.backend.name === 'sqlite' ? 'state.sqlite' : 'the shared PostgreSQL database'}\`); never edit it by hand, use \`agentstate\` or the workflows.
- \`dashboard.md\` is regenerated from the store (\`agentstate dashboard\`).
- \`retros/\` holds retrospectives (\`agentstate retro --since 24h\`).
- \`context/\` is yours for context files the agent loads.
`;
}

function personaTemplate(inst: Instance): string {
  return `# Persona: ${inst.name}

Describe who this agent is, what it is responsible for, and how it should work.
`;
}

/** Creates the instance layout (folders, CLAUDE.md, persona.md); never overwrites existing files. */
export function scaffold(inst: Instance): ScaffoldResult {
  const p = inst.paths;
  const created: string[] = [];
  for (const dir of [p.retros, p.context]) {
    if (!existsSync(dir)) {
      mkdirSync(dir, { recursive: true });
      created.push(`${relative(p.dir, dir)}/`);
    }
  }
  const files: Array<[string, string]> = [
    [p.claudeMd, claudeTemplate(inst)],
    [p.persona, personaTemplate(inst)],
  ];
  for (const [path, content] of files) {
    try {
      writeFileSync(path, content, { flag: 'wx' });
      created.push(relative(p.dir, path));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
  // A fresh SQLite database is a file this call created; a PostgreSQL store has no file in the folder.
  if (inst.backend.name === 'sqlite' && inst.backend.migrationsApplied.length > 0)
    created.unshift('state.sqlite');
  return {
    instance_dir: p.dir,
    host: inst.host,
    name: inst.name,
    created,
    migrations_applied: inst.backend.migrationsApplied,
    db: inst.storage,
  };
}
