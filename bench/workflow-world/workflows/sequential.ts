// Ten steps one after another, each adding one to what the previous returned.
async function increment(n: number): Promise<number> {
  'use step';
  return n + 1;
}

export async function tenSteps(start: number): Promise<number> {
  'use workflow';
  let n = start;
  for (let i = 0; i < 10; i++) n = await increment(n);
  return n;
}
