// The store's remembered copy of a document's newest version (core/documents/cache.ts) is private: a commit
// built on it never shares an object with it, so a kind's rules that fill in fields of the new body (or
// touch the previous one) and then refuse the write leave the copy as the stored version. Without that, the
// next commit on the same version would silently write the refused change along with its own.
import { afterAll, describe, expect, it } from 'vitest';
import { ValidationFailedError } from '../../src/errors.js';
import type { JsonObject } from '../../src/index.js';
import { registerKind } from '../../src/kinds/registry.js';
import { backendsForThisFile } from '../helpers/backends.js';

registerKind({
  name: 'cache-probe',
  description: 'test kind: fills in nested fields of the body, then may refuse it',
  schema: { type: 'object' },
  check: (next, prev) => {
    const nested = next.nested as JsonObject | undefined;
    if (nested) nested.filled = ((nested.filled as number | undefined) ?? 0) + 1;
    if (prev && typeof prev.nested === 'object' && prev.nested !== null)
      (prev.nested as JsonObject).seen = true;
    if (next.refuse === true) throw new ValidationFailedError('refused after filling in', { rule: 'probe' });
    return undefined;
  },
});

const backends = await backendsForThisFile();

describe.each(backends)('the remembered copy of a document on $name', (b) => {
  const opened = b.open();
  afterAll(async () => (await opened).close());

  it('is not changed by a commit its kind refuses after filling in fields', async () => {
    const inst = await opened;
    const kind = 'cache-probe';
    const id = 'doc|ü+1';
    const v1 = await inst.docs.commit({ kind, id, expected_version: 0, body: { a: 1, nested: { x: 1 } } });
    expect(v1.body).toEqual({ a: 1, nested: { x: 1, filled: 1 } });
    // Refused by the kind after it filled in nested.filled and marked the previous body.
    for (const patch of [{ refuse: true }, { refuse: true, a: 5 }] as JsonObject[]) {
      await expect(
        inst.docs.commit({ kind, id, expected_version: 1, merge_patch: patch }),
      ).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
    }
    // The next commit on version 1 starts from the stored version, as a fresh store would.
    const v2 = await inst.docs.commit({ kind, id, expected_version: 1, merge_patch: { a: 2 } });
    expect(v2.body).toEqual({ a: 2, nested: { x: 1, filled: 2 } });
    const stored = await inst.docs.get({ kind, id });
    expect(stored?.body).toEqual(v2.body);
    // The answer is the caller's own: changing it changes nothing the store holds.
    (v2.body.nested as JsonObject).x = 99;
    const v3 = await inst.docs.commit({ kind, id, expected_version: 2, merge_patch: { b: true } });
    expect(v3.body).toEqual({ a: 2, b: true, nested: { x: 1, filled: 3 } });
    const verify = await inst.events.verify();
    expect(verify.ok).toBe(true);
  });
});
