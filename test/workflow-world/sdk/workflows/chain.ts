// The workflow of the crash and two-process tests: `count` steps in a row, each appending one line
// (`<tag> <i> <pid>`) to EFFECTS_FILE, the side effect the tests count the way the outside world would see it.
// A process started with KILL_AT_STEP=<i> SIGKILLs itself when step i begins, before its side effect: the
// steps before it have completed and been recorded, the steps after it never began.
import { appendFileSync } from 'node:fs';

async function effect(tag: string, i: number, sum: number): Promise<number> {
  'use step';
  if (process.env.KILL_AT_STEP === String(i)) process.kill(process.pid, 'SIGKILL');
  appendFileSync(process.env.EFFECTS_FILE as string, `${tag} ${i} ${process.pid}\n`);
  return sum + i;
}

/** Runs `count` steps one after another and returns the sum of 0 … count-1. */
export async function chain(tag: string, count: number): Promise<number> {
  'use workflow';
  let sum = 0;
  for (let i = 0; i < count; i++) sum = await effect(tag, i, sum);
  return sum;
}
