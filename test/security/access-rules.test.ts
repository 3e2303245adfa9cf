// The access matrix (src/auth/access.ts) and a principal's attribution (src/auth/attribution.ts) as rules (the edges' tests run them through HTTP and
// MCP): a principal may name itself as the actor, its own actor kind, and its own name or `<name>/…` as the
// worker, and nothing else; every refusal says which rule and what to do. Written for the mutants Stryker
// found alive (reports/mutation/README.md): an agent whose worker is exactly its name, an actor or actor kind
// given equal to the principal's own, a worker that is not a string, and the refusals' messages.
import { describe, expect, it } from 'vitest';
import { checkAccess, OWNER, type Principal } from '../../src/auth/access.js';
import { attribute, ownsWorker, principalWriter } from '../../src/auth/attribution.js';
import { isAgentStateError } from '../../src/errors.js';
import { refusal } from '../helpers/refusals.js';

const agent: Principal = { name: 'planner|ü+1', role: 'agent', read_only: false };
const human: Principal = { name: 'ada', role: 'human', read_only: false };
const reader: Principal = { name: 'viewer', role: 'human', read_only: true };
const props = { actor: {}, actor_kind: {}, worker: {}, id: {} };
/** A principal's call through the one attribution policy, as HTTP and the dashboard make it. */
const attributeTo = (p: Principal, op: string, properties: object, input: Record<string, unknown>) =>
  attribute(op, properties as Record<string, unknown>, input, principalWriter(p)!);

describe('attribution of a principal’s calls', () => {
  it('leaves the owner’s input as given (no writer), as the CLI’s', () => {
    expect(principalWriter(OWNER)).toBeNull();
  });

  it('takes an actor, actor kind and worker equal to the principal’s own as given', () => {
    expect(
      attributeTo(agent, 'claim', props, {
        actor: agent.name,
        actor_kind: 'model',
        worker: agent.name,
        id: 'x',
      }),
    ).toEqual({ actor: agent.name, actor_kind: 'model', worker: agent.name, id: 'x' });
    expect(attributeTo(human, 'resolve', props, { actor: 'ada', actor_kind: 'human' })).toEqual({
      actor: 'ada',
      actor_kind: 'human',
      worker: 'ada',
    });
  });

  it('lets an agent use its own name or <name>/<anything> as the worker, not a lookalike', () => {
    expect(ownsWorker(agent.name, agent.name)).toBe(true);
    expect(ownsWorker(agent.name, `${agent.name}/w-2`)).toBe(true);
    expect(ownsWorker(agent.name, `${agent.name}x`)).toBe(false);
    expect(attributeTo(agent, 'claim', props, { worker: `${agent.name}/w-2` }).worker).toBe(
      `${agent.name}/w-2`,
    );
  });

  it('refuses an agent’s worker that is not a string with PERMISSION_DENIED, not a TypeError', () => {
    for (const worker of [5, null, { name: agent.name }, [agent.name]]) {
      const err = refusal(() => attributeTo(agent, 'claim', props, { worker }));
      expect(isAgentStateError(err) && err.code, JSON.stringify(worker)).toBe('PERMISSION_DENIED');
    }
  });

  it('says in each refusal whose field it is and what the principal writes as', () => {
    const actor = refusal(() => attributeTo(agent, 'append_event', props, { actor: 'someone-else' }));
    expect(actor.message).toBe(
      `append_event: actor "someone-else" is not yours: ${agent.name} writes as actor ${agent.name}`,
    );
    const kind = refusal(() => attributeTo(agent, 'append_event', props, { actor_kind: 'human' }));
    expect(kind.message).toBe(
      `append_event: actor_kind "human" is not yours: ${agent.name} writes as actor_kind model`,
    );
    expect(actor.details).toEqual({ operation: 'append_event', field: 'actor', principal: agent.name });
    const worker = refusal(() => attributeTo(agent, 'claim', props, { worker: 'other' }));
    expect(worker.details).toEqual({ operation: 'claim', field: 'worker', principal: agent.name });
    expect(worker.message).toBe(
      `claim: worker "other" is not yours: ${agent.name} works as ${agent.name} or ${agent.name}/<anything>`,
    );
  });
});

describe('checkAccess', () => {
  it('says why: a read-only principal and a write, a non-admin and an admin operation', () => {
    expect(refusal(() => checkAccess(reader, { name: 'claim', writes: true })).message).toBe(
      'claim writes, and viewer is a read-only principal',
    );
    expect(refusal(() => checkAccess(human, { name: 'prune', writes: true })).message).toBe(
      'prune is for admins, and ada is human',
    );
    expect(() => checkAccess(reader, { name: 'list_items', writes: false })).not.toThrow();
  });
});
