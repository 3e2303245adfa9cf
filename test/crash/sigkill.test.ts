// A process SIGKILLed while holding a lease and while writing: the database opens, nothing
// acknowledged is lost, nothing half-written remains, the item is reclaimed after expiry, the chain verifies.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { openInstance } from '../../src/instance/instance.js';
import { tempDir } from '../helpers/tmp.js';

const WRITER = new URL('../fixtures/crash-writer.mjs', import.meta.url).pathname;
const dir = tempDir();

/** Runs the writer and SIGKILLs it once `shouldKill(lines)` says so; returns its stdout lines. */
function runUntilKilled(
  instDir: string,
  mode: string,
  shouldKill: (lines: string[]) => boolean,
): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [WRITER, instDir, mode]);
    const lines: string[] = [];
    let buf = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => {
      buf += d.toString();
      const parts = buf.split('\n');
      buf = parts.pop()!;
      lines.push(...parts);
      if (shouldKill(lines)) child.kill('SIGKILL');
    });
    child.stderr.on('data', (d) => (err += d));
    child.on('close', (_code, signal) => {
      if (signal === 'SIGKILL') resolve(lines);
      else reject(new Error(`writer ended without being killed: ${err}`));
    });
  });
}

async function seed(instDir: string): Promise<string> {
  const inst = await openInstance({ dir: instDir });
  const item = await inst.work.enqueue({ title: 'held when the worker dies' });
  await inst.close();
  return item.id;
}

function integrity(path: string): string {
  const db = new Database(path, { readonly: true });
  const r = db.pragma('integrity_check', { simple: true }) as string;
  db.close();
  return r;
}

describe('SIGKILL while holding a lease and writing', () => {
  it('keeps every acknowledged enqueue and reclaims the held item after the lease expires', async () => {
    const instDir = join(dir, 'enqueue');
    const heldId = await seed(instDir);
    const lines = await runUntilKilled(
      instDir,
      'enqueue',
      (l) => l.filter((x) => x.startsWith('ack ')).length >= 60,
    );
    expect(lines[0]).toBe(`claimed ${heldId}`);
    const acked = lines.filter((l) => l.startsWith('ack ')).map((l) => l.slice(4));

    expect(integrity(join(instDir, 'state.sqlite'))).toBe('ok');
    const inst = await openInstance({ dir: instDir });
    try {
      for (const id of acked) expect((await inst.work.get(id)).id).toBe(id);
      expect((await inst.events.verify()).ok).toBe(true);
      // Every item in the table has its enqueue event: no half-written transition.
      const items = await inst.work.list({ status: 'pending', limit: 100_000 });
      const enqueued = new Set(
        (await inst.events.read({ type: 'work_item_enqueued', limit: 100_000 })).map((e) => e.work_item_id),
      );
      for (const item of items) expect(enqueued.has(item.id)).toBe(true);

      // Still leased to the dead worker until the lease runs out.
      const held = await inst.work.get(heldId);
      expect(held).toMatchObject({ status: 'in_flight', lease_owner: 'doomed' });
      const wait = Date.parse(held.lease_expires_at!) - Date.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait + 20));
      const reclaimed = await inst.work.claim({ id: heldId, worker: 'survivor' });
      expect(reclaimed).toMatchObject({ id: heldId, attempts: 2, lease_owner: 'survivor' });
      const types = (await inst.events.read({ work_item_id: heldId })).map((e) => e.type);
      expect(types).toEqual([
        'work_item_enqueued',
        'work_item_claimed',
        'work_item_reclaimed',
        'work_item_claimed',
      ]);
      await inst.work.resolve({ id: heldId, worker: 'survivor', status: 'done' });
      expect((await inst.events.verify()).ok).toBe(true);
    } finally {
      await inst.close();
    }
  });

  it('a batch killed mid-transaction leaves no trace; acknowledged batches are whole', async () => {
    const instDir = join(dir, 'batch');
    await seed(instDir);
    // Kill while the second batch is being written (after the first was acknowledged).
    const lines = await runUntilKilled(instDir, 'batch', (l) => l.includes('batch-start 1'));
    const acked = lines.filter((l) => l.startsWith('batch-ack '));
    expect(acked.length).toBe(1);
    const lastAckedPosition = Number(acked[0]!.split(' ')[2]);

    expect(integrity(join(instDir, 'state.sqlite'))).toBe('ok');
    const inst = await openInstance({ dir: instDir });
    try {
      const head = await inst.events.head();
      // Either the whole second batch committed before the kill landed, or none of it did.
      expect([lastAckedPosition, lastAckedPosition + 50_000]).toContain(head!.position);
      expect((await inst.events.read({ type: 'bulk', limit: 100_000 })).length % 50_000).toBe(0);
      const v = await inst.events.verify();
      expect(v).toMatchObject({ ok: true, events: head!.position });
    } finally {
      await inst.close();
    }
  });
});
