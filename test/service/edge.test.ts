// The edges' one pipeline (src/service/edge.ts) on a real instance: the access check comes first (a refused
// call opens nothing and writes nothing), the writer's attribution next, the edge's fit sees the attributed
// copy (never the caller's object), and the input is checked before the run; the MCP edge's positions make
// resume answer "since your last call".
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '../../src/auth/access.js';
import { principalWriter } from '../../src/auth/attribution.js';
import type { EventRecord, WorkItem } from '../../src/core/types.js';
import { isAgentStateError } from '../../src/errors.js';
import { type Instance, openInstance } from '../../src/instance/instance.js';
import { callOperation } from '../../src/service/edge.js';
import { rejection } from '../helpers/refusals.js';
import { tempDir } from '../helpers/tmp.js';

const dir = tempDir();
let inst: Instance;
beforeAll(async () => {
  inst = await openInstance({ dir, name: 'edge', create: true });
});
afterAll(() => inst.close());

const agent: Principal = { name: 'planner|ü+1', role: 'agent', read_only: false };
const reader: Principal = { name: 'viewer', role: 'human', read_only: true };

const count = async () => (await callOperation(inst, 'count_items', {})) as Record<string, number>;

describe('callOperation', () => {
  it('checks access before anything: a read-only principal’s write opens no instance and writes nothing', async () => {
    const before = await count();
    let opened = 0;
    const open = async () => {
      opened += 1;
      return inst;
    };
    const err = await callOperation(open, 'enqueue', { title: 'x' }, { principal: reader }).catch((e) => e);
    expect(isAgentStateError(err) && err.code).toBe('PERMISSION_DENIED');
    expect(opened).toBe(0);
    expect(await count()).toEqual(before);
    // A read is let in, and opens the instance once.
    await callOperation(open, 'count_items', {}, { principal: reader });
    expect(opened).toBe(1);
  });

  it('records a principal’s writes as theirs and refuses writing as someone else, before the run', async () => {
    const call = { principal: agent, writer: principalWriter(agent) };
    const item = (await callOperation(inst, 'enqueue', { title: 'by the agent' }, call)) as WorkItem;
    const [created] = (await callOperation(inst, 'read_events', {
      work_item_id: item.id,
    })) as EventRecord[];
    expect(created).toMatchObject({ actor: agent.name, data: { actor_kind: 'model' } });
    const before = await count();
    const err = await rejection(
      callOperation(inst, 'enqueue', { title: 'forged', actor: 'someone-else' }, call),
    );
    expect(isAgentStateError(err) && err.code).toBe('PERMISSION_DENIED');
    expect(await count()).toEqual(before);
  });

  it('hands the edge’s fit the attributed copy, never the caller’s object, and checks what it made', async () => {
    const given = { worker: agent.name };
    let seen: Record<string, unknown> | undefined;
    await callOperation(inst, 'claim', given, {
      principal: agent,
      writer: principalWriter(agent),
      fit: (_op, i) => {
        seen = i;
        i.lease_ms = 60_000;
      },
    });
    expect(seen).toMatchObject({ worker: agent.name, lease_ms: 60_000 });
    expect(given).toEqual({ worker: agent.name });
    // What the fit makes is checked like the rest: a field the operation does not take is refused.
    const err = await rejection(
      callOperation(inst, 'count_items', {}, { fit: (_op, i) => Object.assign(i, { nope: 1 }) }),
    );
    expect(isAgentStateError(err) && err.code).toBe('INVALID_INPUT');
  });

  it('leaves anything but an object for the operation’s check to refuse', async () => {
    for (const raw of [null, [1], 'text', 5]) {
      const err = await rejection(
        callOperation(inst, 'count_items', raw, { writer: principalWriter(agent) }),
      );
      expect(isAgentStateError(err) && err.code, JSON.stringify(raw)).toBe('INVALID_INPUT');
    }
  });

  it('answers resume since the worker’s last call when the edge keeps positions', async () => {
    const cursors = new Map<string, number>();
    const first = (await callOperation(inst, 'resume', { worker: 'w|1' }, {}, { cursors })) as {
      position: number;
    };
    expect(cursors.get('w|1')).toBe(first.position);
    await callOperation(inst, 'append_event', { type: 'note_added', data: { n: 1 } });
    const next = (await callOperation(inst, 'resume', { worker: 'w|1' }, {}, { cursors })) as {
      events: Array<{ type: string }>;
      position: number;
    };
    expect(next.events.map((e) => e.type)).toEqual(['note_added']);
    expect(cursors.get('w|1')).toBe(next.position);
    // Without positions, resume shows the newest events, not only what is new.
    const plain = (await callOperation(inst, 'resume', { worker: 'w|1' })) as { events: unknown[] };
    expect(plain.events.length).toBeGreaterThan(1);
  });
});
