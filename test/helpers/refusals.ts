// The error a call was refused with, for assertions on its code, message and details; the assertion fails
// when the call succeeds instead.

/** A refusal as tests read it: an Error with the store's code and details (and whatever else it carries). */
export type Refusal = Error & { code?: string; details?: Record<string, unknown> } & Record<string, unknown>;

/** The rejection of `p`; throws when `p` resolves. */
export async function rejection(p: Promise<unknown>): Promise<Refusal> {
  try {
    await p;
  } catch (err) {
    return err as Refusal;
  }
  throw new Error('expected a rejection, but the call succeeded');
}

/** What `f` throws; throws when `f` returns. */
export function refusal(f: () => unknown): Refusal {
  try {
    f();
  } catch (err) {
    return err as Refusal;
  }
  throw new Error('expected a refusal, but the call succeeded');
}
