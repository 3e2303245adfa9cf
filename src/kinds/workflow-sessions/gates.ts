// The workflow-state skill's enforcement gates A–H as pure checks over the state files of a project
// (`.copilot/state/*.json`, read and parsed by the caller; `gateFile` parses one). Each returns
// { gate, ok, failures } where every failure is one human-readable line naming the file. Bodies are read
// defensively: a file that does not match the schema yields failures, never a crash.
//
// What each gate checks here:
//   A Start        the workflow's file exists, parses, has a sessions array and an active session that
//                  activeSessionId names.
//   B Transition   the file is in sync: it carries an agentstate stamp; when the store's latest version
//                  is given, the file shows that version and exactly that body (no drift either way);
//                  updatedAt is not older than anything recorded in the file; with `now` and `maxAgeMs`,
//                  the active session changed within maxAgeMs.
//   C Resume       activeSessionId resolves to the active session; no delegation is still in-progress.
//   D New task     every session but the last is closed (completed or abandoned, with endedAt); at most
//                  one is active; the latest session carries the directives of the most recent completed
//                  session before it.
//   E Completion   no session in any state file is active (the workflow filter does not apply).
//   F Pre-deleg.   there is an active session to record delegations in, every delegation has id, agent,
//                  task and startedAt, and `options.delegation` (the one about to be spawned), if given,
//                  is persisted in-progress in the active session.
//   G Post-deleg.  every completed delegation has a resultSummary and outputArtifacts (failed ones a
//                  resultSummary); `options.delegation` (the one that returned), if given, is no longer
//                  in-progress.
//   H Directives   every session holds each active directive of the most recent completed session before
//                  it (directives are cumulative until revoked).
// F, G and H are for orchestrator agents; callers that are not orchestrators need not run them.

import fastJsonPatch from 'fast-json-patch';
import type { FileStamp } from '../../core/kind.js';
import type { Json, JsonObject } from '../../core/types.js';
import { deepEqual, isPlainObject } from '../rules.js';
import { sessionsFile } from './file.js';
import { latestTime, type WorkflowSessions } from './model.js';

export const GATES = ['A', 'B', 'C', 'D', 'E', 'F', 'G', 'H'] as const;
export type Gate = (typeof GATES)[number];

/** One state file as the caller read it: its body (and stamp), or why it could not be parsed. */
export interface GateFile {
  path: string;
  body?: JsonObject;
  stamp?: FileStamp | null;
  parseError?: string;
}

export interface GateOptions {
  /** The workflow being worked on: gates A–D and F–H look at its file only (E always scans every file). */
  workflow?: string;
  /** Gate B: the store's latest version of each workflow document, by workflow id. */
  store?: Record<string, { version: number; body: JsonObject }>;
  /** Gate B: epoch ms now and the longest an active session may go unchanged (both needed to apply). */
  now?: number;
  maxAgeMs?: number;
  /** Gate F: the delegation about to be spawned. Gate G: the delegation that just returned. */
  delegation?: string;
}

export interface GateResult {
  gate: Gate;
  ok: boolean;
  failures: string[];
}

/** Parses file text into a GateFile, keeping a parse error as data. */
export function gateFile(path: string, text: string): GateFile {
  try {
    const { body, stamp } = sessionsFile.parse(text);
    return { path, body, stamp };
  } catch (err) {
    return { path, parseError: (err as Error).message };
  }
}

// ---------------------------------------------------------------------------------------------------
// Defensive readers

type Obj = Record<string, Json>;
const objects = (v: Json | undefined): Obj[] => (Array.isArray(v) ? v.filter(isPlainObject) : []);
const str = (v: Json | undefined): string | undefined => (typeof v === 'string' ? v : undefined);
const sessionsOf = (b: JsonObject): Obj[] => objects(b.sessions);
const closed = (s: Obj) => s.status === 'completed' || s.status === 'abandoned';
const name = (s: Obj) => `${str(s.id) ?? '?'}${str(s.label) ? ` "${str(s.label)}"` : ''}`;

/** The workflow id a file belongs to (from its path). */
export function workflowOf(path: string): string {
  return (
    sessionsFile.idFromPath(path) ??
    path
      .split(/[/\\]/)
      .pop()!
      .replace(/\.json$/, '')
  );
}

/** Active directives of the most recent completed session before index `before`. */
function carried(sessions: Obj[], before: number): Obj[] {
  for (let i = before - 1; i >= 0; i--) {
    const s = sessions[i];
    if (s?.status === 'completed') return objects(s.directives).filter((d) => d.status === 'active');
  }
  return [];
}

