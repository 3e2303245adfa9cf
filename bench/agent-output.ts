// What agent-facing output costs in tokens (row 6): `agentstate resume` as a subprocess, text and --json,
// on the resume fixture (3 sessions, 100 todos, 20 decisions, 30 lessons). Tokens are estimated as
// characters / 4, the usual rule of thumb for English text and JSON.
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freshDir, REPO_ROOT, removeDir } from './lib.js';
import { resumeFixture } from './resume-fixture.js';

export interface ResumeOutput {
  textChars: number;
  textTokens: number;
  jsonChars: number;
  jsonTokens: number;
}

/** chars / 4, rounded up. */
export const tokens = (text: string): number => Math.ceil(text.length / 4);

/** Runs `node dist/cli/main.js resume <workflow>` on a project holding only the fixture's file. */
export function resumeOutput(): ResumeOutput {
  const project = freshDir('resume');
  try {
    mkdirSync(join(project, '.copilot', 'state'), { recursive: true });
    writeFileSync(
      join(project, '.copilot', 'state', 'release.json'),
      JSON.stringify(resumeFixture(), null, 2),
    );
    const run = (...extra: string[]) => {
      const r = spawnSync(
        process.execPath,
        [join(REPO_ROOT, 'dist/cli/main.js'), ...extra, 'resume', 'release', '--project', project],
        // No instance: resume reads the file.
        { encoding: 'utf8', env: { PATH: process.env.PATH ?? '', HOME: project } },
      );
      if (r.status !== 0) throw new Error(`agentstate resume failed (${r.status}): ${r.stderr}`);
      return r.stdout;
    };
    const text = run();
    const json = run('--json');
    return {
      textChars: text.length,
      textTokens: tokens(text),
      jsonChars: json.length,
      jsonTokens: tokens(json),
    };
  } finally {
    removeDir(project);
  }
}
