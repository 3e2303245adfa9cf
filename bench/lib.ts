// Shared helpers for the benchmarks: loading the built library, temp folders, timing and statistics.
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type * as Lib from '../src/index.js';

/** The library's public API (types from src/, code from the compiled dist/). */
export type AgentLib = typeof Lib;
export type Instance = Lib.Instance;
export type Durability = Lib.Durability;

export const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));
export const TMP_ROOT = join(REPO_ROOT, 'bench', '.tmp');

let lib: AgentLib | undefined;

/** Loads the built library from dist/ (what users run), typed by src/index.ts. */
export async function loadLib(): Promise<AgentLib> {
  if (!lib) {
    const url = new URL('../dist/index.js', import.meta.url).href;
    lib = (await import(url)) as AgentLib;
  }
  return lib;
}

let seq = 0;

/** A fresh, empty folder under bench/.tmp/ (removed by `cleanTmp`). */
export function freshDir(label: string): string {
  seq += 1;
  const dir = join(TMP_ROOT, `${process.pid}-${seq}-${label}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  return dir;
}

export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

export function cleanTmp(): void {
  rmSync(TMP_ROOT, { recursive: true, force: true });
}

export function nowMs(): number {
  return performance.now();
}

export function median(xs: number[]): number {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

export function min(xs: number[]): number {
  return xs.length === 0 ? Number.NaN : Math.min(...xs);
}

export function max(xs: number[]): number {
  return xs.length === 0 ? Number.NaN : Math.max(...xs);
}

/** Thousands separators, no decimals for large values, a few for small ones. */
export function fmt(x: number, digits?: number): string {
  if (!Number.isFinite(x)) return String(x);
  const d = digits ?? (Math.abs(x) >= 100 ? 0 : Math.abs(x) >= 10 ? 1 : 2);
  return x.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d });
}

/** A plain-text table with right-aligned numeric-looking columns. */
export function textTable(headers: string[], rows: string[][]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const numeric = headers.map((_, i) =>
    rows.every((r) => /^[-+]?[\d,.]+( ?[a-zµ%/×x]+)?$/i.test(r[i] ?? '')),
  );
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (numeric[i] ? c.padStart(widths[i]!) : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(headers), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

/** Lets pending I/O and timers run between measurements. */
export function settle(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 20));
}

export function log(msg: string): void {
  process.stderr.write(`${msg}\n`);
}
