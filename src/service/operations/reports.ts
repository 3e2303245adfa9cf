// Operations on the instance as a whole: scaffolding it, its dashboard and retrospectives, and moving it
// between backends through a portable dump.

import { inputSchema } from '../../core/json-schema.js';
import { OBJECT } from '../../core/output-schemas.js';
import { RETRO_INPUT, type RetroInput } from '../../reports/retro.js';
import { operation } from '../operation.js';

export const REPORT_OPERATIONS = [
  operation({
    name: 'list_instances',
    group: 'instance',
    description:
      'The instances a store holds: with url those of its PostgreSQL schema, else every <root>/<host>/agents/<name>; creates nothing.',
    input: inputSchema(
      { url: { type: 'string', max: 10_000 }, root: { type: 'string', max: 10_000 } },
      { url: 'postgres://… (default AGENTSTATE_URL)', root: 'folder holding <host>/agents/<name>' },
    ),
    output: { type: 'array', items: OBJECT },
    writes: false,
    local: true,
    instance: 'none',
    async run(_inst, i: { url?: string; root?: string }) {
      const { listInstances } = await import('../../instance/list.js');
      return listInstances({ ...(i.url ? { url: i.url } : {}), ...(i.root ? { root: i.root } : {}) });
    },
  }),
  operation({
    name: 'scaffold',
    group: 'instance',
    description: 'Create the instance layout and database (idempotent) and write its dashboard.',
    input: inputSchema({}),
    output: OBJECT,
    writes: true,
    idempotent: true,
    instance: 'create',
    async run(inst) {
      const [{ scaffold }, { regenerateDashboard }] = await Promise.all([
        import('../../instance/scaffold.js'),
        import('../../reports/dashboard.js'),
      ]);
      const result = scaffold(inst);
      await regenerateDashboard(inst);
      return result;
    },
  }),
  operation({
    name: 'dashboard',
    group: 'reports',
    description: 'Rewrite dashboard.md from the store; returns its path and the event position it shows.',
    input: inputSchema({}),
    output: OBJECT,
    writes: true,
    idempotent: true,
    async run(inst) {
      const { regenerateDashboard } = await import('../../reports/dashboard.js');
      return regenerateDashboard(inst);
    },
  }),
  operation({
    name: 'retro',
    group: 'reports',
    description: 'Write a Markdown retrospective of a time window to retros/ and return it.',
    input: inputSchema(RETRO_INPUT, {
      since: 'ISO-8601 time, or a duration before now (default 24h before until)',
      until: 'ISO-8601 time, or a duration before now (default now)',
    }),
    output: OBJECT,
    writes: true,
    async run(inst, i: RetroInput) {
      const { retrospective } = await import('../../reports/retro.js');
      return retrospective(inst, i);
    },
  }),
  operation({
    name: 'export_instance',
    group: 'instance',
    description: 'Write every row of the instance to a portable dump file (JSON lines), with its head.',
    input: inputSchema({ path: { type: 'string', required: true } }, { path: 'the dump file to write' }),
    output: OBJECT,
    writes: false,
    local: true,
    async run(inst, i: { path: string }, { progress }) {
      const { exportInstance } = await import('../../core/portable.js');
      return exportInstance(inst.backend, { host: inst.host, name: inst.name }, i.path, progress);
    },
  }),
  operation({
    name: 'import_instance',
    group: 'instance',
    description:
      'Check a dump as verify would, load it into this empty instance and verify it; a dump that fails is refused and creates nothing.',
    input: inputSchema({ path: { type: 'string', required: true } }, { path: 'the dump file to read' }),
    output: OBJECT,
    writes: true,
    instance: 'create',
    local: true,
    async prepare(i: { path: string }, { progress }) {
      const { checkDump } = await import('../../core/portable.js');
      return checkDump(i.path, progress && ((n) => progress(n, 'checking the dump: events')));
    },
    async run(inst, _i: { path: string }, { prepared, progress }) {
      const { importInstance } = await import('../../core/portable.js');
      return importInstance(
        inst.backend,
        inst.events,
        prepared as Awaited<ReturnType<typeof import('../../core/portable.js').checkDump>>,
        progress && ((n) => progress(n, 'verifying the import: events')),
      );
    },
  }),
] as const;
