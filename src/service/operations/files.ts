// State-file operations: the human-readable files (.grid/STATE.md, .aios/…) as views of the store: export,
// import, validate, recover, render, and a kind operation that rewrites its file (a kind's own operations on
// its files, e.g. workflow-sessions' gates, are its). The views and kinds load only when one of these runs (a
// work-item process never pays for them).
import { type ApplyInput, DOC_INPUTS } from '../../core/documents/inputs.js';
import { derivedCommand } from '../../core/input.js';
import { inputSchema, type JsonSchema } from '../../core/json-schema.js';
import { OBJECT } from '../../core/output-schemas.js';
import { PROJECT, PROJECT_DOC, root } from '../../kinds/project.js';
import { operation } from '../operation.js';
import { APPLY_INPUT } from './documents.js';

/** render_file: a document (a version of it) whose kind has a state file. */
const RENDER_INPUT = DOC_INPUTS.get;
const RENDERED_FILE: JsonSchema = {
  type: 'object',
  properties: {
    kind: { type: 'string' },
    id: { type: 'string' },
    version: { type: 'integer' },
    path: { type: 'string' },
    text: { type: 'string' },
    valid: { type: 'boolean' },
    problem: { type: 'string' },
  },
  required: ['kind', 'id', 'version', 'path', 'text', 'valid'],
  additionalProperties: false,
};

/** The inputs naming a state file: its path and, when the path does not tell it, its kind. */
const FILE_AT = { path: { type: 'string', required: true }, kind: { type: 'name' } } as const;
type FileAt = { path: string; kind?: string; project?: string };

/** The state file an input names, in its project folder. */
async function fileAt(i: FileAt) {
  const { targetOfPath } = await import('../../views/files.js');
  return targetOfPath(i.path, root(i.project), i.kind);
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
        ...FILE_AT,
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
    async run(inst, i: FileAt & { expected_version?: number; role?: string; actor?: string }) {
      const { importView } = await import('../../views/sync.js');
      return importView(inst, await fileAt(i), {
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
      { ...FILE_AT, role: { type: 'name' }, ...PROJECT },
      { project: PROJECT_DOC, role: 'check field permissions for this role' },
    ),
    output: OBJECT,
    writes: false,
    local: true,
    instance: 'none',
    async run(_inst, i: FileAt & { role?: string }) {
      const { validateView } = await import('../../views/validate.js');
      return validateView(await fileAt(i), i.role ? { role: i.role } : {});
    },
  }),
  operation({
    name: 'recover_file',
    group: 'files',
    description:
      'Restore a corrupted state file: from the store, else its last checkpoint, else git history.',
    input: inputSchema({ ...FILE_AT, ...PROJECT }, { project: PROJECT_DOC }),
    output: OBJECT,
    writes: true,
    local: true,
    async run(inst, i: FileAt) {
      const { recoverView } = await import('../../views/recover.js');
      return recoverView(inst, await fileAt(i));
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
    async run(inst, i: ApplyInput & { project?: string; export?: boolean }) {
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
      const r = await inst.docs.apply(derivedCommand<ApplyInput>('apply', i, apply, DOC_INPUTS.apply));
      const file = target && (await exportView(inst, target));
      return { ...r, file: file?.path ?? null };
    },
  }),
  operation({
    name: 'render_file',
    group: 'files',
    description:
      "A document's state file as its kind renders it (nothing written), and whether the body passes the kind's rules.",
    input: inputSchema(RENDER_INPUT, { version: 'render this version (default: the latest)' }),
    output: RENDERED_FILE,
    writes: false,
    async run(inst, i: { kind: string; id: string; version?: number }) {
      const { renderFile } = await import('../../views/sync.js');
      return renderFile(inst, i);
    },
  }),
] as const;
