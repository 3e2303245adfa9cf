// State-file operations: the human-readable files (.grid/STATE.md, .aios/…, .copilot/state/…) as views of
// the store: export, import, validate, recover, a kind operation that rewrites its file, gates and resume.
// The views and kinds load only when one of these runs (a work-item process never pays for them).
import { join, resolve } from 'node:path';
import type { CommitInput, JsonObject } from '../../core/types.js';
import { NotFoundError } from '../../errors.js';
import type { Instance } from '../../instance/instance.js';
import { inputSchema } from '../json-schema.js';
import { operation } from '../operation.js';
import { OBJECT } from '../output-schemas.js';
import { APPLY_INPUT } from './documents.js';

const PROJECT = {
  project: { type: 'string' },
} as const;
const PROJECT_DOC = 'the project folder holding the state files (default: the current folder)';
const root = (project: string | undefined): string => resolve(project ?? process.cwd());

const SESSIONS = 'workflow-sessions';

/** The project's `.copilot/state/*.json` files, each parsed or with why it could not be. */
async function readStateFiles(project: string) {
  const [{ existsSync, readdirSync }, { confineToProject }, { readViewFile }, { gateFile }] =
    await Promise.all([
      import('node:fs'),
      import('../../views/confine.js'),
      import('../../views/files.js'),
      import('../../kinds/workflow-sessions/gates.js'),
    ]);
  const dir = join(project, '.copilot', 'state');
  if (!existsSync(dir)) return [];
  return readdirSync(confineToProject(project, dir))
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => {
      const path = join(dir, f);
      try {
        return gateFile(path, readViewFile(path, project));
      } catch (err) {
        return { path, parseError: (err as Error).message };
      }
    });
}

