// The addition workflow, as in @workflow/world-testing: one step adding two numbers.
async function add(a: number, b: number): Promise<number> {
  'use step';
  return a + b;
}

export async function addition(a: number, b: number): Promise<number> {
  'use workflow';
  return await add(a, b);
}
