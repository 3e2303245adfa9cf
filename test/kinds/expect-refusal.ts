// Asserts a typed refusal: code, and the pointer and rule named in its details.
import { expect } from 'vitest';
import type { ErrorCode } from '../../src/errors.js';
import { refusal } from './ctx.js';

export async function expectRefused(
  fn: () => unknown,
  code: ErrorCode,
  /** undefined: the refusal names no pointer. */
  pointer: string | undefined,
  rule: string,
): Promise<Record<string, unknown>> {
  const err = await refusal(fn);
  expect({
    code: err.code,
    pointer: err.details?.pointer,
    rule: err.details?.rule,
    message: err.message,
  }).toMatchObject({
    code,
    pointer,
    rule,
  });
  return err.details;
}
