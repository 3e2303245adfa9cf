// `agentstate gate` and `agentstate resume`: the workflow-state skill's gates A–H and resume summary
// over the project's .copilot/state/*.json files (and the store, when an instance is given).
import { existsSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { type Command, InvalidArgumentError } from 'commander';
import type { JsonObject } from '../core/types.js';
import { EXIT_CODES, NotFoundError } from '../errors.js';
import { type Instance, openInstance } from '../instance/instance.js';
import { checkFileId } from '../kinds/file-id.js';
import { checkGate, GATES, type Gate, type GateFile, gateFile } from '../kinds/workflow-sessions/gates.js';
import { renderResume, resumeSummary } from '../kinds/workflow-sessions/resume.js';
import { confineToProject } from '../views/confine.js';
import { readViewFile } from '../views/files.js';
import { duration, type GlobalOpts, Output } from './context.js';

const KIND = 'workflow-sessions';

function projectRoot(cmd: Command): string {
  return resolve(cmd.optsWithGlobals<{ project?: string }>().project ?? process.cwd());
}

function stateDir(root: string): string {
  return join(root, '.copilot', 'state');
}

/**
 * The project's state files. The folder must resolve inside the project (INVALID_INPUT otherwise); a file
 * that cannot be read safely (a FIFO, a device, a symlink out of the project, oversize) is a parse error
 * of that file, read no further.
 */
function readStateFiles(root: string): GateFile[] {
  const dir = stateDir(root);
  if (!existsSync(dir)) return [];
  return readdirSync(confineToProject(root, dir))
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => {
      const path = join(dir, f);
      try {
        return gateFile(path, readViewFile(path, root));
      } catch (err) {
        return { path, parseError: (err as Error).message };
      }
    });
}

/** Opens the instance when the flags or MF_* variables name one; gates work without a store too. */
async function maybeInstance(cmd: Command): Promise<Instance | null> {
  const g = cmd.optsWithGlobals<GlobalOpts>();
  const env = process.env;
  const dir = g.dir ?? (g.name === undefined ? env.MF_INSTANCE_DIR || undefined : undefined);
  const name = g.name ?? (env.MF_AGENT_NAME || undefined);
  if (dir === undefined && name === undefined) return null;
  return openInstance({
    dir,
    name,
    host: g.host ?? (env.MF_HOST || undefined),
    root: g.root ?? (env.AGENTSTATE_ROOT || undefined),
    url: g.url ?? (env.AGENTSTATE_URL || undefined),
  });
}

export function addSessionCommands(program: Command): void {
  program
    .command('gate <gate> [workflow]')
    .description(
      'check a workflow-state gate (A–H, or all) over .copilot/state/*.json; exit 0 when it holds, 3 with the failures otherwise',
    )
    .option('--delegation <id>', 'gates F/G: the delegation about to be spawned / just returned')
    .option(
      '--max-age <duration>',
      'gate B: the longest the active session may go unchanged, e.g. 30m',
      duration('--max-age'),
    )
    .action(async (gateArg: string, workflow: string | undefined, o, cmd: Command) => {
      const want = gateArg.toUpperCase();
      if (want !== 'ALL' && !(GATES as readonly string[]).includes(want)) {
        throw new InvalidArgumentError(`gate must be one of ${GATES.join(', ')} or all, got ${gateArg}`);
      }
      const out = new Output(cmd.optsWithGlobals<GlobalOpts>().json ?? false);
      const files = readStateFiles(projectRoot(cmd));
      const inst = await maybeInstance(cmd);
      try {
        let store: Record<string, { version: number; body: JsonObject }> | undefined;
        if (inst) {
          store = {};
          for (const d of await inst.docs.list({ kind: KIND })) {
            const doc = await inst.docs.get({ kind: KIND, id: d.id });
            store[d.id] = { version: doc.version, body: doc.body };
          }
        }
        const gates = (want === 'ALL' ? [...GATES] : [want]) as Gate[];
        const results = gates.map((g) =>
          checkGate(g, files, {
            ...(workflow !== undefined && { workflow }),
            ...(store && { store }),
            ...(o.delegation !== undefined && { delegation: o.delegation }),
            ...(o.maxAge !== undefined && { now: Date.now(), maxAgeMs: o.maxAge }),
          }),
        );
        out.emit(results.length === 1 ? results[0] : results, () =>
          results
            .map((r) =>
              r.ok
                ? `gate ${r.gate}: holds`
                : `gate ${r.gate}: FAILS\n${r.failures.map((f) => `  - ${f}`).join('\n')}`,
            )
            .join('\n'),
        );
        if (results.some((r) => !r.ok)) process.exitCode = EXIT_CODES.STATE_CONFLICT;
      } finally {
        await inst?.close();
      }
    });

  program
    .command('resume <workflow>')
    .description(
      'what an agent needs to pick a workflow up: active session, phase, open todos, blockers, lessons, directives',
    )
    .action(async (workflow: string, _o, cmd: Command) => {
      const out = new Output(cmd.optsWithGlobals<GlobalOpts>().json ?? false);
      const inst = await maybeInstance(cmd);
      try {
        // The store is the truth; the file is the fallback when this store never saw the workflow.
        let body = inst ? ((await inst.docs.find(KIND, workflow))?.body ?? null) : null;
        if (!body) {
          // The workflow names the file: the same id rule as the kind's, so `../../package` reads nothing.
          checkFileId(workflow, KIND);
          const root = projectRoot(cmd);
          const path = join(stateDir(root), `${workflow}.json`);
          const f = existsSync(path) ? gateFile(path, readViewFile(path, root)) : null;
          if (f?.parseError)
            throw new NotFoundError(
              `${path} cannot be read: ${f.parseError}; try agentstate recover ${path}`,
            );
          body = f?.body ?? null;
        }
        if (!body)
          throw new NotFoundError(
            `no workflow ${workflow}: neither the store nor .copilot/state/${workflow}.json has it`,
          );
        const summary = resumeSummary(body);
        out.emit(summary, () => renderResume(summary));
      } finally {
        await inst?.close();
      }
    });
}
