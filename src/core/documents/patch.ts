// Patches of a document body: RFC 6902 JSON Patch applied one operation at a time under the store's rules
// (no reserved keys, no inherited members), and the fast-json-patch library that also computes diffs.
import { createRequire } from 'node:module';
import type FastJsonPatch from 'fast-json-patch';
import { InvalidInputError, StateConflictError } from '../../errors.js';
import { RESERVED_KEYS } from '../input.js';
import type { JsonObject, JsonPatchOp } from '../types.js';

let jsonPatchLib: typeof FastJsonPatch | undefined;
/** fast-json-patch, loaded on first use (only patches and diffs need it). */
export function jsonPatch(): typeof FastJsonPatch {
  jsonPatchLib ??= createRequire(import.meta.url)('fast-json-patch') as typeof FastJsonPatch;
  return jsonPatchLib;
}

/**
 * Refuses an operation whose `path` or `from` goes through a name a JavaScript object inherits but the JSON
 * document does not hold (`/toString`, `/valueOf`): RFC 6902 resolves pointers in the document only, and
 * fast-json-patch would read the inherited function and put it into the body. The last segment of an
 * `add`, `move` or `copy` path is a new member, so any name may be added there; a `test` of a name the
 * document lacks fails as a test (STATE_CONFLICT), as for any absent member.
 */
function inheritedMember(doc: unknown, op: FastJsonPatch.Operation, index: number): void {
  // Not an operation at all: fast-json-patch's own check refuses it.
  if (typeof op !== 'object' || op === null) return;
  const check = (field: 'path' | 'from', pointer: unknown, lastMayBeAbsent: boolean) => {
    if (typeof pointer !== 'string' || pointer === '') return;
    const segments = pointer.slice(1).split('/');
    let cur: unknown = doc;
    for (const [k, raw] of segments.entries()) {
      if (typeof cur !== 'object' || cur === null || Array.isArray(cur)) return;
      const seg = raw.replace(/~1/g, '/').replace(/~0/g, '~');
      if (!Object.hasOwn(cur, seg)) {
        if (seg in cur && !(lastMayBeAbsent && k === segments.length - 1)) {
          throw new InvalidInputError(
            `json_patch operation ${index}: ${field} ${JSON.stringify(pointer)} names no member of the document`,
            { field: 'json_patch', pointer: `/${index}/${field}`, operation: 'commit' },
          );
        }
        return;
      }
      cur = (cur as Record<string, unknown>)[seg];
    }
  };
  check('path', op.path, op.op === 'add' || op.op === 'move' || op.op === 'copy' || op.op === 'test');
  if (op.op === 'move' || op.op === 'copy') check('from', op.from, false);
}

/**
 * `base` with the RFC 6902 operations `ops` applied, as a copy: INVALID_INPUT for an operation that is
 * malformed or names a refused key, STATE_CONFLICT for a failed `test` operation.
 */
export function applyJsonPatch(base: JsonObject, ops: unknown): JsonObject {
  if (!Array.isArray(ops))
    throw new InvalidInputError('json_patch must be an array of RFC 6902 operations', {
      field: 'json_patch',
    });
  ops.forEach((op, index) => {
    for (const field of ['path', 'from'] as const) {
      const path = (op as Partial<JsonPatchOp> | null)?.[field];
      if (typeof path !== 'string') continue;
      const seg = path.split('/').find((s) => RESERVED_KEYS.has(s.replace(/~1/g, '/').replace(/~0/g, '~')));
      if (seg !== undefined) {
        throw new InvalidInputError(
          `json_patch operation ${index}: ${field} ${JSON.stringify(path)} names the key ${JSON.stringify(seg)}, which is refused`,
          { field: 'json_patch', pointer: `/${index}/${field}`, operation: 'commit' },
        );
      }
    }
  });
  // One operation at a time, each checked against the document as the operations before it left it.
  let out: unknown = structuredClone(base);
  for (const [index, op] of (ops as FastJsonPatch.Operation[]).entries()) {
    inheritedMember(out, op, index);
    try {
      out = jsonPatch().applyOperation(out, op, true, true, true, index).newDocument;
    } catch (err) {
      const e = err as { message: string; name: string };
      if (e.name === 'TEST_OPERATION_FAILED') {
        throw new StateConflictError(
          `json_patch test operation ${index} failed: the document differs from what you expected`,
          { field: 'json_patch' },
        );
      }
      if (!(err instanceof jsonPatch().JsonPatchError)) throw err;
      throw new InvalidInputError(`json_patch operation ${index} is invalid: ${e.message.split('\n')[0]}`, {
        field: 'json_patch',
      });
    }
  }
  if (typeof out !== 'object' || out === null || Array.isArray(out)) {
    throw new InvalidInputError('json_patch must leave a JSON object', { field: 'json_patch' });
  }
  return out as JsonObject;
}
