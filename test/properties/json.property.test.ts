// Property tests for the JSON helpers every commit runs: the canonical text (content hashes of stored
// versions depend on it, so it must not change), the private copy a store remembers, and the input
// size check that skips serializing plain data well under the limit.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkInput, LIMITS } from '../../src/core/input.js';
import { canonicalJson, cloneJson } from '../../src/core/json.js';

/** The canonical text as first defined; canonicalJson must keep producing exactly this. */
function referenceCanonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(referenceCanonical).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const o = value as Record<string, unknown>;
    return `{${Object.keys(o)
      .filter((k) => o[k] !== undefined)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${referenceCanonical(o[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

// Strings with quotes, backslashes, control characters, lone and paired surrogates, U+2028.
const text = fc.oneof(
  fc.string(),
  fc.string({ unit: 'binary' }),
  fc.constantFrom('', '"', '\\', '\n', '\u0000', '\u001f', '\u007f', '\u2028', '\ud800', '\udc00x', '😀'),
);
const anyJson = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    text,
    fc.double(),
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
    fc.constant(undefined),
    fc.constant(-0),
    fc.array(tie('value'), { maxLength: 5 }),
    fc.dictionary(text, tie('value'), { maxKeys: 6 }),
  ),
})).value;

describe('canonicalJson', () => {
  it('produces the reference canonical text for any value', () => {
    fc.assert(
      fc.property(anyJson, (v) => {
        expect(canonicalJson(v)).toBe(referenceCanonical(v));
      }),
      { numRuns: 2000 },
    );
  });

  it('keeps the reference output for values that are not plain JSON', () => {
    // biome-ignore lint/suspicious/noSparseArray: a hole is one of the cases
    const holey = [1, , 3];
    for (const v of [
      holey,
      [() => 1, 2],
      { f: () => 1, a: 1 },
      { d: new Date(0) },
      new Date(0),
      [undefined],
      { '10': 1, '9': 2, b: 3, B: 4, __proto__: null },
      Number.NaN,
      1e21,
      -0,
    ]) {
      expect(canonicalJson(v)).toBe(referenceCanonical(v));
    }
  });
});

describe('cloneJson', () => {
  it('equals the value read back from its JSON text, and shares nothing with it', () => {
    fc.assert(
      fc.property(fc.dictionary(text, anyJson, { maxKeys: 6 }), (v) => {
        const copy = cloneJson(v);
        const back = JSON.parse(JSON.stringify(v));
        expect(copy).toStrictEqual(back);
        expect(Object.keys(copy)).toEqual(Object.keys(back));
        expect(JSON.stringify(copy)).toBe(JSON.stringify(v));
        for (const k of Object.keys(v)) {
          if (typeof v[k] === 'object' && v[k] !== null) expect(copy[k]).not.toBe(v[k]);
        }
      }),
      { numRuns: 1000 },
    );
  });

  it('goes through the JSON text for dates, toJSON, -0 and a __proto__ key', () => {
    const odd = JSON.parse('{"__proto__": {"x": 1}, "a": 1}') as Record<string, unknown>;
    for (const v of [
      { d: new Date(0) },
      { t: { toJSON: () => 'T' } },
      { z: -0, u: undefined, n: Number.NaN, arr: [undefined, 1] },
      odd,
    ]) {
      expect(cloneJson(v)).toStrictEqual(JSON.parse(JSON.stringify(v)));
    }
    expect(Object.keys(cloneJson(odd))).toEqual(['__proto__', 'a']);
  });
});

describe('checkInput on JSON fields', () => {
  const spec = { v: { type: 'object' }, j: { type: 'json' } } as const;
  const codeOf = (input: unknown): string | null => {
    try {
      checkInput('t', input, spec);
      return null;
    } catch (err) {
      return (err as Error).message;
    }
  };

  it('refuses exactly what serializing would refuse', () => {
    const big = 'x'.repeat(LIMITS.jsonBytes);
    expect(codeOf({ v: { a: big } })).toMatch(/larger than/);
    expect(codeOf({ v: { a: 'x'.repeat(LIMITS.jsonBytes - 20) } })).toBeNull();
    // Multi-byte text: characters under the limit, bytes over it.
    expect(codeOf({ v: { a: 'é'.repeat(LIMITS.jsonBytes / 2 + 10) } })).toMatch(/larger than/);
    expect(codeOf({ v: { n: 10n } })).toMatch(/bigint/);
    expect(codeOf({ v: { t: { toJSON: () => big } } })).toMatch(/larger than/);
    expect(codeOf({ v: { toJSON: () => big } })).toMatch(/larger than/);
    const arr = Object.assign([1], { toJSON: () => big });
    expect(codeOf({ v: { arr } })).toMatch(/larger than/);
    expect(codeOf({ j: () => 1 })).toMatch(/not a JSON value/);
    expect(codeOf({ v: { s: 'a\u0000b' } })).toMatch(/NUL/);
    expect(codeOf({ v: { '\ud800': 1 } })).toMatch(/key/);
    expect(codeOf({ v: { d: new Date(0), ok: [1, 'two', null, true] } })).toBeNull();
  });
});