function missingDirectives(sessions: Obj[], i: number): Obj[] {
  const have = new Set(objects(sessions[i]?.directives).map((d) => d.id));
  return carried(sessions, i).filter((d) => !have.has(d.id ?? null));
}

// ---------------------------------------------------------------------------------------------------
// Gates

type Check = (f: { path: string; body: JsonObject; stamp: FileStamp | null }, o: GateOptions) => string[];

const gateA: Check = ({ body }) => {
  if (!Array.isArray(body.sessions)) return ['has no sessions array'];
  const active = sessionsOf(body).filter((s) => s.status === 'active');
  if (active.length === 0) return ['has no active session: start one before the first major step'];
  const id = str(active[0]?.id);
  return body.activeSessionId === id
    ? []
    : [`activeSessionId is ${JSON.stringify(body.activeSessionId ?? null)} but the active session is ${id}`];
};

const gateB: Check = ({ path, body, stamp }, o) => {
  const out: string[] = [];
  const wf = workflowOf(path);
  if (!stamp) out.push('carries no agentstate stamp: it was not written through the store (import it)');
  const stored = o.store?.[wf];
  if (o.store && !stored) out.push(`the store has no workflow-sessions/${wf}: import the file`);
  if (stored && stamp) {
    if (stamp.version < stored.version) {
      out.push(`shows version ${stamp.version} but the store is at ${stored.version}: re-export it`);
    } else if (stamp.version > stored.version) {
      out.push(`claims version ${stamp.version} but the store is at ${stored.version}: the stamp is wrong`);
    } else if (!deepEqual(body, stored.body)) {
      const paths = [...new Set(fastJsonPatch.compare(stored.body, body).map((p) => p.path))];
      out.push(
        `differs from version ${stored.version} in the store at ${paths.slice(0, 5).join(', ')}${paths.length > 5 ? ', …' : ''}: import it (or re-export to discard)`,
      );
    }
  }
  const updated = typeof body.updatedAt === 'string' ? Date.parse(body.updatedAt) : Number.NaN;
  if (Number.isNaN(updated)) out.push('has no valid updatedAt');
  else {
    const latest = latestTime(body as unknown as WorkflowSessions);
    if (latest > updated) {
      out.push(
        `updatedAt ${String(body.updatedAt)} is older than a change recorded at ${new Date(latest).toISOString()}`,
      );
    }
  }
  if (o.now !== undefined && o.maxAgeMs !== undefined) {
    for (const s of sessionsOf(body).filter((x) => x.status === 'active')) {
      const t = Date.parse(str(s.updatedAt) ?? str(s.startedAt) ?? '');
      if (!Number.isNaN(t) && o.now - t > o.maxAgeMs) {
        out.push(
          `${name(s)} unchanged for ${Math.round((o.now - t) / 60_000)} min (limit ${Math.round(o.maxAgeMs / 60_000)})`,
        );
      }
    }
  }
  return out;
};

const gateC: Check = ({ body }) => {
  const out: string[] = [];
  const sessions = sessionsOf(body);
  const id = body.activeSessionId;
  const active = sessions.filter((s) => s.status === 'active');
  if (id === null || id === undefined) {
    if (active.length > 0) out.push(`activeSessionId is null but ${active.map(name).join(', ')} is active`);
  } else {
    const s = sessions.find((x) => x.id === id);
    if (!s) out.push(`activeSessionId ${JSON.stringify(id)} names no session`);
    else if (s.status !== 'active')
      out.push(`activeSessionId names ${name(s)}, which is ${String(s.status)}`);
  }
  for (const s of sessions) {
    for (const d of objects(s.delegations).filter((x) => x.status === 'in-progress')) {
      out.push(
        `${str(s.id)} delegation ${str(d.id)} (${str(d.agent) ?? '?'}: ${str(d.task) ?? '?'}) is still in-progress since ${str(d.startedAt) ?? '?'}: incomplete sub-agent work`,
      );
    }
  }
  return out;
};

const gateD: Check = ({ body }) => {
  const out: string[] = [];
  const sessions = sessionsOf(body);
  sessions.forEach((s, i) => {
    if (i < sessions.length - 1 && !closed(s)) {
      out.push(
        `${name(s)} is ${String(s.status)} but a later session was started: close it (completed or abandoned) first`,
      );
    }
    if (closed(s) && typeof s.endedAt !== 'string')
      out.push(`${name(s)} is ${String(s.status)} without endedAt`);
  });
  const last = sessions.length - 1;
  if (last > 0) {
    for (const d of missingDirectives(sessions, last)) {
      out.push(
        `${str(sessions[last]?.id)} did not carry forward directive ${str(d.id)} (${JSON.stringify(d.text)})`,
      );
    }
  }
  return out;
};

