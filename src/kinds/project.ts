// The `project` input of an operation on state files (the service's file operations and the kinds' own):
// the folder that holds the state files, by default the current one.
import { resolve } from 'node:path';

export const PROJECT = {
  project: { type: 'string' },
} as const;

export const PROJECT_DOC = 'the project folder holding the state files (default: the current folder)';

/** The project folder `project` names (absolute), or the current folder. */
export const root = (project: string | undefined): string => resolve(project ?? process.cwd());