export const FILE_OPERATIONS = [
  operation({
    name: 'export_file',
    group: 'files',
    description:
      "Write a document to its kind's file (e.g. .grid/STATE.md), stamped with the version it shows.",
    input: inputSchema(
      { kind: { type: 'name', required: true }, id: { type: 'name', required: true }, ...PROJECT },
      { project: PROJECT_DOC },
    ),
    output: OBJECT,
    writes: true,
    idempotent: true,
    local: true,
    async run(inst, i: { kind: string; id: string; project?: string }) {
      const [{ targetFor }, { exportView }] = await Promise.all([
        import('../../views/files.js'),
        import('../../views/sync.js'),
      ]);
      return exportView(inst, targetFor(i.kind, i.id, root(i.project)));
    },
  }),
  operation({
    name: 'import_file',
    group: 'files',
    description:
      'Commit a hand-edited state file against the version it was exported from (STATE_CONFLICT with a diff if stale).',
    input: inputSchema(
      {
        path: { type: 'string', required: true },
        kind: { type: 'name' },
        expected_version: { type: 'int', min: 0 },
        role: { type: 'name' },
        actor: { type: 'name' },
        ...PROJECT,
      },
      { project: PROJECT_DOC, expected_version: 'commit against this version instead of the file stamp' },
    ),
    output: OBJECT,
    writes: true,
    local: true,
    async run(
      inst,
      i: {
        path: string;
        kind?: string;
        expected_version?: number;
        role?: string;
        actor?: string;
        project?: string;
      },
    ) {
      const [{ targetOfPath }, { importView }] = await Promise.all([
        import('../../views/files.js'),
        import('../../views/sync.js'),
      ]);
      return importView(inst, targetOfPath(i.path, root(i.project), i.kind), {
        ...(i.expected_version !== undefined && { expected_version: i.expected_version }),
        ...(i.role !== undefined && { role: i.role }),
        ...(i.actor !== undefined && { actor: i.actor }),
      });
    },
  }),
  operation({
    name: 'validate_file',
    group: 'files',
    description: 'Check a state file against its kind (format, schema, rules) without touching the store.',
    input: inputSchema(
      {
        path: { type: 'string', required: true },
        kind: { type: 'name' },
        role: { type: 'name' },
        ...PROJECT,
      },
      { project: PROJECT_DOC, role: 'check field permissions for this role' },
    ),
    output: OBJECT,
    writes: false,
    local: true,
    instance: 'none',
    async run(_inst, i: { path: string; kind?: string; role?: string; project?: string }) {
      const [{ targetOfPath }, { validateView }] = await Promise.all([
        import('../../views/files.js'),
        import('../../views/validate.js'),
      ]);
      return validateView(targetOfPath(i.path, root(i.project), i.kind), i.role ? { role: i.role } : {});
    },
  }),
  operation({
    name: 'recover_file',
    group: 'files',
    description:
      'Restore a corrupted state file: from the store, else its last checkpoint, else git history.',
    input: inputSchema(
      { path: { type: 'string', required: true }, kind: { type: 'name' }, ...PROJECT },
      { project: PROJECT_DOC },
    ),
    output: OBJECT,
    writes: true,
    local: true,
    async run(inst, i: { path: string; kind?: string; project?: string }) {
      const [{ targetOfPath }, { recoverView }] = await Promise.all([
        import('../../views/files.js'),
        import('../../views/recover.js'),
      ]);
      return recoverView(inst, targetOfPath(i.path, root(i.project), i.kind));
    },
  }),
  operation({
    name: 'apply_file',
    group: 'files',
    description:
      "Run a kind's named operation as one CAS commit and rewrite the document's file (the target is checked before the commit).",
    input: inputSchema(
      { ...APPLY_INPUT, ...PROJECT, export: { type: 'bool' } },
      {
        project: PROJECT_DOC,
        export: 'rewrite the file after the commit (default true)',
      },
    ),
    output: OBJECT,
    writes: true,
    local: true,
    async run(
      inst,
      i: {
        kind: string;
        id: string;
        operation: string;
        args?: Record<string, unknown>;
        actor?: string;
        actor_kind?: CommitInput['actor_kind'];
        role?: string;
        reason?: string;
        project?: string;
        export?: boolean;
      },
    ) {
      const [{ targetFor }, { exportView }, { getKind }] = await Promise.all([
        import('../../views/files.js'),
        import('../../views/sync.js'),
        import('../../kinds/registry.js'),
      ]);
      const { project, export: rewrite, ...apply } = i;
      // Where the file goes is checked before the commit: a refused id or a path that leads out of the
      // project (a `.grid` symlink elsewhere) leaves the store unchanged too.
      const target =
        rewrite === false || !getKind(i.kind).file ? null : targetFor(i.kind, i.id, root(project));
      const r = await inst.docs.apply(apply);
      const file = target && (await exportView(inst, target));
      return { ...r, file: file?.path ?? null };
    },
  }),
  operation({
    name: 'gate',
    group: 'files',
    description:
      "Check a workflow-state gate (A-H, or all) over the project's .copilot/state files and, with an instance, the store.",
    input: inputSchema(
      {
        gate: { type: 'string', required: true, enum: ['A', 'B', 'C', 'D', 'E', 'F', 'G', 'H', 'all'] },
        workflow: { type: 'name' },
        delegation: { type: 'name' },
        max_age_ms: { type: 'int', min: 1 },
        ...PROJECT,
      },
      {
        project: PROJECT_DOC,
        delegation: 'gates F/G: the delegation about to be spawned / just returned',
        max_age_ms: 'gate B: the longest the active session may go unchanged',
      },
    ),
    output: { anyOf: [OBJECT, { type: 'array', items: OBJECT }] },
    writes: false,
    local: true,
    instance: 'optional',
    async run(
      inst: Instance | null,
      i: { gate: string; workflow?: string; delegation?: string; max_age_ms?: number; project?: string },
    ) {
      const { checkGate, GATES } = await import('../../kinds/workflow-sessions/gates.js');
      const files = await readStateFiles(root(i.project));
      let store: Record<string, { version: number; body: JsonObject }> | undefined;
      if (inst) {
        store = {};
        for (const d of await inst.docs.list({ kind: SESSIONS })) {
          const doc = await inst.docs.get({ kind: SESSIONS, id: d.id });
          store[d.id] = { version: doc.version, body: doc.body };
        }
      }
      const gates = i.gate === 'all' ? [...GATES] : [i.gate as (typeof GATES)[number]];
      const results = gates.map((g) =>
        checkGate(g, files, {
          ...(i.workflow !== undefined && { workflow: i.workflow }),
          ...(store && { store }),
          ...(i.delegation !== undefined && { delegation: i.delegation }),
          ...(i.max_age_ms !== undefined && { now: Date.now(), maxAgeMs: i.max_age_ms }),
        }),
      );
      return results.length === 1 ? results[0]! : results;
    },
  }),
  operation({
    name: 'resume_workflow',
    group: 'files',
    description:
      'What an agent needs to pick a workflow up: active session, phase, open todos, blockers, lessons, directives.',
    input: inputSchema({ workflow: { type: 'name', required: true }, ...PROJECT }, { project: PROJECT_DOC }),
    output: OBJECT,
    writes: false,
    local: true,
    instance: 'optional',
    async run(inst: Instance | null, i: { workflow: string; project?: string }) {
      const [{ existsSync }, { checkFileId }, { gateFile }, { resumeSummary }, { readViewFile }] =
        await Promise.all([
          import('node:fs'),
          import('../../kinds/file-id.js'),
          import('../../kinds/workflow-sessions/gates.js'),
          import('../../kinds/workflow-sessions/resume.js'),
          import('../../views/files.js'),
        ]);
      // The store is the truth; the file is the fallback when this store never saw the workflow.
      let body = inst ? ((await inst.docs.find(SESSIONS, i.workflow))?.body ?? null) : null;
      if (!body) {
        // The workflow names the file: the same id rule as the kind's, so `../../package` reads nothing.
        checkFileId(i.workflow, SESSIONS);
        const project = root(i.project);
        const path = join(project, '.copilot', 'state', `${i.workflow}.json`);
        const f = existsSync(path) ? gateFile(path, readViewFile(path, project)) : null;
        if (f?.parseError) {
          throw new NotFoundError(`${path} cannot be read: ${f.parseError}; try agentstate recover ${path}`);
        }
        body = f?.body ?? null;
      }
      if (!body) {
        throw new NotFoundError(
          `no workflow ${i.workflow}: neither the store nor .copilot/state/${i.workflow}.json has it`,
        );
      }
      return resumeSummary(body);
    },
  }),
] as const;