const gateF: Check = ({ body }, o) => {
  const out: string[] = [];
  const sessions = sessionsOf(body);
  const active = sessions.find((s) => s.status === 'active');
  if (!active) out.push('has no active session to record delegations in');
  for (const s of sessions) {
    objects(s.delegations).forEach((d, k) => {
      const missing = ['id', 'agent', 'task', 'startedAt'].filter((f) => typeof d[f] !== 'string');
      if (missing.length > 0)
        out.push(`${str(s.id)} delegation ${str(d.id) ?? `#${k}`} lacks ${missing.join(', ')}`);
    });
  }
  if (o.delegation !== undefined && active) {
    const d = objects(active.delegations).find((x) => x.id === o.delegation);
    if (!d)
      out.push(
        `delegation ${o.delegation} is not persisted in ${str(active.id)}: record it in-progress before spawning`,
      );
    else if (d.status !== 'in-progress')
      out.push(`delegation ${o.delegation} is ${String(d.status)}, not in-progress`);
  }
  return out;
};

const gateG: Check = ({ body }, o) => {
  const out: string[] = [];
  let found = false;
  for (const s of sessionsOf(body)) {
    for (const d of objects(s.delegations)) {
      if (d.id === o.delegation) {
        found = true;
        if (d.status === 'in-progress') {
          out.push(
            `delegation ${str(d.id)} (${str(d.agent) ?? '?'}) is still in-progress: record its status, result summary and outputArtifacts`,
          );
        }
      }
      if (d.status === 'in-progress') continue;
      if (typeof d.resultSummary !== 'string')
        out.push(`${str(s.id)} delegation ${str(d.id)} is ${String(d.status)} without a resultSummary`);
      if (d.status === 'completed' && !Array.isArray(d.outputArtifacts)) {
        out.push(`${str(s.id)} delegation ${str(d.id)} is completed without outputArtifacts`);
      }
    }
  }
  if (o.delegation !== undefined && !found) out.push(`delegation ${o.delegation} is not recorded`);
  return out;
};

const gateH: Check = ({ body }) => {
  const out: string[] = [];
  const sessions = sessionsOf(body);
  sessions.forEach((s, i) => {
    for (const d of missingDirectives(sessions, i)) {
      out.push(
        `${str(s.id)} is missing directive ${str(d.id)} (${JSON.stringify(d.text)}) carried from the most recent completed session`,
      );
    }
  });
  return out;
};

const gateE: Check = ({ body }) =>
  sessionsOf(body)
    .filter((s) => s.status === 'active')
    .map((s) => {
      const open = objects(s.todos).filter((t) => t.status !== 'completed').length;
      const phase = str(s.currentPhase);
      return `${name(s)} is still active (${phase ? `phase ${phase}, ` : ''}${open} open todo${open === 1 ? '' : 's'}): resume it before finishing`;
    });

const CHECKS: Record<Gate, Check> = {
  A: gateA,
  B: gateB,
  C: gateC,
  D: gateD,
  E: gateE,
  F: gateF,
  G: gateG,
  H: gateH,
};

/**
 * Checks one gate over the state files. Unreadable files fail every gate that looks at them (their state
 * cannot be verified).
 * @example checkGate('E', files) → { gate: 'E', ok: false, failures: ['.copilot/state/deploy.json: session-2 "ship" is still active (…)'] }
 */
export function checkGate(gate: Gate, files: readonly GateFile[], options: GateOptions = {}): GateResult {
  const check = CHECKS[gate];
  const scoped =
    gate === 'E' || options.workflow === undefined
      ? files
      : files.filter((f) => workflowOf(f.path) === options.workflow);
  const failures: string[] = [];
  if (gate !== 'E' && options.workflow !== undefined && scoped.length === 0) {
    failures.push(
      `${sessionsFile.defaultPath(options.workflow)}: does not exist (no state file, no execution)`,
    );
  } else if (gate === 'A' && scoped.length === 0) {
    failures.push('no state file in .copilot/state/: create one before the first major step');
  }
  for (const f of scoped) {
    if (f.parseError !== undefined || !f.body) {
      failures.push(`${f.path}: cannot be read: ${f.parseError ?? 'no body'}`);
      continue;
    }
    for (const line of check({ path: f.path, body: f.body, stamp: f.stamp ?? null }, options)) {
      failures.push(`${f.path}: ${line}`);
    }
  }
  return { gate, ok: failures.length === 0, failures };
}

/** Every gate, in order. */
export function checkGates(files: readonly GateFile[], options: GateOptions = {}): GateResult[] {
  return GATES.map((g) => checkGate(g, files, options));
}
