// A World hook's token resumes the hook as a webhook URL would, so the store's views never show it: the
// events of a run read through read_events and watch_events (the operations under the CLI, MCP, HTTP, SSE and
// the dashboard) carry it masked, on both backends. The stored event is untouched: the World still finds the
// hook by its token, and verify still checks the chain over the real bytes.
import { afterAll, describe, expect, it } from 'vitest';
import { HOOK_TOKEN_MASK, workflowRunStream } from '../../src/core/codecs/workflow-events/codec.js';
import type { EventRecord } from '../../src/core/types.js';
import type { Instance } from '../../src/instance/instance.js';
import { runOperation } from '../../src/service/invoke.js';
import type { EventWatch } from '../../src/service/operations/events.js';
import { createWorldStorage } from '../../src/workflow-world/storage.js';
import { backendsForThisFile } from '../helpers/backends.js';

const backends = await backendsForThisFile();
const TOKEN = 'tok|s3cret+ü 漢';
const open: Instance[] = [];
afterAll(async () => {
  await Promise.all(open.map((i) => i.close()));
});

describe.each(backends)('$name: a hook token in the views', (b) => {
  it('read_events and watch_events mask it; the World and verify still see the real one', async () => {
    const inst = await b.open();
    open.push(inst);
    const s = createWorldStorage(inst);
    const created = await s.events.create(null, {
      eventType: 'run_created',
      eventData: { deploymentId: 'd', workflowName: 'w', input: new Uint8Array([1]) },
    } as never);
    const runId = created.run!.runId;
    await s.events.create(runId, { eventType: 'run_started' } as never);
    await s.events.create(runId, {
      eventType: 'hook_created',
      correlationId: 'hook|1',
      eventData: { token: TOKEN, metadata: new Uint8Array([2]) },
    } as never);

    const read = (await runOperation(inst, 'read_events', {
      stream: workflowRunStream(runId),
    })) as EventRecord[];
    expect(read.map((e) => (e.data as { event_type: string }).event_type)).toEqual([
      'run_created',
      'run_started',
      'hook_created',
    ]);
    expect(JSON.stringify(read)).not.toContain('s3cret');
    expect((read[2]!.data as { event_data: { token: string } }).event_data.token).toBe(HOOK_TOKEN_MASK);

    const controller = new AbortController();
    const watch = (await runOperation(
      inst,
      'watch_events',
      { after: 0 },
      { signal: controller.signal, pollMs: 5 },
    )) as EventWatch;
    const seen: EventRecord[] = [];
    for await (const e of watch.events) {
      seen.push(e);
      if (seen.length === 3) break;
    }
    controller.abort();
    expect(JSON.stringify(seen)).not.toContain('s3cret');

    expect((await s.hooks.getByToken(TOKEN)).runId).toBe(runId);
    expect((await inst.events.verify()).ok).toBe(true);
  });
});
