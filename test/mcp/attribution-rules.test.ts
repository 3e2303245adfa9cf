// What the MCP edge writes a call as (src/mcp/attribution.ts's writer through src/auth/attribution.ts), as rules: the fields it owns are refused from
// arguments with a message naming the field (traceparent's saying where it comes from), a named principal's
// session holds only its own workers (not a lookalike, not a non-string), the session's worker, actor and
// actor kind are filled in, and a model write's provenance keeps the caller's run and step unless they are
// empty, names the host's model, client and principal only when known. Written for the mutants Stryker
// found alive (reports/mutation/README.md).
import { describe, expect, it } from 'vitest';
import { attribute } from '../../src/auth/attribution.js';
import { isAgentStateError } from '../../src/errors.js';
import { type CallOrigin, mcpWriter, provenance } from '../../src/mcp/attribution.js';
import { refusal } from '../helpers/refusals.js';

const props = { worker: {}, actor: {}, actor_kind: {}, provenance: {}, traceparent: {}, id: {} };
/** A tool call of claim through the one attribution policy, with the MCP writer of `o`. */
const attributed = (properties: Record<string, unknown>, args: Record<string, unknown>, o: CallOrigin) =>
  attribute('claim', properties, args, mcpWriter(o));
const origin: CallOrigin = {
  actor: 'planner|ü+1',
  ownWorkersOnly: true,
  actorKind: 'model',
  session: 'sess-1',
  request: 7,
};

describe('attributed', () => {
  it('refuses an owned field from the arguments, saying who sets it', () => {
    const tp = refusal(() => attributed(props, { traceparent: '00-abc' }, origin));
    expect(isAgentStateError(tp) && tp.code).toBe('INVALID_INPUT');
    expect(tp.message).toBe(
      "claim: traceparent is set by the MCP server from the request's params._meta.traceparent (W3C trace context), not from arguments",
    );
    expect((tp as { details?: unknown }).details).toMatchObject({ field: 'traceparent' });
    const actor = refusal(() => attributed(props, { actor: 'someone' }, origin));
    expect(actor.message).toBe(
      `claim: actor is set by the MCP server: writes through MCP are recorded as the session's (actor "planner|ü+1", actor_kind model)`,
    );
    expect((actor as { details?: unknown }).details).toMatchObject({ field: 'actor' });
  });

  it('holds a named session to its own workers: its name or <name>/…, never a lookalike or a non-string', () => {
    expect(attributed(props, { worker: 'planner|ü+1/w2' }, origin).worker).toBe('planner|ü+1/w2');
    for (const worker of ['planner|ü+1x', 'other', 5, null]) {
      const err = refusal(() => attributed(props, { worker }, origin));
      expect(isAgentStateError(err) && err.code, JSON.stringify(worker)).toBe('PERMISSION_DENIED');
      expect(err.message).toContain(
        `claim: worker ${JSON.stringify(worker)} is not yours: this session works as`,
      );
      // No principal: none named, not even as undefined.
      expect((err as { details?: unknown }).details).toStrictEqual({ field: 'worker', operation: 'claim' });
    }
    // A named principal's session is named in the refusal's details.
    const named = refusal(() => attributed(props, { worker: 'other' }, { ...origin, principal: 'ada' }));
    expect((named as { details?: unknown }).details).toEqual({
      field: 'worker',
      operation: 'claim',
      principal: 'ada',
    });
    // A session that is not a named principal's may name any worker.
    expect(attributed(props, { worker: 'other' }, { ...origin, ownWorkersOnly: false }).worker).toBe('other');
  });

  it('fills in the worker, actor and actor kind only where the operation has them', () => {
    expect(attributed(props, { id: 'x' }, origin)).toMatchObject({
      id: 'x',
      worker: 'planner|ü+1',
      actor: 'planner|ü+1',
      actor_kind: 'model',
    });
    const bare = attributed({ id: {} }, { id: 'x' }, origin);
    expect(bare).toEqual({ id: 'x' });
  });

  it('fills a provenance object the call gives, and leaves one that is no object for the schema to refuse', () => {
    expect(attributed(props, { provenance: { prompt_ref: 'p' } }, origin).provenance).toMatchObject({
      prompt_ref: 'p',
      via: 'mcp',
    });
    expect(attributed(props, { provenance: null }, origin).provenance).toBe(null);
    expect(attributed(props, { provenance: 'text' }, origin).provenance).toBe('text');
    expect(attributed(props, { provenance: ['a'] }, origin).provenance).toEqual(['a']);
  });
});

describe('provenance', () => {
  it('keeps the call’s run and step, takes the session and request for empty ones, and records the origin', () => {
    expect(provenance({ run_id: 'r|1', step_id: 's+2', prompt_ref: 'p' }, origin)).toEqual({
      run_id: 'r|1',
      step_id: 's+2',
      prompt_ref: 'p',
      via: 'mcp',
      mcp_session: 'sess-1',
      mcp_request: '7',
    });
    expect(provenance({ run_id: '', step_id: '' }, origin)).toMatchObject({
      run_id: 'sess-1',
      step_id: 'mcp-request-7',
    });
    expect(provenance({ run_id: 3 as never, step_id: 4 as never }, origin)).toMatchObject({
      run_id: 'sess-1',
      step_id: 'mcp-request-7',
    });
    expect(
      provenance(undefined, {
        ...origin,
        model: 'claude-x',
        client: { name: 'host', version: '1.2' },
        principal: 'ada',
      }),
    ).toMatchObject({ model_id: 'claude-x', mcp_client: 'host/1.2', principal: 'ada' });
    const none = provenance(undefined, origin);
    expect('principal' in none || 'model_id' in none || 'mcp_client' in none).toBe(false);
  });
});
